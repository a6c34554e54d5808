// Machine descriptions: every parameter the simulator reads exists in each file with a source tag, and
// bad files are rejected with a message that names the problem.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
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
  // The message says where a complete file is (an older file lacks the parameters added since).
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { j["units"]["l2"]["params"].erase("l2_store_cost"); })),
                    Catch::Contains("missing parameter 'l2_store_cost' of unit 'l2'") && Catch::Contains(models::machines_dir()));
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j)["sm_count"]["source"] = "datasheet"; })),
                    Catch::Contains("source must start with"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([](auto& j) { j["extra"] = 1; })), Catch::Contains("unknown key 'extra'"));
  CHECK_THROWS_WITH(models::load_machine(write_variant([&](auto& j) { sm(j)["sm_count"]["value"] = 1.5; })),
                    Catch::Contains("must be an integer"));
  // A rate whose 0 means "no limit" takes 0 or at least 1 (1e-9 made every transfer endless).
  auto l2 = [](const char* name, double v) {
    return write_variant([=](auto& j) { j["units"]["l2"]["params"][name]["value"] = v; });
  };
  for (const char* name : {"l2_delivery_bytes_per_cycle", "l2_oob_bytes_per_cycle"}) {
    INFO(name);
    CHECK_THROWS_WITH(models::load_machine(l2(name, 1e-9)), Catch::Contains(fmt::format("parameter '{}' of unit 'l2' is 1e-09: it must "
                                                                                        "be 0 or from 1 to 1048576", name)));
    CHECK_THROWS_WITH(models::load_machine(l2(name, 0.999)), Catch::Contains("it must be 0 or from 1"));
    CHECK_NOTHROW(models::load_machine(l2(name, 0)));
    CHECK_NOTHROW(models::load_machine(l2(name, 1)));
  }
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

// ---- Hostile machine files: every value has its type and range, checked before any conversion ----

