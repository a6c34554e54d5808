// Hostile command lines and files: only regular files are read, bounded in size; options are range-checked;
// output files are claimed before the run and written all or nothing; messages print bytes safely.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "isa/source.hpp"
#include "sim/trace_writer.hpp"
#include "support.hpp"

using namespace smpipe;
using test::run_cli;

namespace {

namespace fs = std::filesystem;

// A scratch directory of its own for each test, removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    char tmpl[] = "/tmp/smpipe-hostile-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

const char* kTiny = "kernel k warps=1 {\n warp 0 w { compute cycles=10 }\n}\n";

}  // namespace

TEST_CASE("inputs: only regular files, never blocking, at most the size limit", "[cli][hostile]") {
  Scratch s;
  std::string fifo = s.path("fifo.pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto r = run_cli({"run", fifo});  // a FIFO without a writer would block an open(); it is refused first
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("not a regular file"));
  r = run_cli({"run", "/dev/zero"});
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("not a regular file"));
  r = run_cli({"run", s.dir.string()});
  CHECK(r.code == cli::kBadInput);
  std::string fifo_json = s.path("m.json");
  REQUIRE(::mkfifo(fifo_json.c_str(), 0600) == 0);
  r = run_cli({"run", s.write("t.pipe", kTiny), "--gpu", fifo_json});
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("machine file"));
  r = run_cli({"replay", fifo_json});
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("not a regular file"));
  // a program of exactly the limit is read (and rejected by the parser for what it holds); one byte more is not
  std::string at_limit(isa::kMaxSourceBytes, '#');
  r = run_cli({"run", s.write("big.pipe", at_limit)});
  CHECK_THAT(r.err, !Catch::Contains("larger than"));
  r = run_cli({"run", s.write("bigger.pipe", at_limit + "#")});
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("larger than 4 MB"));
}

TEST_CASE("options: seed, clock, cycle and work limits are range-checked", "[cli][hostile]") {
  Scratch s;
  std::string f = s.write("t.pipe", kTiny);
  CHECK(run_cli({"run", f, "--seed", "18446744073709551615"}).code == cli::kOk);
  for (const char* seed : {"-1", "18446744073709551616", "1e3", ""}) {
    INFO(seed);
    CHECK(run_cli({"run", f, "--seed", seed}).code == cli::kBadInput);
  }
  for (const char* clock : {"nan", "inf", "-5", "0"}) {
    INFO(clock);
    CHECK(run_cli({"run", f, "--clock-mhz", clock}).code == cli::kBadInput);
  }
  CHECK(run_cli({"run", f, "--max-cycles", "4611686018427387904"}).code == cli::kOk);
  CHECK(run_cli({"run", f, "--max-cycles", "4611686018427387905"}).code == cli::kBadInput);
  CHECK(run_cli({"run", f, "--max-ops", "1"}).code == cli::kOk);
  CHECK(run_cli({"run", f, "--max-ops", "0"}).code == cli::kBadInput);
  // A count or clock that must be positive says so (CLI11's own check named a range up to the largest double, 0 in it).
  auto clock0 = run_cli({"run", f, "--clock-mhz", "0"});
  CHECK(clock0.code == cli::kBadInput);
  CHECK_THAT(clock0.err, Catch::Contains("must be more than 0 (given 0)") && !Catch::Contains("range"));
  for (auto args : {std::vector<std::string>{"check", f, "--seeds", "0"}, {"check", f, "--jobs", "0"}}) {
    auto r = run_cli(args);
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains("must be an integer from 1 to") && Catch::Contains("(given 0)") && !Catch::Contains("range"));
  }
  CHECK(run_cli({"check", f, "--seeds", "1"}).code == cli::kOk);
  // An integer option given a fraction says it is not an integer (CLI11's range check read 1.5 as in range 0 to 100
  // and said it was not); both ends of the range are taken.
  for (auto args : {std::vector<std::string>{"run", f, "--jitter", "1.5"}, {"check", f, "--jobs", "1.5"}, {"run", f, "--max-ops", "2.0"},
                    {"check", f, "--seeds", "1e3"}}) {
    INFO(args[2] + " " + args[3]);
    auto r = run_cli(args);
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains("given '" + args[3] + "': not an integer"));
  }
  CHECK(run_cli({"run", f, "--jitter", "0"}).code == cli::kOk);
  for (const char* ok : {"+5", " 5", "5 "}) CHECK(run_cli({"run", f, "--jitter", ok}).code == cli::kOk);
  CHECK(run_cli({"run", f, "--jitter", "100"}).code == cli::kOk);
  auto j101 = run_cli({"run", f, "--jitter", "101"});
  CHECK(j101.code == cli::kBadInput);
  CHECK_THAT(j101.err, Catch::Contains("--jitter: must be an integer from 0 to 100 (given 101)"));
  CHECK(run_cli({"check", f, "--seeds", "1", "--jobs", "4096"}).code == cli::kOk);
  CHECK(run_cli({"check", f, "--seeds", "1", "--jobs", "4097"}).code == cli::kBadInput);
  // --trace-ctas and --trace-window shape outputs: without them they are refused, not ignored.
  auto ctas = run_cli({"run", f, "--trace-ctas", "2"});
  CHECK(ctas.code == cli::kBadInput);
  CHECK_THAT(ctas.err, Catch::Contains("--trace-ctas chooses the CTAs of the trace: give --trace FILE too"));
  CHECK(run_cli({"run", f, "--trace-ctas", "2", "--trace", s.path("t.json")}).code == cli::kOk);
  auto window = run_cli({"run", f, "--trace-window", "0:100"});
  CHECK(window.code == cli::kBadInput);
  CHECK_THAT(window.err, Catch::Contains("--trace-window chooses the cycles") && Catch::Contains("--trace FILE or --html FILE"));
  CHECK(run_cli({"run", f, "--trace-window", "0:100", "--html", s.path("t.html")}).code == cli::kOk);
  // A first word that is no command is named as such.
  auto unknown = run_cli({"frobnicate", f});
  CHECK(unknown.code == cli::kBadInput);
  CHECK_THAT(unknown.err, Catch::Contains("unknown command 'frobnicate'") && Catch::Contains("run, check"));
  // No word at all: the usage and the commands, as --help gives them, on stderr (exit 1).
  auto bare = run_cli({});
  CHECK(bare.code == cli::kBadInput);
  CHECK_THAT(bare.err, Catch::Contains("Subcommands:") && Catch::Contains("sweep") && !Catch::Contains("A subcommand is required"));
  CHECK(bare.out.empty());
  // One param given two values is an input error; the same value twice is not.
  std::string p = s.write("p.pipe", std::string("param N = 1\n") + kTiny);
  auto twice = run_cli({"run", p, "-D", "N=3", "-D", "N=5"});
  CHECK(twice.code == cli::kBadInput);
  CHECK_THAT(twice.err, Catch::Contains("-D N is given twice (3 and 5)"));
  CHECK(run_cli({"run", p, "-D", "N=3", "-D", "N=3"}).code == cli::kOk);
}

