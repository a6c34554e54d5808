// `import "file.pipe"` and file-level procs: what an imported file may hold, where it is looked up, the
// errors at the import, and that a program using them runs as the same program written out.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "support.hpp"

using namespace smpipe;
namespace fs = std::filesystem;

namespace {

// A fresh folder with the given files (name -> text), removed at the end of the test.
struct Folder {
  fs::path dir;
  explicit Folder(const std::map<std::string, std::string>& files) {
    dir = fs::temp_directory_path() / fmt::format("smpipe_import_{}_{}", ::getpid(), counter()++);
    fs::remove_all(dir);
    for (const auto& [name, text] : files) {
      fs::create_directories((dir / name).parent_path());
      std::ofstream(dir / name) << text;
    }
  }
  ~Folder() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

const char* kLib = R"(# shared by the kernels of a family
param STAGES = 4
const BYTES = 16K
assert STAGES >= 2, "STAGES must be at least 2"
proc produce(k) {
  let s = k % STAGES
  wait empty[s] parity=((k / STAGES) & 1) ^ 1
  elect {
    arrive.expect_tx full[s] tx=BYTES
    tma.load A box=(64, 128) at=(0, k * 128) dst=sA[s] bar=full[s]
  }
}
)";

const char* kBody = R"(kernel k warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sA[STAGES] bytes=BYTES
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 producer { for k in 0..16 { produce(k) } }
  warpgroup 1 consumer {
    for k in 0..16 {
      wait full[k % STAGES] parity=(k / STAGES) & 1
      compute cycles=200
      arrive empty[k % STAGES]
    }
  }
}
)";

}  // namespace

TEST_CASE("import: params, consts, asserts and procs of another file, as if written in place", "[isa][import]") {
  Folder f({{"lib/pipeline.pipe", kLib}, {"main.pipe", std::string("import \"lib/pipeline.pipe\"\n") + kBody},
            {"inline.pipe", std::string(kLib) + kBody}});
  auto imported = test::run_cli({"run", f / "main.pipe"});
  auto inlined = test::run_cli({"run", f / "inline.pipe"});
  INFO(imported.out << imported.err);
  REQUIRE(imported.code == 0);
  // The same program: the same summary but for the file name.
  auto strip = [](std::string s) { return s.substr(s.find('\n')); };
  CHECK(strip(imported.out) == strip(inlined.out));
  // An imported param is a param of the program: -D sets it, and its assert holds.
  CHECK(test::run_cli({"run", f / "main.pipe", "-D", "STAGES=2"}).code == 0);
  auto bad = test::run_cli({"run", f / "main.pipe", "-D", "STAGES=1"});
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, Catch::Contains("lib/pipeline.pipe:4:1: error: assertion failed: STAGES must be at least 2"));
}