namespace {
nlohmann::json h100_json() {
  std::ifstream in(models::machines_dir() + "/h100-sxm.json");
  return nlohmann::json::parse(in);
}
// A what-if machine with other than 132 SMs: the built-in file's GPCs (which add up to its 132 SMs) go.
void set_sm_count(nlohmann::json& j, const nlohmann::json& v) {
  j["units"]["sm"].erase("gpcs");
  j["units"]["sm"]["params"]["sm_count"]["value"] = v;
}
nlohmann::json& param(nlohmann::json& j, const std::string& name) {
  for (auto& [unit, section] : j["units"].items())
    if (section.contains("params") && section["params"].contains(name)) return section["params"][name]["value"];
  throw std::logic_error("no parameter " + name);
}
// The InputError parsing `j` throws ("" if none).
std::string machine_error(const nlohmann::json& j) {
  try {
    models::parse_machine(j.dump(), "m.json");
  } catch (const isa::InputError& e) {
    return e.what();
  }
  return "";
}
std::string machine_error_text(const std::string& text) {
  try {
    models::parse_machine(text, "m.json");
  } catch (const isa::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("machine parameters: each range holds the built-in machines and is checked on both sides", "[machine][hostile]") {
  const auto& params = models::machine_params();
  for (const auto& n : models::builtin_machine_names()) {
    models::Machine m = models::load_machine(n);
    CHECK(m.sm_count <= 1024);
    CHECK(m.clock_mhz >= models::kMinClockMhz);
  }
  for (const auto& p : params) {
    INFO(p.name);
    CHECK(p.min <= p.max);
    CHECK(std::isfinite(p.max));
    // Values at both ends of the range pass; one step outside fails with the parameter, its unit and the range.
    // (smem_per_sm bounds the two smem parameters after it: the neighbours follow it where needed.)
    auto with = [&](double v) {
      nlohmann::json j = h100_json();
      if (std::string(p.name) == "sm_count") j["units"]["sm"].erase("gpcs");
      if (p.integer)
        param(j, p.name) = static_cast<std::int64_t>(v);
      else
        param(j, p.name) = v;
      if (std::string(p.name) == "smem_per_sm" && v < 232448) param(j, "smem_per_cta_max") = param(j, "smem_reserved_per_cta") = 0;
      if (std::string(p.name) == "smem_per_cta_max") param(j, "smem_per_sm") = 16777216;
      return j;
    };
    CHECK(machine_error(with(p.min)).empty());
    CHECK(machine_error(with(p.max)).empty());
    double below = p.integer ? p.min - 1 : std::nextafter(p.min, -HUGE_VAL);
    double above = p.integer ? p.max + 1 : std::nextafter(p.max, HUGE_VAL);
    std::string range = fmt::format("from {} to {}", p.min, p.max);
    CHECK_THAT(machine_error(with(below)), Catch::Contains(fmt::format("m.json: parameter '{}' of unit '{}' is", p.name, p.unit)) &&
                                               Catch::Contains(range));
    CHECK_THAT(machine_error(with(above)), Catch::Contains(fmt::format("parameter '{}' of unit '{}' is", p.name, p.unit)) &&
                                               Catch::Contains(range));
  }
}

TEST_CASE("machine files: the GPCs add up to the SMs, whole and positive, with a source", "[machine][hostile]") {
  auto gpcs = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = h100_json();
    edit(j["units"]["sm"]["gpcs"]);
    return machine_error(j);
  };
  CHECK(gpcs([](auto&) {}).empty());
  CHECK(models::parse_machine(h100_json().dump(), "m.json").gpc_sms ==
        std::vector<std::int64_t>{18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2});
  CHECK(gpcs([](auto& g) { g["sms"] = {66, 66}; }).empty());
  CHECK(gpcs([](auto& g) { g["sms"] = std::vector<int>(132, 1); }).empty());
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = {66, 65}; }), Catch::Contains("\"gpcs\" hold 131 SMs in all, but sm_count is 132"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = {66, 67}; }), Catch::Contains("hold 133 SMs"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = {132, 0}; }), Catch::Contains("0 is not an SM count"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = {66.5, 65.5}; }), Catch::Contains("66.5 is not an SM count"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = {"132"}; }), Catch::Contains("is not an SM count"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = nlohmann::json::array(); }), Catch::Contains("must list 1 to 1024 GPCs"));
  CHECK_THAT(gpcs([](auto& g) { g["sms"] = 132; }), Catch::Contains("\"gpcs\" must be {\"sms\""));
  CHECK_THAT(gpcs([](auto& g) { g.erase("source"); }), Catch::Contains("\"gpcs\" must be {\"sms\""));
  CHECK_THAT(gpcs([](auto& g) { g["source"] = "datasheet"; }), Catch::Contains("source must start with"));
  CHECK_THAT(gpcs([](auto& g) { g["size"] = 1; }), Catch::Contains("\"gpcs\": unknown key 'size'"));
  CHECK(gpcs([](auto& g) { g["note"] = "a note"; }).empty());
  CHECK_THAT(gpcs([](auto& g) { g["note"] = 3; }), Catch::Contains("\"note\" must be a string"));
  // Only the sm unit has GPCs; a file without them places clusters on any SMs.
  nlohmann::json j = h100_json();
  j["units"]["tma"]["gpcs"] = j["units"]["sm"]["gpcs"];
  CHECK_THAT(machine_error(j), Catch::Contains("unit 'tma': unknown key 'gpcs'"));
  j = h100_json();
  j["units"]["sm"].erase("gpcs");
  CHECK(machine_error(j).empty());
  CHECK(models::parse_machine(j.dump(), "m.json").gpc_sms.empty());
}