TEST_CASE("output files: claimed before the run, written all or nothing, write errors are exit 5", "[cli][hostile]") {
  Scratch s;
  std::string f = s.write("t.pipe", kTiny);
  // a missing directory: bad input before anything is simulated (no summary printed)
  auto r = run_cli({"run", f, "--trace", s.path("no/such/dir/t.json")});
  CHECK(r.code == cli::kBadInput);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("cannot write trace file"));
  // a full device: the run happened (its summary printed), the write failed: exit 5
  r = run_cli({"run", f, "--trace", "/dev/full"});
  CHECK(r.code == cli::kOutputError);
  CHECK_THAT(r.out, Catch::Contains("finished"));
  CHECK_THAT(r.err, Catch::Contains("No space left on device"));
  // a device that takes the bytes
  CHECK(run_cli({"run", f, "--trace", "/dev/null"}).code == cli::kOk);
  // success: the file and no temporary beside it
  r = run_cli({"run", f, "--trace", s.path("t.json")});
  CHECK(r.code == cli::kOk);
  int files = 0;
  for (const auto& e : fs::directory_iterator(s.dir)) files += e.path().filename().string().rfind("t.json", 0) == 0 ? 1 : 0;
  CHECK(files == 1);
  // an existing file is replaced whole
  CHECK(fs::file_size(s.path("t.json")) > 0);
  // a FIFO without a reader fails at once instead of blocking
  std::string fifo = s.path("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  r = run_cli({"run", f, "--trace", fifo});
  CHECK(r.code == cli::kBadInput);
  // sweep outputs alike
  r = run_cli({"sweep", f, "-D", "X=1,2", "--csv", s.path("none/x.csv")});
  CHECK(r.code == cli::kBadInput);
  CHECK(r.out.empty());
}

