// docs/json.md against what `--json` prints: programs that finish (on a machine whose L2 has addresses),
// break a rule, deadlock, are stopped by the watchdog and are rejected, and a check with failures. Every key
// printed must be in the table of its object, and every key of a table must be printed by one of them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "support.hpp"
#include "traces/compare.hpp"

using namespace smpipe;
using nlohmann::json;

namespace {

// The documented keys of each object: "### `PATH`" headings, then a table whose first column is `key`.
std::map<std::string, std::set<std::string>> documented_keys() {
  std::ifstream in(std::string(SMPIPE_TESTS_DIR) + "/../docs/json.md");
  REQUIRE(in.good());
  std::map<std::string, std::set<std::string>> out;
  std::string path;
  std::regex heading("^### `([^`]+)`$"), row("^\\| `([a-z_0-9]+)` \\|");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, heading)) path = m[1];
    else if (!path.empty() && std::regex_search(l, m, row)) out[path].insert(m[1]);
  }
  return out;
}

// Objects whose keys are names from the program (params, reports, ...), not a fixed set.
bool free_keys(const std::string& path) {
  for (const char* p : {".params", ".reports", ".waiting_cycles", ".region_cycles", "compare.roles[].waits", "compare.own_time.cycles"})
    if (path.size() >= std::string(p).size() && path.compare(path.size() - std::string(p).size(), std::string::npos, p) == 0)
      return true;
  return false;
}

// Records every key of `j` under its path ("run", "run.roles[]", ...).
void collect(const json& j, const std::string& path, std::map<std::string, std::set<std::string>>& seen) {
  if (j.is_array()) {
    for (const auto& e : j) collect(e, path + "[]", seen);
    return;
  }
  if (!j.is_object() || free_keys(path)) return;
  for (const auto& [k, v] : j.items()) {
    seen[path].insert(k);
    // first_failure is a run object
    if (k == "first_failure") collect(v, "run", seen);
    else collect(v, path + "." + k, seen);
  }
}

