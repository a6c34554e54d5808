// The committed hardware traces (validation/results/h100/k2_trace_*.json, docs/trace-format.md) decode,
// use the .pipe op vocabulary, and describe a consistent pipeline: per warp, time never runs backwards,
// every wait has its end, barrier names and stage indices exist, and each stage's expect_tx equals the
// bytes its TMA loads deliver.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "isa/ops.hpp"
#include "models/machine.hpp"

namespace {
std::vector<std::string> trace_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h100"))
    if (e.path().filename().string().rfind("k2_trace_", 0) == 0 && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool known_op(const std::string& op) {
  static const std::vector<std::string> markers = {"tile", "tail", "epilogue", "exit", "tma.wait.read"};
  std::string base = op;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".end") base = base.substr(0, base.size() - 4);
  if (std::find(markers.begin(), markers.end(), base) != markers.end()) return true;
  return smpipe::isa::find_op(base).has_value();
}
}  // namespace

TEST_CASE("committed H100 traces are consistent smpipe-hwtrace files", "[traces]") {
  auto files = trace_files();
  REQUIRE(files.size() >= 2);
  for (const auto& path : files) {
    DYNAMIC_SECTION(std::filesystem::path(path).filename().string()) {
      std::ifstream in(path);
      nlohmann::json t = nlohmann::json::parse(in);
      CHECK(t["format"] == "smpipe-hwtrace");
      CHECK(t["version"] == 1);
      CHECK(t["run"]["check_ok"] == true);
      std::map<std::string, nlohmann::json> barriers;
      for (const auto& b : t["barriers"]) barriers[b["name"]] = b;
      std::int64_t events = 0, stages_checked = 0;
      for (const auto& cta : t["ctas"]) {
        CHECK(cta["dropped"] == 0);
        for (const auto& w : cta["warps"]) {
          std::int64_t last = -1;
          std::vector<std::string> open;  // waits whose end has not come yet
          std::map<std::int64_t, std::int64_t> expected, delivered;  // per full[] stage use: bytes
          std::int64_t use = 0;
          for (const auto& e : w["events"]) {
            ++events;
            std::int64_t cycle = e[0];
            std::string op = e[1];
            INFO("CTA " << cta["cta"] << " warp " << w["warp"] << " op " << op << " at " << cycle);
            CHECK(known_op(op));
            CHECK(cycle >= last);
            last = cycle;
            if (!e[2].is_null()) {
              REQUIRE(barriers.count(e[2]) == 1);
              const auto& b = barriers[e[2]];
              if (!b["size"].is_null() && !e[3].is_null()) {
                CHECK(e[3].get<std::int64_t>() >= 0);
                CHECK(e[3].get<std::int64_t>() < b["size"].get<std::int64_t>());
              }
            }
            bool is_end = op.size() > 4 && op.substr(op.size() - 4) == ".end";
            std::string key = fmt::format("{}|{}|{}", is_end ? op.substr(0, op.size() - 4) : op, e[2].dump(), e[3].dump());
            if (is_end) {
              REQUIRE(!open.empty());
              CHECK(open.back() == key);
              open.pop_back();
            } else if (op == "wait" || op == "bar.sync" || op == "wgmma.wait" || op == "tma.wait" || op == "tma.wait.read") {
              open.push_back(key);
            }
            // The producer's stage bytes: arrive.expect_tx on full[s], then the TMA loads completing there.
            if (op == "arrive.expect_tx" && e[2] == "full") expected[++use] = e[5];
            if (op == "tma.load" && e[2] == "full") delivered[use] += e[5].get<std::int64_t>();
          }
          CHECK(open.empty());
          for (const auto& [u, bytes] : expected) {
            CHECK(delivered[u] == bytes);
            ++stages_checked;
          }
        }
      }
      CHECK(events > 1000);
      CHECK(stages_checked > 10);
    }
  }
}