TEST_CASE("machine files: HBM's latency under load is optional knots of rising utilisation and cycles, with a source",
          "[machine][hostile]") {
  auto curve = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = h100_json();
    edit(j["units"]["l2"]["hbm_loaded_latency"]);
    return machine_error(j);
  };
  auto ok = [](const nlohmann::json& u, const nlohmann::json& c) {
    return [=](nlohmann::json& h) { h["utilisation"] = u, h["cycles"] = c; };
  };
  CHECK(curve([](auto&) {}).empty());
  CHECK(curve(ok({0.5}, {100})).empty());
  CHECK(curve(ok({0.25, 0.5, 2}, {0, 100000, 3})).empty());
  nlohmann::json j = h100_json();
  j["units"]["l2"]["hbm_loaded_latency"] = {{"utilisation", {0.25, 0.5}}, {"cycles", {100, 300}}, {"source", "measured: x"}};
  const models::Machine m = models::parse_machine(j.dump(), "m.json");
  CHECK(m.hbm_loaded_utilisation == std::vector<double>{0.25, 0.5});
  CHECK(m.hbm_loaded_cycles == std::vector<double>{100, 300});
  CHECK(m.hbm_loaded_source == "measured: x");
  CHECK_THAT(curve(ok({0.5, 0.5}, {1, 2})), Catch::Contains("utilisation 0.5 must be a number above 0.5 and at most 2 (rising)"));
  CHECK_THAT(curve(ok({0.5, 0.25}, {1, 2})), Catch::Contains("utilisation 0.25 must be a number above 0.5"));
  CHECK_THAT(curve(ok({0}, {1})), Catch::Contains("utilisation 0 must be a number above 0 "));
  CHECK_THAT(curve(ok({-1}, {1})), Catch::Contains("utilisation -1 must be"));
  CHECK_THAT(curve(ok({2.0001}, {1})), Catch::Contains("at most 2"));
  CHECK_THAT(curve(ok({"0.5"}, {1})), Catch::Contains("must be a number above"));
  CHECK_THAT(curve(ok({0.5}, {-1})), Catch::Contains("cycles -1 must be a number from 0 to 100000"));
  CHECK_THAT(curve(ok({0.5}, {100001})), Catch::Contains("cycles 100001 must be"));
  CHECK_THAT(curve(ok({0.5}, {nullptr})), Catch::Contains("cycles null must be"));
  CHECK_THAT(curve(ok({0.5, 0.6}, {1})), Catch::Contains("as many utilisations as cycles (2 and 1)"));
  CHECK_THAT(curve(ok(nlohmann::json::array(), nlohmann::json::array())), Catch::Contains("needs 1 to 64 knots"));
  CHECK_THAT(curve(ok(std::vector<double>(65, 0.5), std::vector<double>(65, 1))), Catch::Contains("needs 1 to 64 knots"));
  CHECK_THAT(curve([](auto& h) { h["utilisation"] = 0.5; }), Catch::Contains("\"hbm_loaded_latency\" must be {\"utilisation\""));
  CHECK_THAT(curve([](auto& h) { h.erase("cycles"); }), Catch::Contains("must be {\"utilisation\""));
  CHECK_THAT(curve([](auto& h) { h.erase("source"); }), Catch::Contains("must be {\"utilisation\""));
  CHECK_THAT(curve([](auto& h) { h["source"] = "a table"; }), Catch::Contains("source must start with"));
  CHECK_THAT(curve([](auto& h) { h["knots"] = 1; }), Catch::Contains("\"hbm_loaded_latency\": unknown key 'knots'"));
  CHECK(curve([](auto& h) { h["note"] = "a note"; }).empty());
  CHECK_THAT(curve([](auto& h) { h = 3; }), Catch::Contains("must be {\"utilisation\""));
  // Only the l2 unit has it; without it no latency under load.
  j = h100_json();
  j["units"]["tma"]["hbm_loaded_latency"] = j["units"]["l2"]["hbm_loaded_latency"];
  CHECK_THAT(machine_error(j), Catch::Contains("unit 'tma': unknown key 'hbm_loaded_latency'"));
  j = h100_json();
  j["units"]["l2"].erase("hbm_loaded_latency");
  CHECK(machine_error(j).empty());
  CHECK(models::parse_machine(j.dump(), "m.json").hbm_loaded_utilisation.empty());
}