TEST_CASE("a trace that replay rejects leaves no --emit-pipe file behind", "[cli][hostile]") {
  Scratch s;
  std::string bad = s.write("bad.json", "{\"format\": \"smpipe-hwtrace\", \"version\": 1}");
  auto r = run_cli({"replay", bad, "--emit-pipe", s.path("out.pipe")});
  CHECK(r.code == cli::kBadInput);
  CHECK_FALSE(fs::exists(s.path("out.pipe")));
  int left = 0;
  for (const auto& e : fs::directory_iterator(s.dir)) left += e.path().filename().string().rfind("out.pipe", 0) == 0 ? 1 : 0;
  CHECK(left == 0);
}

TEST_CASE("messages print control and non-UTF-8 bytes escaped, and go past a NUL", "[cli][hostile]") {
  CHECK(isa::printable("abc") == "abc");
  CHECK(isa::printable("a\nb") == "a\\x0ab");
  CHECK(isa::printable("a\nb", true) == "a\nb");
  CHECK(isa::printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(isa::printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(isa::printable("caf\xc3\xa9") == "caf\xc3\xa9");       // valid UTF-8 stays
  CHECK(isa::printable("\xc0\xaf") == "\\xc0\\xaf");           // overlong '/'
  CHECK(isa::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(isa::printable("\xe2\x82") == "\\xe2\\x82");           // cut short
  Scratch s;
  std::string f = s.write("nb.pipe", std::string("gpu \"h100\x01\xff\0x\"\n", 15) + kTiny);
  auto r = run_cli({"run", f});
  CHECK(r.code == cli::kBadInput);
  CHECK(r.err.find('\x01') == std::string::npos);
  CHECK(r.err.find('\xff') == std::string::npos);
  CHECK(r.err.find('\0') == std::string::npos);
  // A byte no token starts with: a NUL is shown in hex, with the source line after it; a whole UTF-8 character as
  // itself with its code point.
  auto nul = run_cli({"run", s.write("nul.pipe", std::string("kernel k warps=1 {\n warp 0 w { compute cy\0cles=1 }\n}\n", 53))});
  CHECK(nul.code == cli::kBadInput);
  CHECK_THAT(nul.err, Catch::Contains("nul.pipe:2:23: error: unexpected byte \\x00\n") && Catch::Contains("compute cy\\x00cles=1"));
  auto utf8 = run_cli({"run", s.write("u.pipe", "const Gr\xc3\xb6\xc3\x9f" "e = 4\n" + std::string(kTiny))});
  CHECK(utf8.code == cli::kBadInput);
  CHECK_THAT(utf8.err, Catch::Contains("u.pipe:1:9: error: unexpected character '\xc3\xb6' (U+00F6): names and operators are ASCII"));
}

TEST_CASE("messages: the caret under a character, a NUL inside a token, a BOM, run-time errors at their operator", "[cli][hostile]") {
  Scratch s;
  // The caret stands under the column as shown: one place per character (the column itself counts bytes).
  auto caret = run_cli({"run", s.write("c.pipe", "assert 1 == 1, \"caf\xc3\xa9\" $\n" + std::string(kTiny))});
  CHECK(caret.code == cli::kBadInput);
  CHECK_THAT(caret.err, Catch::Contains("c.pipe:1:24: error") &&
                            Catch::Contains("\n  assert 1 == 1, \"caf\xc3\xa9\" $\n                        ^"));
  // A NUL inside a token the message quotes: the text goes on past it.
  static const char kNulText[] = "kernel k warps=1 {\n warp 0 w { compute cycles=\"a\0b\" }\n}\n";
  auto nul = run_cli({"run", s.write("n.pipe", std::string(kNulText, sizeof kNulText - 1))});
  CHECK(nul.code == cli::kBadInput);
  CHECK_THAT(nul.err, Catch::Contains("found \"a\\x00b\"") && Catch::Contains("compute cycles=\"a\\x00b\""));
  // A UTF-8 byte-order mark is not part of the program.
  auto bom = run_cli({"run", s.write("b.pipe", "\xef\xbb\xbf" + std::string(kTiny))});
  CHECK(bom.code == cli::kOk);
  auto bom_err = run_cli({"run", s.write("be.pipe", "\xef\xbb\xbfparam X = $\n" + std::string(kTiny))});
  CHECK(bom_err.code == cli::kBadInput);
  CHECK_THAT(bom_err.err, Catch::Contains("be.pipe:1:11: error") && !Catch::Contains("U+FEFF"));
  // A run-time error of an operator: its column, and the statement as the op (JSON too).
  const std::string div = "kernel k warps=1 {\n  warp 0 w {\n    let z = warp - warp\n    let y = 7 / z\n    compute cycles=y\n  }\n}\n";
  auto ub = run_cli({"run", s.write("d.pipe", div), "--json"});
  CHECK(ub.code == cli::kUndefined);
  auto j = nlohmann::json::parse(ub.out);
  CHECK(j["diagnosis"]["line"] == 4);
  CHECK(j["diagnosis"]["column"] == 15);
  CHECK(j["diagnosis"]["op"] == "let y = 7 / z");
  CHECK(j["diagnosis"]["location"] == s.path("d.pipe") + ":4:15");
  // A finite loop of only arithmetic longer than the interpreter's limit is not called an endless loop without the other case.
  auto loop = run_cli({"run", s.write("l.pipe", "kernel k warps=1 {\n  warp 0 w {\n    for i in 0..600000 { let x = i * 2 }\n    compute cycles=1\n  }\n}\n")});
  CHECK(loop.code == cli::kDeadlock);
  CHECK_THAT(loop.out + loop.err, Catch::Contains("an endless loop, or a loop of only arithmetic too long to simulate"));
}

TEST_CASE("sweep and models: a value as typed, an unknown machine refused, a data folder that is not there", "[cli][hostile]") {
  Scratch s;
  std::string p = s.write("p.pipe", std::string("param N = 1\n") + kTiny);
  for (const char* axis : {"N=2,,3", "N=,2", "N=2,"}) {
    INFO(axis);
    auto r = run_cli({"sweep", p, "-D", axis});
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains(std::string("-D ") + axis + ": an empty value"));
  }
  auto x = run_cli({"sweep", p, "-D", "N=2,x"});
  CHECK(x.code == cli::kBadInput);
  CHECK_THAT(x.err, Catch::Contains("-D N=2,x: 'x' is not an integer"));
  CHECK(run_cli({"sweep", p, "-D", "N=2,3"}).code == cli::kOk);
  // A machine that does not load stops the sweep before it runs (it was a row with a blank gpu, exit 0).
  auto gpu = run_cli({"sweep", p, "-D", "N=2,3", "--gpu", "h100-sxm,nosuch"});
  CHECK(gpu.code == cli::kBadInput);
  CHECK_THAT(gpu.err, Catch::Contains("unknown machine 'nosuch'"));
  CHECK(gpu.out.empty());
  CHECK(run_cli({"sweep", p, "-D", "N=2,3", "--gpu", "h100-sxm,h200"}).code == cli::kOk);
  // SMPIPE_MACHINES / SMPIPE_KERNELS pointing nowhere are named (models listed nothing and exited 0).
  for (const char* var : {"SMPIPE_MACHINES", "SMPIPE_KERNELS"}) {
    INFO(var);
    const char* old = std::getenv(var);
    const std::string saved = old ? old : "";
    ::setenv(var, s.path("nowhere").c_str(), 1);
    auto r = run_cli({"models"});
    auto run = run_cli({"run", "examples/mainloop"});
    if (old) ::setenv(var, saved.c_str(), 1); else ::unsetenv(var);
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains(std::string(var) + " is set to '" + s.path("nowhere") + "', which is not a folder"));
    CHECK(run.code == cli::kBadInput);
    CHECK_THAT(run.err, Catch::Contains(std::string(var) + " is set to"));
  }
  CHECK(run_cli({"models"}).code == cli::kOk);
}

TEST_CASE("a program's gpu line names a built-in machine or a machine file beside it, nothing else", "[cli][hostile]") {
  Scratch s;
  // a machine file beside the program, by its bare name: read
  std::ifstream builtin(models::machines_dir() + "/h100-sxm.json", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(builtin)), std::istreambuf_iterator<char>());
  s.write("mine.json", text);
  std::string beside = s.write("beside.pipe", std::string("gpu \"mine.json\"\n") + kTiny);
  auto r = run_cli({"run", beside});
  CHECK(r.code == cli::kOk);
  // a path: refused, at the gpu line, without opening it
  for (const std::string& gpu : {s.path("mine.json"), std::string("../mine.json"), std::string("sub/mine.json"),
                                 std::string("../../etc/passwd"), std::string("/etc/hostname.json")}) {
    INFO(gpu);
    r = run_cli({"run", s.write("p.pipe", "gpu \"" + gpu + "\"\n" + kTiny)});
    CHECK(r.code == cli::kBadInput);
    CHECK_THAT(r.err, Catch::Contains("p.pipe:1:") && Catch::Contains("give it with --gpu instead"));
  }
  // the command line may name any file
  CHECK(run_cli({"run", s.write("q.pipe", kTiny), "--gpu", s.path("mine.json")}).code == cli::kOk);
}