json run_json(std::vector<std::string> args) {
  auto r = test::run_cli(args);
  INFO(r.out << r.err);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("json output: every key printed is documented in docs/json.md, and every documented key is printed", "[cli][json]") {
  std::string ex = test::examples_dir();
  std::map<std::string, std::set<std::string>> seen;
  std::vector<json> outputs = {
      run_json({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=1024", "-D", "N=1024", "-D", "K=1024", "--json"}),
      run_json({"run", ex + "/hazard_wgmma_before_tma.pipe", "--json"}),
      run_json({"run", ex + "/deadlock_tx_mismatch.pipe", "--json"}),
      run_json({"run", ex + "/watchdog_livelock.pipe", "--max-cycles", "20000", "--json"}),
      run_json({"run", ex + "/mainloop.pipe", "-D", "KTILES=4096", "--max-cycles", "20000", "--json"}),
      run_json({"run", ex + "/mainloop.pipe", "-D", "NO_SUCH=1", "--json"}),
      run_json({"run", ex + "/mainloop.pipe", "--clock", "sustained-constant", "--json"}),
      run_json({"run", ex + "/mainloop.pipe", "--l2", "dirty:8MiB", "--json"}),  // l2_dirty_start_bytes
      run_json({"run", ex + "/mainloop.pipe", "--l2", "dirty:A", "--json"}),  // l2_dirty_start_tensors
      // N smaller than the tile: B boxes half outside their tensor (l2_outside_bytes)
      run_json({"run", "sm90/gemm_tma_ws_cooperative", "-D", "M=512", "-D", "N=128", "-D", "K=256", "-D", "TILE_N=256", "--json"}),
  };
  for (const auto& j : outputs) {
    REQUIRE(j.at("schema") == models::kRunSchema);
    collect(j, "run", seen);
  }
  json check = run_json({"check", ex + "/hazard_wgmma_before_tma.pipe", "--seeds", "2", "--json"});
  json bad_check = run_json({"check", ex + "/mainloop.pipe", "-D", "NO_SUCH=1", "--json"});
  REQUIRE(check.at("schema") == cli::kCheckSchema);
  REQUIRE(bad_check.at("schema") == cli::kCheckSchema);
  collect(check, "check", seen);
  collect(bad_check, "check", seen);
  // compare: a committed hardware trace (alone, and with the kernel's own instructions measured in another), a replay
  // that cannot finish, and a bad option.
  std::string trace = std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/k2_trace_2048x2048x2048.json";
  std::string other = std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100/k2_trace_8192x8192x8192.json";
  for (const json& c : {run_json({"compare", trace, "--json"}), run_json({"compare", trace, "--json", "--own-time", other}),
                        run_json({"compare", trace, "--json", "--max-cycles", "1000"}),
                        run_json({"compare", trace, "--json", "--no-such-option"})}) {
    REQUIRE(c.at("schema") == traces::kCompareSchema);
    collect(c, "compare", seen);
  }
  // sweep: its JSON file, with points that finish, fail and are not valid.
  auto sweep_file = std::filesystem::temp_directory_path() / "smpipe_json_sweep.json";
  auto sw = test::run_cli({"sweep", ex + "/deadlock_producer_start_phase.pipe", "-D", "STAGES=2,4,200", "--json", sweep_file.string()});
  REQUIRE(sw.code == 2);
  std::ifstream sin(sweep_file);
  json sweep = json::parse(sin);
  REQUIRE(sweep.at("schema") == cli::kSweepSchema);
  collect(sweep, "sweep", seen);
  auto fin = test::run_cli({"sweep", ex + "/mainloop.pipe", "-D", "STAGES=2,4", "--json", sweep_file.string()});
  REQUIRE(fin.code == 0);
  std::ifstream fin_in(sweep_file);
  collect(json::parse(fin_in), "sweep", seen);
  std::filesystem::remove(sweep_file);

  auto doc = documented_keys();
  for (const auto& [path, keys] : seen) {
    INFO("object " << path);
    REQUIRE(doc.count(path) == 1);
    for (const auto& k : keys) {
      INFO("key " << k << " is printed but not documented");
      CHECK(doc[path].count(k) == 1);
    }
  }
  for (const auto& [path, keys] : doc) {
    INFO("object " << path << " is documented but never printed");
    REQUIRE(seen.count(path) == 1);
    for (const auto& k : keys) {
      INFO("key " << k << " is documented but printed by none of the runs");
      CHECK(seen[path].count(k) == 1);
    }
  }
}

TEST_CASE("json output: input errors, diagnoses and waits are objects with codes", "[cli][json]") {
  std::string ex = test::examples_dir();
  json bad = run_json({"run", ex + "/mainloop.pipe", "-D", "NO_SUCH=1", "--json"});
  CHECK(bad["outcome"] == "input-error");
  CHECK(bad["exit"] == 1);
  CHECK_THAT(bad["error"]["message"].get<std::string>(), Catch::Contains("has no param 'NO_SUCH'"));
  json ub = run_json({"run", ex + "/ub_named_barrier_twice.pipe", "--json"});
  CHECK(ub["diagnosis"]["kind"] == "undefined_behaviour");
  CHECK(ub["diagnosis"]["code"] == "named_barrier_arrival_twice");
  CHECK(ub["diagnosis"]["line"] == 11);
  json dl = run_json({"run", ex + "/deadlock_tx_mismatch.pipe", "--json"});
  bool mbar = false;
  for (const auto& w : dl["deadlock"]["warps"]) mbar = mbar || (w["wait"]["kind"] == "mbarrier" && w["wait"]["object"] == "full");
  CHECK(mbar);
  json ok = run_json({"run", ex + "/mainloop.pipe", "--json"});
  std::int64_t by_kind = 0, by_words = 0;
  for (const auto& role : ok["roles"]) {
    for (const auto& w : role["waits"]) by_kind += w["cycles"].get<std::int64_t>();
    for (const auto& [_, c] : role["waiting_cycles"].items()) by_words += c.get<std::int64_t>();
  }
  CHECK(by_kind == by_words);
  CHECK(by_kind > 0);
  CHECK(models::code_of("tma.wait read (bulk store smem)") == "tma_wait_read_bulk_store_smem");
  CHECK(models::code_of("read before the write is complete (RAW)") == "read_before_the_write_is_complete_raw");
}

TEST_CASE("json output: a bad command-line option is a JSON object when --json is given", "[cli][json]") {
  auto r = test::run_cli({"run", "examples/mainloop", "--json", "--no-such-option"});
  CHECK(r.code == 1);
  json j = json::parse(r.out);
  CHECK(j["schema"] == models::kRunSchema);
  CHECK(j["outcome"] == "input-error");
  CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains("--no-such-option"));
  json c = json::parse(test::run_cli({"check", "examples/mainloop", "--seeds", "0", "--json"}).out);
  CHECK(c["schema"] == cli::kCheckSchema);
  // Without --json the error is text only, on stderr.
  auto text = test::run_cli({"run", "examples/mainloop", "--no-such-option"});
  CHECK(text.code == 1);
  CHECK(text.out.empty());
  // --help is not an error.
  CHECK(test::run_cli({"run", "--help", "--json"}).code == 0);
}