TEST_CASE("machine files: wrong types, non-integers, huge and tiny values are refused before any conversion", "[machine][hostile]") {
  auto set = [](const std::string& name, const nlohmann::json& v) {
    nlohmann::json j = h100_json();
    if (name == "sm_count") j["units"]["sm"].erase("gpcs");
    param(j, name) = v;
    return machine_error(j);
  };
  // The issue's examples: 10^9 SMs, and bandwidths or a clock so small that times become inf or negative.
  CHECK_THAT(set("sm_count", 1000000000), Catch::Contains("parameter 'sm_count' of unit 'sm' is 1000000000: it must be an integer from 1 to 1024"));
  CHECK(set("sm_count", 1024).empty());
  CHECK_THAT(set("sm_count", 1025), Catch::Contains("from 1 to 1024"));
  CHECK_THAT(set("sm_count", 0), Catch::Contains("from 1 to 1024"));
  CHECK_THAT(set("l2_bytes_per_cycle", 1e-300), Catch::Contains("parameter 'l2_bytes_per_cycle' of unit 'l2' is 1e-300"));
  CHECK_THAT(set("hbm_bytes_per_cycle", 0), Catch::Contains("'hbm_bytes_per_cycle'"));
  CHECK_THAT(set("tma_bytes_per_cycle", 0.5), Catch::Contains("'tma_bytes_per_cycle'"));
  CHECK_THAT(set("atomic_same_address_per_cycle", 0), Catch::Contains("'atomic_same_address_per_cycle'"));
  CHECK_THAT(set("clock_mhz", 1e-3), Catch::Contains("parameter 'clock_mhz' of unit 'sm' is 0.001: it must be a number from 100 to 10000"));
  CHECK_THAT(set("clock_mhz", 1e30), Catch::Contains("'clock_mhz'"));
  // An integer field: a value that would wrap or truncate in the conversion is refused first.
  CHECK_THAT(set("l2_capacity_bytes", 1e30), Catch::Contains("parameter 'l2_capacity_bytes' of unit 'l2' is 1e+30"));
  CHECK_THAT(set("l2_capacity_bytes", std::numeric_limits<std::uint64_t>::max()), Catch::Contains("is 18446744073709551615"));
  CHECK_THAT(set("max_ctas_per_sm", -1), Catch::Contains("'max_ctas_per_sm' of unit 'sm' is -1"));
  CHECK_THAT(set("sm_count", 1.5), Catch::Contains("parameter 'sm_count' of unit 'sm' is 1.5: it must be an integer"));
  CHECK_THAT(set("wgmma_queue_depth", 6.000001), Catch::Contains("must be an integer"));
  CHECK(set("sm_count", 132.0).empty());  // an integral number is an integer
  // Not a number at all.
  CHECK_THAT(set("sm_count", "132"), Catch::Contains("parameter 'sm_count' must be {\"value\": number"));
  CHECK_THAT(set("sm_count", true), Catch::Contains("parameter 'sm_count' must be {\"value\": number"));
  CHECK_THAT(set("sm_count", nullptr), Catch::Contains("parameter 'sm_count' must be {\"value\": number"));
  // Numbers beyond a double (1e400) are refused by the JSON reader itself.
  std::string text = h100_json().dump();
  std::string huge = text;
  huge.replace(huge.find("\"value\":132"), 11, "\"value\":1e400");
  CHECK_THAT(machine_error_text(huge), Catch::Contains("m.json: not valid JSON") && Catch::Contains("number overflow"));
  std::string tiny = text;  // 1e-400 reads as 0: below the range
  tiny.replace(tiny.find("\"value\":132"), 11, "\"value\":1e-400");
  CHECK_THAT(machine_error_text(tiny), Catch::Contains("'sm_count' of unit 'sm' is 0.0"));
  // Rules between parameters.
  CHECK_THAT(set("tmem_columns", 48), Catch::Contains("tmem_columns (48) must be a multiple of 32"));
  CHECK(set("tmem_columns", 512).empty());
  CHECK_THAT(set("tmem_columns", 544), Catch::Contains("from 0 to 512"));
  CHECK_THAT(set("smem_per_cta_max", 233473), Catch::Contains("smem_per_cta_max (233473) is larger than smem_per_sm (233472)"));
  CHECK(set("smem_per_cta_max", 233472).empty());
  nlohmann::json reserved = h100_json();
  param(reserved, "smem_per_sm") = 1024;
  param(reserved, "smem_per_cta_max") = 0;
  param(reserved, "smem_reserved_per_cta") = 1025;
  CHECK_THAT(machine_error(reserved), Catch::Contains("smem_reserved_per_cta (1025) is larger than smem_per_sm (1024)"));
  param(reserved, "smem_reserved_per_cta") = 1024;
  CHECK(machine_error(reserved).empty());
  CHECK_THAT(set("smem_per_sm", 1023), Catch::Contains("smem_per_cta_max (232448) is larger than smem_per_sm (1023)"));
}

