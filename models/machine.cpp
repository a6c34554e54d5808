#include "models/machine.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <variant>
#include <algorithm>

#include "isa/source.hpp"

namespace smpipe::models {

namespace {

using Field = std::variant<std::int64_t Machine::*, double Machine::*>;

struct ParamDef {
  MachineParam info;
  Field field;
};

const std::vector<ParamDef>& param_defs() {
  static const std::vector<ParamDef> defs = {
      {{"sm", "sm_count", "streaming multiprocessors on the GPU"}, &Machine::sm_count},
      {{"sm", "clock_mhz", "SM clock used to convert cycles to time"}, &Machine::clock_mhz},
      {{"sm", "max_warps_per_sm", "resident warps per SM"}, &Machine::max_warps_per_sm},
      {{"sm", "max_ctas_per_sm", "resident CTAs per SM"}, &Machine::max_ctas_per_sm},
      {{"sm", "smem_per_sm", "shared memory per SM, bytes"}, &Machine::smem_per_sm},
      {{"sm", "smem_per_cta_max", "largest shared memory allocation of one CTA, bytes"}, &Machine::smem_per_cta_max},
      {{"sm", "smem_reserved_per_cta", "shared memory the system reserves per CTA, bytes"}, &Machine::smem_reserved_per_cta},
      {{"sm", "max_cluster_size", "largest cluster (CTAs)"}, &Machine::max_cluster_size},
      {{"tmem", "tmem_columns", "tensor memory columns per SM (0: none)"}, &Machine::tmem_columns},
      {{"tensor", "has_wgmma", "1 if wgmma (sm90a) exists"}, &Machine::has_wgmma},
      {{"sm", "cta_launch_cycles", "from a CTA's exit to the next CTA starting on that SM"}, &Machine::cta_launch_cycles},
      {{"sm", "launch_overhead_ns", "a kernel launch's fixed cost: from the launch to the first CTA running plus from the last CTA's exit to the kernel's completion"},
       &Machine::launch_overhead_ns},
      {{"sm", "op_issue_cycles", "issue cost of an op without its own number (fences, commits, bar.arrive)"}, &Machine::op_issue_cycles},
      {{"mbarrier", "mbarrier_arrive_cycles", "issue cost of a local mbarrier arrive / expect_tx"}, &Machine::mbarrier_arrive_cycles},
      {{"mbarrier", "mbarrier_test_wait_cycles", "one try_wait / test_wait on a barrier"}, &Machine::mbarrier_test_wait_cycles},
      {{"mbarrier", "mbarrier_wake_cycles", "from the completing arrive to the waiting warp resuming"}, &Machine::mbarrier_wake_cycles},
      {{"mbarrier", "remote_arrive_cycles", "an arrive on a peer CTA's barrier landing"}, &Machine::remote_arrive_cycles},
      {{"named_barrier", "named_barrier_cycles", "from the last bar.sync arrival to the waiters resuming"}, &Machine::named_barrier_cycles},
      {{"named_barrier", "named_barrier_cycles_per_warp", "added to named_barrier_cycles per warp the barrier expects"},
       &Machine::named_barrier_cycles_per_warp},
      {{"cluster_barrier", "cluster_sync_cycles", "cluster barrier arrive+wait once all threads arrived"}, &Machine::cluster_sync_cycles},
      {{"tma", "tma_issue_cycles", "issue cost of a TMA instruction"}, &Machine::tma_issue_cycles},
      {{"tma", "tma_load_latency_cycles", "TMA load: issue to complete_tx, beyond the transfer time"}, &Machine::tma_load_latency_cycles},
      {{"tma", "tma_bytes_per_cycle", "one SM's TMA engine bandwidth"}, &Machine::tma_bytes_per_cycle},
      {{"tma", "tma_store_bytes_per_cycle", "one SM's TMA engine reading smem for bulk stores"}, &Machine::tma_store_bytes_per_cycle},
      {{"tma", "tma_store_read_cycles", "TMA store: issue to smem read done, beyond the transfer"}, &Machine::tma_store_read_cycles},
      {{"tma", "tma_store_latency_cycles", "TMA store: smem read to global writes complete"}, &Machine::tma_store_latency_cycles},
      {{"l2", "l2_bytes_per_cycle", "whole-GPU L2 bandwidth shared by all SMs"}, &Machine::l2_bytes_per_cycle},
      {{"l2", "l2_capacity_bytes", "L2 capacity (cache_hbm)"}, &Machine::l2_capacity_bytes},
      {{"l2", "hbm_bytes_per_cycle", "whole-GPU HBM bandwidth behind the L2 (cache_hbm)"}, &Machine::hbm_bytes_per_cycle},
      {{"l2", "hbm_latency_cycles", "an L2 miss: the latency an HBM read adds to an L2 hit (cache_hbm)"}, &Machine::hbm_latency_cycles},
      {{"lsu", "cp_async_latency_cycles", "cp.async issue to data in smem, beyond the transfer"}, &Machine::cp_async_latency_cycles},
      {{"lsu", "lsu_bytes_per_cycle", "one SM's global load/store path"}, &Machine::lsu_bytes_per_cycle},
      {{"lsu", "smem_bytes_per_cycle", "one SM's shared memory bandwidth"}, &Machine::smem_bytes_per_cycle},
      {{"lsu", "global_load_latency_cycles", "ld.global latency (L2 hit)"}, &Machine::global_load_latency_cycles},
      {{"tensor", "tensor_flops_per_cycle_16bit", "dense f16/bf16 FLOP per SM per cycle"}, &Machine::tensor_flops_per_cycle_16bit},
      {{"tensor", "tensor_flops_per_cycle_8bit", "dense 8-bit FLOP per SM per cycle"}, &Machine::tensor_flops_per_cycle_8bit},
      {{"tensor", "tensor_flops_per_cycle_tf32", "dense tf32 FLOP per SM per cycle"}, &Machine::tensor_flops_per_cycle_tf32},
      {{"tensor", "tensor_flops_per_cycle_4bit", "dense 4-bit FLOP per SM per cycle (0: not supported)"}, &Machine::tensor_flops_per_cycle_4bit},
      {{"tensor", "wgmma_latency_cycles", "wgmma: end of its tensor-pipe occupancy to its group completing"}, &Machine::wgmma_latency_cycles},
      {{"tensor", "wgmma_issue_cycles", "wgmma: a warpgroup's issue of one wgmma with N <= 128 when the pipe's queue has room"},
       &Machine::wgmma_issue_cycles},
      {{"tensor", "wgmma_issue_cycles_n256", "wgmma: the same for N > 128"}, &Machine::wgmma_issue_cycles_n256},
      {{"tensor", "wgmma_queue_depth",
        "wgmma: how many issued wgmmas can wait behind the one the SM's tensor pipe works on; a warpgroup's next wgmma "
        "issues only when the one that many places earlier has started (0: no limit)"},
       &Machine::wgmma_queue_depth},
      {{"tensor", "mma_sync_latency_cycles", "mma.sync: dependent-issue latency"}, &Machine::mma_sync_latency_cycles},
      {{"tensor", "mma_sync_flops_per_cycle_16bit", "mma.sync dense 16-bit FLOP per SM per cycle (all four sub-partitions)"},
       &Machine::mma_sync_flops_per_cycle_16bit},
      {{"tensor", "umma_latency_cycles", "tcgen05.mma: end of occupancy to completion"}, &Machine::umma_latency_cycles},
      {{"tmem", "tmem_ld_cycles", "tcgen05.ld/st of 32 lanes x 32 bit x 32 columns"}, &Machine::tmem_ld_cycles},
      {{"tmem", "tmem_cp_cycles", "tcgen05.cp of 128x256b"}, &Machine::tmem_cp_cycles},
      {{"tmem", "tmem_alloc_cycles", "tcgen05.alloc / dealloc when columns are free"}, &Machine::tmem_alloc_cycles},
      {{"clc", "clc_latency_cycles", "try_cancel issue to the response landing"}, &Machine::clc_latency_cycles},
      {{"atomics", "atomic_latency_cycles", "atom on a global word (L2): issue to the result back (the word changes halfway)"},
       &Machine::atomic_latency_cycles},
      {{"atomics", "acquire_load_latency_cycles", "ld.acquire/ld.relaxed of a global word (L2): round trip (also each poll's, in a spin)"},
       &Machine::acquire_load_latency_cycles},
      {{"atomics", "atomic_issue_cycles", "red / st.relaxed: cycles before the warp issues again"}, &Machine::atomic_issue_cycles},
      {{"atomics", "release_issue_cycles", "the release fence of red/st/atom .release: cycles before the request leaves and the warp issues again"},
       &Machine::release_issue_cycles},
      {{"atomics", "atomic_same_address_per_cycle", "thread-level atomics on one word the L2 applies per cycle (they go one after another)"},
       &Machine::atomic_same_address_per_cycle},
      {{"atomics", "spin_poll_cycles", "a spin loop of ld.acquire: cycles from one poll to the next"}, &Machine::spin_poll_cycles},
      {{"atomics", "fence_cycles", "fence.acq_rel.gpu (__threadfence): cycles before the warp issues again"}, &Machine::fence_cycles},
  };
  return defs;
}

bool valid_source(const std::string& s) {
  for (const char* tag : {"published:", "measured:", "derived:", "estimate:"})
    if (s.rfind(tag, 0) == 0 && s.size() > std::string(tag).size() + 1) return true;
  return false;
}

}  // namespace

const std::vector<MachineParam>& machine_params() {
  static const std::vector<MachineParam> v = [] {
    std::vector<MachineParam> r;
    for (const auto& d : param_defs()) r.push_back(d.info);
    return r;
  }();
  return v;
}

std::int64_t Machine::tensor_rate(int operand_bits, bool tf32) const {
  if (tf32) return tensor_flops_per_cycle_tf32;
  if (operand_bits <= 4) return tensor_flops_per_cycle_4bit;
  if (operand_bits <= 8) return tensor_flops_per_cycle_8bit;
  if (operand_bits <= 16) return tensor_flops_per_cycle_16bit;
  return tensor_flops_per_cycle_tf32;
}

std::map<std::string, std::int64_t> predefined_constants(const Machine& machine) {
  return {{"SM_COUNT", machine.sm_count}};
}

std::string machine_for_gpu(const std::string& device) {
  for (const auto& n : builtin_machine_names()) {
    Machine m = load_machine(n);
    for (const auto& g : m.gpu_names)
      if (device.find(g) != std::string::npos) return n;
  }
  return "";
}

std::string machines_dir() {
  if (const char* env = std::getenv("SMPIPE_MACHINES")) return env;
  return std::string(SMPIPE_SOURCE_DIR) + "/models/machines";
}

std::string kernels_dir() {
  if (const char* env = std::getenv("SMPIPE_KERNELS")) return env;
  return std::string(SMPIPE_SOURCE_DIR) + "/models/kernels";
}

std::vector<std::string> builtin_machine_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(machines_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine at_sm_clock(const Machine& machine, double mhz) {
  if (!(mhz > 0)) throw isa::InputError(fmt::format("an SM clock of {} MHz is not positive", mhz));
  Machine m = machine;
  m.l2_bytes_per_cycle = machine.l2_bytes_per_cycle * machine.clock_mhz / mhz;
  m.hbm_bytes_per_cycle = machine.hbm_bytes_per_cycle * machine.clock_mhz / mhz;
  m.clock_mhz = mhz;
  m.sources["clock_mhz"] = fmt::format("set: {} MHz (the machine file says {})", mhz, machine.clock_mhz);
  m.sources["l2_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  m.sources["hbm_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  return m;
}

Machine load_machine(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::string path = name_or_path;
  if (path.size() < 5 || path.substr(path.size() - 5) != ".json") {
    path = machines_dir() + "/" + name_or_path + ".json";
    if (!fs::exists(path))
      throw isa::InputError(fmt::format("unknown machine '{}' (built-in: {}; or give a .json file)", name_or_path,
                                        fmt::join(builtin_machine_names(), ", ")));
  }
  return parse_machine(isa::read_input_file(path, "machine file"), path);
}

Machine parse_machine(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw isa::InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  Machine m;
  m.path = path;
  auto bad = [&](const std::string& msg) { return isa::InputError(fmt::format("{}: {}", path, msg)); };
  if (!j.is_object()) throw bad("expected a JSON object");
  if (j.contains("params") && !j.contains("units"))
    throw bad("this machine file lists its parameters flat under \"params\" (the format before units): group them by unit "
              "under \"units\", e.g. \"units\": {\"sm\": {\"params\": {\"sm_count\": ...}}, \"l2\": {\"impl\": \"single_queue\", "
              "\"params\": {...}}} (docs/simulator.md, Machine files; the built-in machines show every unit)");
  for (const auto& [key, value] : j.items())
    if (key != "name" && key != "description" && key != "gpu_names" && key != "units") throw bad(fmt::format("unknown key '{}'", key));
  if (!j.contains("name") || !j["name"].is_string()) throw bad("missing \"name\"");
  m.name = j["name"];
  if (j.contains("description")) {
    if (!j["description"].is_string()) throw bad("\"description\" must be a string");
    m.description = j["description"];
  }
  if (j.contains("gpu_names")) {
    if (!j["gpu_names"].is_array()) throw bad("\"gpu_names\" must be a list of strings");
    for (const auto& g : j["gpu_names"]) {
      if (!g.is_string() || g.get<std::string>().empty()) throw bad("\"gpu_names\" must be a list of non-empty strings");
      m.gpu_names.push_back(g);
    }
  }
  if (!j.contains("units") || !j["units"].is_object()) throw bad("missing \"units\" object");
  // Units and implementations come from the simulator's registry.
  std::vector<std::string> unit_names;
  const std::vector<UnitChoice> known = known_units();
  for (const UnitChoice& k : known)
    if (std::find(unit_names.begin(), unit_names.end(), k.unit) == unit_names.end()) unit_names.emplace_back(k.unit);
  const auto& units = j["units"];
  for (const auto& [unit, section] : units.items()) {
    if (std::find(unit_names.begin(), unit_names.end(), unit) == unit_names.end())
      throw bad(fmt::format("unknown unit '{}' (units: {})", unit, fmt::join(unit_names, ", ")));
    if (!section.is_object()) throw bad(fmt::format("unit '{}' must be an object", unit));
    for (const auto& [k, v] : section.items())
      if (k != "impl" && k != "params" && k != "note") throw bad(fmt::format("unit '{}': unknown key '{}'", unit, k));
    if (section.contains("impl")) {
      if (!section["impl"].is_string()) throw bad(fmt::format("unit '{}': \"impl\" must be a string", unit));
      std::string impl = section["impl"];
      std::vector<std::string> impls;
      for (const UnitChoice& k : known)
        if (k.unit == unit) impls.emplace_back(k.impl);
      if (std::find(impls.begin(), impls.end(), impl) == impls.end())
        throw bad(fmt::format("unit '{}' has no implementation '{}' (known: {})", unit, impl, fmt::join(impls, ", ")));
      m.impls[unit] = impl;
    }
    if (section.contains("params")) {
      if (!section["params"].is_object()) throw bad(fmt::format("unit '{}': \"params\" must be an object", unit));
      for (const auto& [key, value] : section["params"].items()) {
        const ParamDef* def = nullptr;
        for (const auto& d : param_defs())
          if (key == d.info.name) def = &d;
        if (def == nullptr) throw bad(fmt::format("unit '{}': unknown parameter '{}'", unit, key));
        if (unit != def->info.unit)
          throw bad(fmt::format("parameter '{}' belongs to unit '{}', not '{}'", key, def->info.unit, unit));
      }
    }
  }
  for (const auto& d : param_defs()) {
    const nlohmann::json* section = units.contains(d.info.unit) ? &units[d.info.unit] : nullptr;
    if (section == nullptr || !section->contains("params") || !(*section)["params"].contains(d.info.name))
      throw bad(fmt::format("missing parameter '{}' of unit '{}' ({})", d.info.name, d.info.unit, d.info.meaning));
    const auto& p = (*section)["params"][d.info.name];
    if (!p.is_object() || !p.contains("value") || !p["value"].is_number() || !p.contains("source") || !p["source"].is_string())
      throw bad(fmt::format("parameter '{}' must be {{\"value\": number, \"source\": \"published|measured|derived|estimate: ...\"}}",
                            d.info.name));
    for (const auto& [k, _] : p.items())
      if (k != "value" && k != "source" && k != "note") throw bad(fmt::format("parameter '{}': unknown key '{}'", d.info.name, k));
    std::string source = p["source"];
    if (!valid_source(source))
      throw bad(fmt::format("parameter '{}': source must start with published:, measured:, derived: or estimate:", d.info.name));
    m.sources[d.info.name] = source;
    double v = p["value"];
    if (v < 0) throw bad(fmt::format("parameter '{}' must not be negative", d.info.name));
    std::visit(
        [&](auto field) {
          using F = std::remove_reference_t<decltype(m.*field)>;
          if constexpr (std::is_same_v<F, std::int64_t>) {
            if (v != static_cast<double>(static_cast<std::int64_t>(v)))
              throw bad(fmt::format("parameter '{}' must be an integer", d.info.name));
            m.*field = static_cast<std::int64_t>(v);
          } else {
            m.*field = v;
          }
        },
        d.field);
  }
  if (m.sm_count < 1 || m.clock_mhz <= 0 || m.max_warps_per_sm < 1 || m.max_ctas_per_sm < 1)
    throw bad("sm_count, clock_mhz, max_warps_per_sm and max_ctas_per_sm must be positive");
  if (m.tma_bytes_per_cycle <= 0 || m.tma_store_bytes_per_cycle <= 0 || m.l2_bytes_per_cycle <= 0 || m.hbm_bytes_per_cycle <= 0 || m.lsu_bytes_per_cycle <= 0 || m.smem_bytes_per_cycle <= 0)
    throw bad("bandwidths must be positive");
  return m;
}

}  // namespace smpipe::models
