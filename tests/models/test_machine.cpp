// Machine descriptions: every parameter the simulator reads exists in each file with a source tag, and
// bad files are rejected with a message that names the problem.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace smpipe;

TEST_CASE("every built-in machine has every parameter with a source", "[machine]") {
  auto names = models::builtin_machine_names();
  CHECK(names == std::vector<std::string>{"b200", "h100-sxm", "h200"});
  for (const auto& n : names) {
    models::Machine m = models::load_machine(n);
    INFO(n);
    CHECK(m.sources.size() == models::machine_params().size());
    for (const auto& p : models::machine_params()) {
      INFO(p.name);
      REQUIRE(m.sources.count(p.name));
      const std::string& s = m.sources[p.name];
      bool tagged = s.rfind("published:", 0) == 0 || s.rfind("measured:", 0) == 0 || s.rfind("derived:", 0) == 0 ||
                    s.rfind("estimate:", 0) == 0;
      CHECK(tagged);
    }
  }
  CHECK(models::load_machine("b200").tmem_columns == 512);
  CHECK(models::load_machine("h100-sxm").tmem_columns == 0);
}

namespace {
std::string write_variant(const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(models::machines_dir() + "/h100-sxm.json");
  nlohmann::json j = nlohmann::json::parse(in);
  edit(j);
  std::string path = (std::filesystem::temp_directory_path() / "smpipe_test_machine.json").string();
  std::ofstream(path) << j.dump();
  return path;
}
}  // namespace

TEST_CASE("unknown, missing and untagged machine parameters are errors", "[machine]") {
  auto sm = [](nlohmann::json& j) -> nlohmann::json& { return j["units"]["sm"]["params"]; };
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j)["sm_cnt"] = {{"value", 1}, {"source", "published: x"}}; })),
                    Catch::Contains("unit 'sm': unknown parameter 'sm_cnt'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j).erase("sm_count"); })),
                    Catch::Contains("missing parameter 'sm_count' of unit 'sm'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j)["sm_count"]["source"] = "datasheet"; })),
                    Catch::Contains("source must start with"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["extra"] = 1; })), Catch::Contains("unknown key 'extra'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j)["sm_count"]["value"] = 1.5; })),
                    Catch::Contains("must be an integer"));
  // Units and implementations are those of the simulator's registry; a parameter sits in its own unit.
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["units"]["dram"] = nlohmann::json::object(); })),
                    Catch::Contains("unknown unit 'dram' (units: sm, hazards, tensor, mbarrier"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["units"]["l2"]["impl"] = "ideal"; })),
                    Catch::Contains("unit 'l2' has no implementation 'ideal' (known: single_queue, cache_hbm)"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["units"]["l2"]["latency"] = 1; })),
                    Catch::Contains("unit 'l2': unknown key 'latency'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) {
                      j["units"]["tma"]["params"]["l2_bytes_per_cycle"] = j["units"]["l2"]["params"]["l2_bytes_per_cycle"];
                    })),
                    Catch::Contains("parameter 'l2_bytes_per_cycle' belongs to unit 'l2', not 'tma'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["description"] = 7; })),
                    Catch::Contains("\"description\" must be a string"));
  CHECK(models::load_machine(write_variant([](auto&) {})).impls.at("l2") == "cache_hbm");
  // A file in the flat format of before is told how to convert.
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) {
                      nlohmann::json flat;
                      for (const auto& [u, section] : j["units"].items())
                        for (const auto& [k, p] : section["params"].items()) flat[k] = p;
                      j.erase("units");
                      j["params"] = flat;
                    })),
                    Catch::Contains("group them by unit under \"units\""));
  CHECK(models::load_machine(write_variant([](auto& j) { j["units"]["l2"].erase("impl"); })).impls.count("l2") == 0);
  CHECK_THROWS_WITH(models::load_machine("h300"), Catch::Contains("unknown machine 'h300' (built-in: b200, h100-sxm, h200"));
  CHECK_NOTHROW(models::load_machine(write_variant([](auto&) {})));
}

TEST_CASE("machines are found by the device name a hardware trace records", "[machine]") {
  CHECK(models::machine_for_gpu("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(models::machine_for_gpu("NVIDIA H200") == "h200");
  CHECK(models::machine_for_gpu("NVIDIA B200") == "b200");
  CHECK(models::machine_for_gpu("NVIDIA A100-SXM4-40GB").empty());
}

TEST_CASE("measured machine parameters equal the medians in the committed result files", "[machine]") {
  int checked = 0;
  for (const auto& n : models::builtin_machine_names()) {
    models::Machine m = models::load_machine(n);
    std::ifstream in(m.path);
    nlohmann::json j = nlohmann::json::parse(in);
    nlohmann::json params;
    for (const auto& [unit, section] : j["units"].items())
      for (const auto& [key, p] : section["params"].items()) params[key] = p;
    for (const auto& [key, p] : params.items()) {
      std::string src = p["source"];
      if (src.rfind("measured: ", 0) != 0) continue;
      auto hash = src.find('#');
      REQUIRE(hash != std::string::npos);
      std::string file = src.substr(10, hash - 10);
      std::string name = src.substr(hash + 1, src.find(' ', hash) - hash - 1);
      INFO(n << " " << key << " <- " << file << "#" << name);
      std::ifstream rf(std::string(SMPIPE_SOURCE_DIR) + "/" + file);
      REQUIRE(rf.good());
      nlohmann::json results = nlohmann::json::parse(rf);
      double value = p["value"];
      if (name == "clocks") {
        CHECK(std::abs(results["clocks"]["sm_clock_mhz_measured_all_sms_busy"].get<double>() - value) < 5);
        ++checked;
        continue;
      }
      bool found = false;
      for (const auto& meas : results["measurements"]) {
        if (meas["name"] != name) continue;
        found = true;
        double median = meas["median"];
        CHECK(std::abs(median - value) <= (value == std::round(value) ? 0.5 : 1e-3));
      }
      CHECK(found);
      ++checked;
    }
  }
  CHECK(checked >= 10);
}