TEST_CASE("machine files: names, descriptions, sources and notes are bounded text without control characters", "[machine][hostile]") {
  auto edit = [](const std::function<void(nlohmann::json&)>& f) {
    nlohmann::json j = h100_json();
    f(j);
    return machine_error(j);
  };
  CHECK_THAT(edit([](auto& j) { j["name"] = ""; }), Catch::Contains("m.json: \"name\" is empty"));
  CHECK_THAT(edit([](auto& j) { j["name"] = 7; }), Catch::Contains("missing \"name\" (a string)"));
  CHECK_THAT(edit([](auto& j) { j["name"] = "h100\nkernel x"; }), Catch::Contains("\"name\" contains a control character"));
  CHECK_THAT(edit([](auto& j) { j["name"] = "h100\x1b[31m"; }), Catch::Contains("\"name\" contains a control character"));
  CHECK_THAT(edit([](auto& j) { j["name"] = "h100 \xc3\xa9"; }), Catch::Contains("\"name\" contains a character that is not printable ASCII"));
  CHECK(edit([](auto& j) { j["name"] = std::string(64, 'x'); }).empty());
  CHECK_THAT(edit([](auto& j) { j["name"] = std::string(65, 'x'); }), Catch::Contains("\"name\" is 65 bytes long, more than 64"));
  CHECK(edit([](auto& j) { j["name"] = "my h100 (half the SMs)"; }).empty());
  CHECK_THAT(edit([](auto& j) { j["gpu_names"] = {"H100", "H\t100"}; }), Catch::Contains("\"gpu_names\"[1] contains a control character"));
  CHECK_THAT(edit([](auto& j) { j["gpu_names"] = {""}; }), Catch::Contains("list of non-empty strings"));
  CHECK_THAT(edit([](auto& j) { j["gpu_names"] = {1}; }), Catch::Contains("list of non-empty strings"));
  CHECK_THAT(edit([](auto& j) { j["gpu_names"] = "H100"; }), Catch::Contains("\"gpu_names\" must be a list of strings"));
  CHECK(edit([](auto& j) { j["gpu_names"] = std::vector<std::string>(16, "H"); }).empty());
  CHECK_THAT(edit([](auto& j) { j["gpu_names"] = std::vector<std::string>(17, "H"); }), Catch::Contains("17 names, more than 16"));
  CHECK_THAT(edit([](auto& j) { j["description"] = "two\nlines"; }), Catch::Contains("\"description\" contains a control character"));
  CHECK_THAT(edit([](auto& j) { j["units"]["sm"]["params"]["sm_count"]["source"] = "published: x\ny"; }),
             Catch::Contains("parameter 'sm_count': source contains a control character"));
  CHECK_THAT(edit([](auto& j) { j["units"]["sm"]["params"]["sm_count"]["note"] = 3; }),
             Catch::Contains("parameter 'sm_count': \"note\" must be a string"));
  CHECK(edit([](auto& j) { j["units"]["sm"]["params"]["sm_count"]["note"] = "a note"; }).empty());
  CHECK_THAT(edit([](auto& j) { j["units"]["sm"]["note"] = nlohmann::json::array(); }), Catch::Contains("unit 'sm': \"note\" must be a string"));
  // Keys the file names are printed safely in the message.
  CHECK_THAT(edit([](auto& j) { j["x\ny"] = 1; }), Catch::Contains("unknown key 'x\\x0ay'"));
}