TEST_CASE("a trace keeps at most its byte limit of events and says what it left out", "[cli][hostile][trace]") {
  sim::TraceWriter small(1000.0, 8, 400);
  for (int i = 0; i < 20; ++i) small.slice(0, 0, "op", "op", i * 10, 5);
  CHECK(small.size() > 0);
  CHECK(small.size() < 20);
  CHECK(small.dropped() == 20 - small.size());
  // once cut, a smaller event that would still fit is left out too; why the run stopped is always kept
  std::size_t kept = small.size();
  small.counter(0, "c", 300, 1);
  CHECK(small.size() == kept);
  small.instant("deadlock: why", 300);
  CHECK(small.size() == kept + 1);
  kept = small.size();
  std::ostringstream out;
  small.write(out);
  auto j = nlohmann::json::parse(out.str());  // still valid JSON
  CHECK(j["traceEvents"].size() == kept + 1);
  CHECK_THAT(j["traceEvents"].back()["name"].get<std::string>(), Catch::Contains("later events left out"));
  sim::TraceWriter roomy(1000.0, 8, 1 << 20);
  for (int i = 0; i < 20; ++i) roomy.slice(0, 0, "op", "op", i * 10, 5);
  CHECK(roomy.dropped() == 0);
  CHECK(roomy.size() == 20);
  // a name that is not UTF-8 still gives valid JSON
  roomy.slice(0, 0, std::string("bad\xff name"), "op", 300, 5);
  std::ostringstream out2;
  roomy.write(out2);
  CHECK_NOTHROW(nlohmann::json::parse(out2.str()));
}

