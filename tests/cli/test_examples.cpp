// Every example program under models/kernels/examples states what it must produce in its first lines:
//   # expect: exit=N [line=L] [text="..."]...
// The test runs it through the CLI and checks the exit code, that the report points at FILE:L, and
// that each text appears in the output.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support.hpp"

using namespace smpipe;

namespace {

struct Expect {
  int exit = 0;
  int line = 0;
  std::vector<std::string> texts;
};

Expect read_expect(const std::string& path) {
  std::ifstream in(path);
  std::string l;
  Expect e;
  bool found = false;
  for (int i = 0; i < 3 && std::getline(in, l); ++i) {
    if (l.rfind("# expect:", 0) != 0) continue;
    found = true;
    std::smatch m;
    if (std::regex_search(l, m, std::regex("exit=(\\d)"))) e.exit = std::stoi(m[1]);
    if (std::regex_search(l, m, std::regex("line=(\\d+)"))) e.line = std::stoi(m[1]);
    std::regex text_re("text=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(l.begin(), l.end(), text_re); it != std::sregex_iterator(); ++it)
      e.texts.push_back((*it)[1]);
  }
  REQUIRE(found);
  return e;
}

// The programs of the examples and of the catalogue of public bugs (models/kernels/catalogue).
std::vector<std::string> bug_programs() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& dir : {test::examples_dir(), models::kernels_dir() + "/catalogue"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".pipe") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every example and catalogue program produces the outcome it declares", "[examples]") {
  namespace fs = std::filesystem;
  std::vector<std::string> files = bug_programs();
  REQUIRE(files.size() >= 40);
  for (const auto& f : files) {
    DYNAMIC_SECTION(fs::path(f).filename().string()) {
      Expect e = read_expect(f);
      auto r = test::run_cli({"run", f, "--max-cycles", "2000000"});
      INFO(r.out << r.err);
      CHECK(r.code == e.exit);
      std::string all = r.out + r.err;  // bad input (exit 1) is reported on stderr
      if (e.line > 0) CHECK(all.find(fmt::format("{}:{}:", f, e.line)) != std::string::npos);
      for (const auto& t : e.texts) CHECK(all.find(t) != std::string::npos);
    }
  }
}

TEST_CASE("the examples that finish use every op of the language", "[examples]") {
  namespace fs = std::filesystem;
  std::set<isa::OpKind> used;
  for (const auto& e : fs::directory_iterator(test::examples_dir())) {
    if (e.path().extension() != ".pipe" || read_expect(e.path().string()).exit != 0) continue;
    isa::Program p = isa::compile(isa::parse(isa::load_source(e.path().string())), {});
    for (const auto& r : p.roles)
      for (const auto& op : r.ops) used.insert(op.kind);
  }
  for (const auto& spec : isa::all_ops()) {
    INFO(spec.name);
    CHECK(used.count(spec.kind) == 1);
  }
}

// A bug example may name its fixed twin: `# twin: -D NAME=VALUE ...` on its second line. The twin must
// finish, and no schedule of `check --seeds` may flag it (a fixed program is never reported).
TEST_CASE("the fixed twin of every bug example and catalogue program is clean under run and check", "[examples][hazards]") {
  namespace fs = std::filesystem;
  int twins = 0;
  for (const std::string& file : bug_programs()) {
    fs::path path(file);
    std::ifstream in(path);
    std::string l;
    std::vector<std::string> args;
    for (int i = 0; i < 3 && std::getline(in, l); ++i)
      if (l.rfind("# twin:", 0) == 0) {
        std::istringstream words(l.substr(7));
        for (std::string w; words >> w;) args.push_back(w);
      }
    if (args.empty()) continue;
    ++twins;
    std::string f = file;
    DYNAMIC_SECTION(path.parent_path().filename().string() + "/" + path.filename().string()) {
      Expect e = read_expect(f);
      CHECK((e.exit != 0 || !e.texts.empty()));  // the bug side is reported (the examples test checks how)
      std::vector<std::string> run = {"run", f};
      run.insert(run.end(), args.begin(), args.end());
      auto r = test::run_cli(run);
      INFO(r.out << r.err);
      CHECK(r.code == 0);
      CHECK(r.out.find("warning:") == std::string::npos);
      std::vector<std::string> check = {"check", f, "--seeds", "30"};
      check.insert(check.end(), args.begin(), args.end());
      auto c = test::run_cli(check);
      INFO(c.out << c.err);
      CHECK(c.code == 0);
      CHECK(c.out.find("30 finished, 0 failed") != std::string::npos);
      CHECK(c.out.find("with warnings") == std::string::npos);
    }
  }
  CHECK(twins >= 20);
}