TEST_CASE("sensible what-if machines pass, the extremes of every range run with finite, non-negative times", "[machine][hostile]") {
  nlohmann::json j = h100_json();
  for (const char* bw : {"l2_bytes_per_cycle", "hbm_bytes_per_cycle", "tma_bytes_per_cycle", "lsu_bytes_per_cycle"})
    param(j, bw) = param(j, bw).get<double>() * 2;
  set_sm_count(j, 66);
  CHECK(machine_error(j).empty());
  models::Machine m = models::parse_machine(j.dump(), "m.json");
  for (double mhz : {500.0, 1000.0, 3000.0}) CHECK(models::at_sm_clock(m, mhz).clock_mhz == mhz);

  // The slowest machine the ranges allow (every bandwidth 1 byte per cycle, a 100 MHz clock, atomics at their
  // floor) and the fastest: a run finishes, and its times and the trace's are finite and non-negative.
  auto extreme = [&](bool slow) {
    nlohmann::json e = h100_json();
    for (const auto& p : models::machine_params()) {
      std::string n = p.name;
      if (n.find("bytes_per_cycle") != std::string::npos || n == "clock_mhz" || n == "atomic_same_address_per_cycle")
        param(e, n) = slow ? p.min : p.max;
    }
    std::string path = (std::filesystem::temp_directory_path() / (slow ? "smpipe_slow.json" : "smpipe_fast.json")).string();
    std::ofstream(path) << e.dump();
    return path;
  };
  for (bool slow : {true, false}) {
    INFO((slow ? "slowest" : "fastest"));
    std::string trace = (std::filesystem::temp_directory_path() / "smpipe_extreme.trace.json").string();
    auto r = test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--gpu", extreme(slow), "--json", "--trace", trace});
    REQUIRE(r.code == cli::kOk);
    auto out = nlohmann::json::parse(r.out.substr(0, r.out.rfind('}') + 1));
    CHECK(out["cycles"].get<std::int64_t>() > 0);
    CHECK(std::isfinite(out["time_us"].get<double>()));
    CHECK(out["time_us"].get<double>() > 0);
    std::ifstream in(trace);
    auto t = nlohmann::json::parse(in);  // "inf" or "nan" would not parse
    for (const auto& ev : t["traceEvents"]) {
      if (ev.contains("ts")) CHECK(ev["ts"].get<double>() >= 0);
      if (ev.contains("dur")) CHECK(ev["dur"].get<double>() >= 0);
    }
  }
}