TEST_CASE("a streamed trace is the same file as a kept one, keeps CTA 0's first events, and costs no memory", "[cli][trace]") {
  auto fill = [](sim::TraceWriter& w) {
    w.name_process(0, "CTA 0");
    w.name_process(1, "CTA 1");
    for (int i = 0; i < 50; ++i) {
      w.slice(i % 2, 0, "op", "op", i * 10, 5);
      w.flow(0, 0, i * 10, 1, 0, i * 10 + 2, static_cast<std::uint64_t>(i + 1));
    }
    w.instant("stop", 600);
  };
  sim::TraceWriter kept(1000.0, 8);
  fill(kept);
  std::ostringstream whole;
  kept.write(whole);
  std::string streamed;
  sim::TraceWriter stream(1000.0, 8);
  stream.stream_to([&](std::string_view s) { streamed += s; }, 10);
  fill(stream);
  std::ostringstream end;
  stream.write(end);
  CHECK(streamed + end.str() == whole.str());
  CHECK(stream.size() == kept.size());
  CHECK(stream.events().size() == 10);  // CTA 0's first ten, nothing else kept
  for (const auto& e : stream.events()) CHECK(nlohmann::json::parse(e)["pid"] == 0);
  CHECK(stream.cta0_not_kept() > 0);
}

TEST_CASE("a trace window keeps what overlaps it, arrows with both ends in it, and the stop", "[cli][trace]") {
  sim::TraceWriter w(1000.0, 8);
  w.set_window(100, 200);
  w.name_thread(0, 0, "warp 0");
  w.slice(0, 0, "before", "op", 0, 50);         // ends before the window
  w.slice(0, 0, "across", "op", 90, 20);        // overlaps its start
  w.slice(0, 0, "inside", "op", 150, 10);
  w.slice(0, 0, "at the end", "op", 200, 10);   // starts where it ends: out
  w.flow(0, 0, 150, 0, 1, 160, 1);              // both ends in: kept
  w.flow(0, 0, 150, 0, 1, 250, 2);              // one end out: left out
  w.counter(0, "c", 99, 1);
  w.counter(0, "c", 100, 2);
  w.async_slice(0, "tma", "tma", 3, 50, 120);   // overlaps: kept
  w.instant("stop", 500);                       // always
  std::ostringstream out;
  w.write(out);
  auto j = nlohmann::json::parse(out.str());
  std::vector<std::string> names;
  for (const auto& e : j["traceEvents"]) names.push_back(e.value("name", std::string()) + ":" + e.value("ph", std::string()));
  CHECK(names == std::vector<std::string>{"thread_name:M", "thread_sort_index:M", "across:X", "inside:X", "flow:s", "flow:f", "c:C",
                                          "tma:b", "tma:e", "stop:i"});
  auto bad = test::run_cli({"run", "examples/mainloop", "--trace", "/dev/null", "--trace-window", "9:3"});
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, Catch::Contains("--trace-window 9:3: expected FROM:TO"));
}