TEST_CASE("import: a file imported twice is read once, errors point into the imported file", "[isa][import]") {
  Folder f({{"a.pipe", "import \"c.pipe\"\nconst A = C + 1\n"},
            {"b.pipe", "import \"c.pipe\"\nconst B = C + 2\n"},
            {"c.pipe", "const C = 10\n"},
            {"main.pipe", "import \"a.pipe\"\nimport \"b.pipe\"\nreport sum = A + B\nkernel k { warp 0 w { compute cycles=1 } }\n"},
            {"broken.pipe", "const X = 1\nproc p() { compute cycles= }\n"},
            {"uses_broken.pipe", "import \"broken.pipe\"\nkernel k { warp 0 w { p() } }\n"}});
  auto r = test::run_cli({"run", f / "main.pipe"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("sum 23"));  // C is defined once (a second definition would be an error)
  auto e = test::run_cli({"run", f / "uses_broken.pipe"});
  CHECK(e.code == 1);
  CHECK_THAT(e.err, Catch::Contains("broken.pipe:2:28: error"));
}

TEST_CASE("import: only files inside the importer's folder, no cycles, kernels, machines or reports in them", "[isa][import]") {
  Folder f({{"sub/main.pipe", "import \"../outside.pipe\"\nkernel k { }\n"},
            {"outside.pipe", "const X = 1\n"},
            {"abs.pipe", "import \"/etc/passwd.pipe\"\nkernel k { }\n"},
            {"notpipe.pipe", "import \"x.json\"\nkernel k { }\n"},
            {"missing.pipe", "import \"nothere.pipe\"\nkernel k { }\n"},
            {"cycle_a.pipe", "import \"cycle_b.pipe\"\nconst A = 1\n"},
            {"cycle_b.pipe", "import \"cycle_a.pipe\"\nconst B = 1\n"},
            {"cyclic.pipe", "import \"cycle_a.pipe\"\nkernel k { }\n"},
            {"haskernel.pipe", "kernel other { }\n"},
            {"importskernel.pipe", "import \"haskernel.pipe\"\nkernel k { }\n"},
            {"hasgpu.pipe", "gpu h200\n"},
            {"importsgpu.pipe", "import \"hasgpu.pipe\"\nkernel k { }\n"},
            {"self.pipe", "import \"self.pipe\"\nkernel k { }\n"}});
  auto err = [&](const std::string& file) {
    auto r = test::run_cli({"run", f / file});
    CHECK(r.code == 1);
    return r.err;
  };
  CHECK_THAT(err("sub/main.pipe"), Catch::Contains("main.pipe:1:1: error: import \"../outside.pipe\": name a .pipe file by a path relative"));
  CHECK_THAT(err("abs.pipe"), Catch::Contains("no absolute path"));
  CHECK_THAT(err("notpipe.pipe"), Catch::Contains("not a .pipe file"));
  CHECK_THAT(err("missing.pipe"), Catch::Contains("missing.pipe:1:1: error: cannot read imported file"));
  CHECK_THAT(err("cyclic.pipe"), Catch::Contains("an import cycle"));
  CHECK_THAT(err("self.pipe"), Catch::Contains("an import cycle"));
  CHECK_THAT(err("importskernel.pipe"), Catch::Contains("haskernel.pipe:1:1: error: an imported file holds no kernels"));
  CHECK_THAT(err("importsgpu.pipe"), Catch::Contains("an imported file names no machine"));
}

TEST_CASE("file-level procs: every kernel sees them, a kernel's own proc of the same name is an error", "[isa][import]") {
  std::string text = "proc busy(n) { for i in 0..n { compute cycles=1 } }\n"
                     "kernel a { warp 0 w { busy(3) } }\nkernel b { warp 0 w { busy(5) } }\n";
  CHECK_THAT(test::compile_error("proc p() { compute cycles=1 }\nkernel k {\n proc p() { sleep cycles=1 }\n warp 0 w { p() }\n}\n"),
             Catch::Contains("proc 'p' is defined twice"));
  Folder f({{"two.pipe", text}});
  CHECK(test::run_cli({"run", f / "two.pipe", "--kernel", "a"}).code == 0);
  auto b = test::run_cli({"run", f / "two.pipe", "--kernel", "b", "--json"});
  CHECK(nlohmann::json::parse(b.out)["ops"] == 5);
}

TEST_CASE("import: a run-time error inside an imported proc points into the imported file", "[isa][import]") {
  Folder f({{"lib.pipe", "# a proc that divides\n\nproc split(n, d) -> q {\n  let q = n / d\n}\n"},
            {"main.pipe", "import \"lib.pipe\"\nkernel k { warp 0 w { let z = warp\n split(7, z) -> q\n compute cycles=q } }\n"}});
  auto r = test::run_cli({"run", f / "main.pipe"});
  CHECK(r.code == 3);
  // at the operator's column, with the statement as the op
  CHECK_THAT(r.out, Catch::Contains("lib.pipe:4:13: undefined behaviour: division by zero") && Catch::Contains("op `let q = n / d`"));
  CHECK_THAT(r.out, !Catch::Contains("main.pipe:4:"));
}

TEST_CASE("import: a symbolic link cannot lead out of the folder, an in-memory program imports nothing", "[isa][import]") {
  Folder f({{"secret.txt", "TOPSECRET\n"}, {"sub/main.pipe", "import \"evil.pipe\"\nkernel k { }\n"},
            {"sub/main2.pipe", "import \"up/secret.pipe\"\nkernel k { }\n"}, {"sub/ok_target.pipe", "const X = 1\n"},
            {"sub/main3.pipe", "import \"alias.pipe\"\nreport x = X\nkernel k { warp 0 w { compute cycles=1 } }\n"}});
  fs::create_symlink(fs::path(f / "secret.txt"), fs::path(f / "sub/evil.pipe"));
  fs::create_directory_symlink(fs::path(f.dir), fs::path(f / "sub/up"));
  fs::rename(fs::path(f / "secret.txt"), fs::path(f / "secret.pipe"));
  fs::create_symlink(fs::path(f / "secret.pipe"), fs::path(f / "secret.txt"));
  fs::create_symlink("ok_target.pipe", fs::path(f / "sub/alias.pipe"));  // a link that stays inside is fine
  auto out1 = test::run_cli({"run", f / "sub/main.pipe"});
  CHECK(out1.code == 1);
  CHECK_THAT(out1.err, Catch::Contains("leads out of the importing file's folder"));
  CHECK_THAT(out1.err, !Catch::Contains("TOPSECRET"));
  auto out2 = test::run_cli({"run", f / "sub/main2.pipe"});
  CHECK(out2.code == 1);
  CHECK_THAT(out2.err, Catch::Contains("leads out of the importing file's folder"));
  auto ok = test::run_cli({"run", f / "sub/main3.pipe"});
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("x 1"));
  CHECK_THAT(test::compile_error("import \"lib.pipe\"\nkernel k { }\n"), Catch::Contains("not a file on disk"));
}