TEST_CASE("at_sm_clock refuses a clock that is not finite or not plausible", "[machine][hostile]") {
  models::Machine m = models::load_machine("h100-sxm");
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL, 0.0, -1980.0, 99.99, 10000.01, 1e300})
    CHECK_THROWS_WITH(models::at_sm_clock(m, bad), Catch::Contains("MHz is not in 100..10000 MHz"));
  for (double ok : {100.0, 1980.0, 10000.0}) {
    models::Machine s = models::at_sm_clock(m, ok);
    CHECK(std::isfinite(s.l2_bytes_per_cycle));
    CHECK(s.l2_bytes_per_cycle > 0);
    CHECK(s.hbm_bytes_per_cycle > 0);
  }
  CHECK(models::at_sm_clock(m, 990).l2_bytes_per_cycle == Approx(2 * m.l2_bytes_per_cycle));
  // The L2's combining window is a time: fewer cycles of a slower clock, more of a faster one.
  REQUIRE(m.l2_combine_window_cycles > 2);
  CHECK(models::at_sm_clock(m, 990).l2_combine_window_cycles ==
        std::llround(static_cast<double>(m.l2_combine_window_cycles) * 990 / m.clock_mhz));
  CHECK(models::at_sm_clock(m, 990).l2_combine_window_cycles < m.l2_combine_window_cycles);
  CHECK(models::at_sm_clock(m, 3000).l2_combine_window_cycles > m.l2_combine_window_cycles);
  CHECK(models::at_sm_clock(m, m.clock_mhz).l2_combine_window_cycles == m.l2_combine_window_cycles);
  // A machine built in code without a clock cannot be scaled (its bandwidth would become 0 or NaN).
  models::Machine none = m;
  none.clock_mhz = 0;
  CHECK_THROWS_WITH(models::at_sm_clock(none, 1000), Catch::Contains("has an SM clock of 0 MHz"));
  // On the command line.
  auto r = test::run_cli({"run", test::examples_dir() + "/mainloop.pipe", "--clock-mhz", "1e9"});
  CHECK(r.code == cli::kBadInput);
  CHECK_THAT(r.err, Catch::Contains("an SM clock of 1000000000 MHz is not in 100..10000 MHz"));
}

TEST_CASE("the sustained clock: the load clock, lowered in proportion to the tensor pipe's load with random data", "[machine][clock]") {
  models::Machine m = models::load_machine("h100-sxm");
  REQUIRE(m.load_clock_mhz < m.clock_mhz);               // under load the GPU leaves its boost clock
  REQUIRE(m.load_clock_random_mhz < m.load_clock_mhz);   // random operands take it to the power cap
  // Constant data: the load clock whatever the load.
  for (double busy : {0.0, 0.5, 1.0}) CHECK(models::sustained_clock_mhz(m, busy, false) == m.load_clock_mhz);
  // Random data: both ends of the load, the middle, and loads outside 0..1 held at the ends.
  CHECK(models::sustained_clock_mhz(m, 0.0, true) == m.load_clock_mhz);
  CHECK(models::sustained_clock_mhz(m, 1.0, true) == m.load_clock_random_mhz);
  CHECK(models::sustained_clock_mhz(m, 0.5, true) == Approx((m.load_clock_mhz + m.load_clock_random_mhz) / 2));
  CHECK(models::sustained_clock_mhz(m, 0.25, true) > models::sustained_clock_mhz(m, 0.75, true));
  CHECK(models::sustained_clock_mhz(m, 1.5, true) == m.load_clock_random_mhz);
  CHECK(models::sustained_clock_mhz(m, -1.0, true) == m.load_clock_mhz);
  CHECK(models::sustained_clock_mhz(m, std::nan(""), true) == m.load_clock_mhz);
  // Unmeasured (the B200): the nominal clock.
  models::Machine b = models::load_machine("b200");
  CHECK(models::sustained_clock_mhz(b, 1.0, true) == b.clock_mhz);
  // Never above the machine's own clock: one set between the two load clocks caps the light loads only.
  models::Machine low = m;
  low.clock_mhz = (m.load_clock_mhz + m.load_clock_random_mhz) / 2;
  CHECK(models::sustained_clock_mhz(low, 0.0, false) == low.clock_mhz);
  CHECK(models::sustained_clock_mhz(low, 0.25, true) == low.clock_mhz);
  CHECK(models::sustained_clock_mhz(low, 0.75, true) == models::sustained_clock_mhz(m, 0.75, true));
  CHECK(models::sustained_clock_mhz(low, 1.0, true) == m.load_clock_random_mhz);
}
