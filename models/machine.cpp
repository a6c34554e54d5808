#include "models/machine.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <fstream>
#include <nlohmann/json.hpp>
#include <variant>
#include <algorithm>
#include <cmath>

#include "isa/source.hpp"

namespace smpipe::models {

namespace {

using Field = std::variant<std::int64_t Machine::*, double Machine::*>;

// The range a parameter's value must lie in, both ends included, and why (where it is not obvious).
struct Range {
  double min, max;
  const char* why;
  // A rate whose 0 means "no limit" or "none": above 0 it must be at least this (a transfer takes bytes / rate
  // cycles: 1e-9 would make every time endless).
  double min_above_zero = 0;
};

// Ranges many parameters share.
// Latencies and issue costs, in SM cycles: real ones are 0-2,000. 10^6 cycles (0.5 ms at 2 GHz) is far beyond
// any of them and keeps every sum of them the simulator forms far from overflowing its 64-bit cycle count.
constexpr Range kCycles{0, 1e6, "SM cycles: real latencies and issue costs are 0-2,000"};
// One SM's bandwidth, bytes per SM cycle (real: 30-130). A transfer takes bytes / this cycles: a floor of 1 keeps
// that finite (no `inf`, no wrapped negative time) and no larger than its byte count.
constexpr Range kSmBytes{1, 65536, "bytes per SM cycle of one SM (real: 30-130); a transfer takes bytes / this cycles, "
                                   "so it must be at least 1 for every time to be finite"};
// The whole GPU's bandwidth (real: 1,500-5,000 bytes per SM cycle); at_sm_clock may scale it down 100x at most.
constexpr Range kGpuBytes{1, 1048576, "bytes per SM cycle of the whole GPU (real: 1,500-5,000); a transfer takes bytes / this "
                                      "cycles, so it must be at least 1 for every time to be finite"};
constexpr Range kFlops{0, 1048576, "dense FLOP per SM per cycle (real: 1,000-33,000; 0: no such rate, else at least 1)", 1};
constexpr Range kSmemBytes{0, 16777216, "bytes (real: 100-228 KB per SM)"};

struct ParamDef {
  const char* unit;  // the machine-file section (a unit of the simulator) it belongs to
  const char* name;
  const char* meaning;
  Field field;
  Range range;
};

const std::vector<ParamDef>& param_defs() {
  static const std::vector<ParamDef> defs = {
      {"sm", "sm_count", "streaming multiprocessors on the GPU", &Machine::sm_count,
       {1, 1024, "real GPUs have up to ~200 SMs; the simulator keeps state per SM"}},
      {"sm", "clock_mhz", "SM clock used to convert cycles to time", &Machine::clock_mhz,
       {kMinClockMhz, kMaxClockMhz, "MHz: real SM clocks are 1,000-3,000; time = cycles / clock"}},
      {"sm", "load_clock_mhz", "SM clock under sustained load with zero or constant operands (--clock sustained-constant)",
       &Machine::load_clock_mhz, {kMinClockMhz, kMaxClockMhz, "MHz: real SM clocks are 1,000-3,000"}},
      {"sm", "load_clock_random_mhz",
       "SM clock under sustained load with random operands and the tensor pipe busy all the time (--clock sustained)",
       &Machine::load_clock_random_mhz, {kMinClockMhz, kMaxClockMhz, "MHz: real SM clocks are 1,000-3,000"}},
      {"sm", "max_warps_per_sm", "resident warps per SM", &Machine::max_warps_per_sm, {1, 256, "real SMs hold 48-64"}},
      {"sm", "max_ctas_per_sm", "resident CTAs per SM", &Machine::max_ctas_per_sm, {1, 256, "real SMs hold 16-32"}},
      {"sm", "registers_per_sm", "32-bit registers per SM (placement: a kernel's regs= per thread, allocated per warp in units of 256)",
       &Machine::registers_per_sm, {256, 1 << 20, "real SMs have 65,536"}},
      {"sm", "smem_per_sm", "shared memory per SM, bytes", &Machine::smem_per_sm, kSmemBytes},
      {"sm", "smem_per_cta_max", "largest shared memory allocation of one CTA, bytes (at most smem_per_sm)", &Machine::smem_per_cta_max,
       kSmemBytes},
      {"sm", "smem_reserved_per_cta", "shared memory the system reserves per CTA, bytes (at most smem_per_sm)",
       &Machine::smem_reserved_per_cta, {0, 65536, "bytes (real: 1 KB)"}},
      {"sm", "max_cluster_size", "largest cluster (CTAs)", &Machine::max_cluster_size,
       {1, 16, "the largest cluster PTX allows (16, non-portable)"}},
      {"tmem", "tmem_columns", "tensor memory columns per SM (0: none)", &Machine::tmem_columns,
       {0, 512, "a multiple of 32: the allocator hands out 32-column chunks, 16 at most per SM (sm_100 has 512 columns)"}},
      {"tensor", "has_wgmma", "1 if wgmma (sm90a) exists", &Machine::has_wgmma, {0, 1, "0 or 1"}},
      {"sm", "cta_launch_cycles", "from a CTA's exit to the next CTA starting on that SM", &Machine::cta_launch_cycles, kCycles},
      {"sm", "launch_overhead_ns",
       "a kernel launch's fixed cost: from the launch to the first CTA running plus from the last CTA's exit to the kernel's completion",
       &Machine::launch_overhead_ns, {0, 1e8, "ns (real: 3,000-10,000)"}},
      {"sm", "op_issue_cycles", "issue cost of an op without its own number (fences, commits, bar.arrive)", &Machine::op_issue_cycles, kCycles},
      {"mbarrier", "mbarrier_arrive_cycles", "issue cost of a local mbarrier arrive / expect_tx", &Machine::mbarrier_arrive_cycles, kCycles},
      {"mbarrier", "mbarrier_test_wait_cycles", "one try_wait / test_wait on a barrier", &Machine::mbarrier_test_wait_cycles, kCycles},
      {"mbarrier", "mbarrier_wake_cycles", "from the completing arrive to the waiting warp resuming", &Machine::mbarrier_wake_cycles, kCycles},
      {"mbarrier", "remote_arrive_cycles", "an arrive on a peer CTA's barrier landing", &Machine::remote_arrive_cycles, kCycles},
      {"named_barrier", "named_barrier_cycles", "from the last bar.sync arrival to the waiters resuming", &Machine::named_barrier_cycles, kCycles},
      {"named_barrier", "named_barrier_cycles_per_warp", "added to named_barrier_cycles per warp the barrier expects",
       &Machine::named_barrier_cycles_per_warp, {0, 10000, "SM cycles per warp (real: ~2)"}},
      {"cluster_barrier", "cluster_sync_cycles", "cluster barrier arrive+wait once all threads arrived", &Machine::cluster_sync_cycles, kCycles},
      {"tma", "tma_issue_cycles", "issue cost of a TMA instruction", &Machine::tma_issue_cycles, kCycles},
      {"tma", "tma_multicast_issue_cycles",
       "added to a multicast tma.load's issue cost for each destination CTA beyond the first (the issuing thread is held "
       "that much longer; the engine starts as for a unicast load)",
       &Machine::tma_multicast_issue_cycles, kCycles},
      {"tma", "tma_load_latency_cycles", "TMA load: issue to complete_tx, beyond the transfer time", &Machine::tma_load_latency_cycles, kCycles},
      {"tma", "tma_bytes_per_cycle", "one SM's TMA engine bandwidth", &Machine::tma_bytes_per_cycle, kSmBytes},
      {"tma", "tma_gpc_latency_cycles",
       "TMA load issued while another load of its CTA on the same mbarrier is in flight (a stage's second box): latency "
       "added for each other SM of its GPC (unit sm's gpcs; all SMs without them) that runs a CTA that has issued TMA "
       "loads, up to tma_gpc_latency_max_cycles",
       &Machine::tma_gpc_latency_cycles, {0, 10000, "SM cycles per SM loading (H200: 17.9)"}},
      {"tma", "tma_gpc_latency_max_cycles", "the most tma_gpc_latency_cycles adds to a TMA load's latency",
       &Machine::tma_gpc_latency_max_cycles, kCycles},
      {"tma", "tma_store_bytes_per_cycle", "one SM's TMA engine reading smem for bulk stores", &Machine::tma_store_bytes_per_cycle, kSmBytes},
      {"tma", "tma_store_read_cycles", "TMA store: issue to smem read done, beyond the transfer", &Machine::tma_store_read_cycles, kCycles},
      {"tma", "tma_store_latency_cycles", "TMA store: smem read to global writes complete", &Machine::tma_store_latency_cycles, kCycles},
      {"l2", "l2_bytes_per_cycle", "whole-GPU L2 bandwidth shared by all SMs", &Machine::l2_bytes_per_cycle, kGpuBytes},
      {"l2", "l2_capacity_bytes", "L2 capacity (cache_hbm)", &Machine::l2_capacity_bytes,
       {0, 4294967296.0, "bytes (real: 40-126 MB); the cache keeps an index sized by its 4 KB blocks"}},
      {"l2", "l2_oob_bytes_per_cycle",
       "whole-GPU rate at which the L2 answers the parts of TMA load boxes outside their tensor (zeros), every SM "
       "loading them alone; they share the L2's work with its reads (cache_hbm; 0: free)",
       &Machine::l2_oob_bytes_per_cycle, {0, 1048576, "bytes per SM cycle of the whole GPU (H200: ~2,200; 0: free, else at least 1)", 1}},
      {"l2", "l2_delivery_bytes_per_cycle",
       "whole-GPU rate at which the L2 delivers tensor reads to the SMs, counting each SM's copy of data whose requests "
       "combined with others' (cache_hbm; 0: no limit)",
       &Machine::l2_delivery_bytes_per_cycle, {0, 1048576, "bytes per SM cycle of the whole GPU (H100: ~10,000; 0: no limit, else at least 1)", 1}},
      {"l2", "hbm_bytes_per_cycle", "whole-GPU HBM bandwidth behind the L2 (cache_hbm)", &Machine::hbm_bytes_per_cycle, kGpuBytes},
      {"l2", "hbm_latency_cycles", "an L2 miss: the latency an HBM read adds to an L2 hit (cache_hbm)", &Machine::hbm_latency_cycles, kCycles},
      {"l2", "l2_combine_sms",
       "SMs with consecutive ids that share one path to the L2 (a TPC): a read of a block that another of them started "
       "within l2_combine_window_cycles and whose data is still coming reaches the L2 with it (cache_hbm)",
       &Machine::l2_combine_sms, {1, 64, "SMs (Hopper: 2, a TPC; 1: no combining)"}},
      {"l2", "l2_combine_window_cycles",
       "how long after a read of a block another SM of its group (l2_combine_sms) may start the same read (at most) and "
       "still reach the L2 with it (cache_hbm)",
       &Machine::l2_combine_window_cycles, kCycles},
      {"l2", "l2_combine_block_ctas",
       "CTAs in one aligned group of this many consecutive CTAs in launch order (their linear CTA indices divided by "
       "this are equal) whose reads of the same data in flight combine for l2_combine_near_share of the later read's bytes (cache_hbm)",
       &Machine::l2_combine_block_ctas, {0, 1048576, "CTAs (H100: 16; 0: every pair far)"}},
      {"l2", "l2_combine_near_share",
       "the share of a read's bytes that reach the L2 with another CTA's read of the same block in flight, started at most "
       "l2_combine_window_cycles earlier, when the two CTAs lie in one aligned block of l2_combine_block_ctas in launch order (cache_hbm)",
       &Machine::l2_combine_near_share, {0, 1, "share of the bytes (0: none)"}},
      {"l2", "l2_combine_far_share", "the same share for CTAs in different blocks of l2_combine_block_ctas (cache_hbm)",
       &Machine::l2_combine_far_share, {0, 1, "share of the bytes (0: none)"}},
      {"l2", "l2_latency_spread",
       "how much a tensor read's or write's time through the L2 varies from one transfer to the next under load: its "
       "time from issue to done (queueing included) is drawn uniformly within +-this share of it (cache_hbm)",
       &Machine::l2_latency_spread, {0, 1, "share of the transfer's time (0: none)"}},
      {"l2", "hbm_latency_spread", "the same for the time of a read that misses, through HBM (cache_hbm)",
       &Machine::hbm_latency_spread, {0, 1, "share of the transfer's time (0: none)"}},
      {"l2", "hbm_turnaround",
       "what mixing reads and writes costs HBM: a byte read or written while a share x of HBM's traffic of the last "
       "hbm_latency_cycles went the other way takes 1 + this x bytes of hbm_bytes_per_cycle (cache_hbm)",
       &Machine::hbm_turnaround, {0, 4, "extra bytes per byte when all recent traffic went the other way (0: none; H100 0.181, H200 0.157: a 1:1 mix costs 1 + t / 2)"}},
      {"l2", "l2_dirty_left_share",
       "the most of the L2 a kernel's stores leave dirty for the next launch: a dirty start (--l2 dirty) holds at most "
       "this share of l2_capacity_bytes (cache_hbm)",
       &Machine::l2_dirty_left_share, {0, 1, "share of the L2 (1: all of it; H100 ~0.42)"}},
      {"l2", "l2_processor_sharing",
       "1: the SMs with tensor reads in flight share the L2's bandwidth equally at every moment (reads that start together "
       "end together); 0: a read's share is fixed when it starts, by the SMs busy then (cache_hbm)",
       &Machine::l2_processor_sharing, {0, 1, "0 or 1"}},
      {"l2", "l2_miss_lookups", "the L2's work for a byte read from HBM, in bytes that hit (its request and its fill; cache_hbm)",
       &Machine::l2_miss_lookups, {1, 16, "bytes of L2 bandwidth per missed byte (H100: 1.7)"}},
      {"l2", "l2_store_cost", "the L2's work for a byte a tensor store writes, in bytes of l2_bytes_per_cycle that hit (cache_hbm)",
       &Machine::l2_store_cost, {0, 16, "bytes of L2 bandwidth per stored byte (H100: 1.4)"}},
      {"l2", "l2_multicast_read_cost",
       "the L2's work for a byte a multicast tensor load (.multicast::cluster) reads, in bytes of a unicast read (cache_hbm)",
       &Machine::l2_multicast_read_cost, {1, 16, "bytes of L2 bandwidth per multicast byte read (H200: 1.11)"}},
      {"l2", "l2_multicast_combines",
       "1: a multicast tensor load's read joins other SMs' reads of the same data in flight and is joined by them, as a "
       "unicast one; 0: neither (cache_hbm)",
       &Machine::l2_multicast_combines, {0, 1, "0 or 1"}},
      {"l2", "l2_partitions",
       "1: one L2 that every SM reads; 2: two partitions, the SMs of the first half of the GPCs reading through one and the "
       "rest through the other, each keeping its own copy of a block its SMs read (a block both halves read takes its "
       "room twice; a block the other partition holds is read from there, not from HBM) (cache_hbm)",
       &Machine::l2_partitions, {1, 2, "1 or 2"}},
      {"l2", "l2_store_bytes_per_cycle", "the most bytes of tensor stores the whole GPU's L2 takes per cycle, reads or not (cache_hbm)",
       &Machine::l2_store_bytes_per_cycle, kGpuBytes},
      {"lsu", "cp_async_latency_cycles", "cp.async issue to data in smem, beyond the transfer", &Machine::cp_async_latency_cycles, kCycles},
      {"lsu", "lsu_bytes_per_cycle", "one SM's global load/store path: loads and cp.async of whole 128-byte lines (a line touched in part costs a whole one)", &Machine::lsu_bytes_per_cycle, kSmBytes},
      {"lsu", "lsu_load_min_cycles", "the least time one warp's global load instruction holds that path", &Machine::lsu_load_min_cycles,
       {0, 1000, "SM cycles (real: 3-4)"}},
      {"lsu", "lsu_store_bytes_per_cycle", "that path for global stores, in whole 32-byte sectors", &Machine::lsu_store_bytes_per_cycle,
       kSmBytes},
      {"lsu", "lsu_partial_sector_factor", "what a store's sector written in part costs, in whole sectors",
       &Machine::lsu_partial_sector_factor, {1, 16, "whole sectors per partial one (H100: 2)"}},
      {"lsu", "smem_bytes_per_cycle", "one SM's shared memory bandwidth", &Machine::smem_bytes_per_cycle, kSmBytes},
      {"lsu", "smem_store_queue_ops",
       "st.shared: the store instructions (512 bytes each) of an SM sub-partition's warps that may wait for the shared "
       "memory; a warp issues its stores on while its sub-partition's queue has room",
       &Machine::smem_store_queue_ops, {1, 1024, "instructions (H200: 9)"}},
      {"lsu", "smem_warp_store_bytes_per_cycle", "st.shared: the most bytes one warp's stores write per cycle",
       &Machine::smem_warp_store_bytes_per_cycle, kSmBytes},
      {"lsu", "fence_proxy_async_cycles", "fence.proxy.async: cycles after the warp's st.shared writes are done",
       &Machine::fence_proxy_async_cycles, kCycles},
      {"lsu", "global_load_latency_cycles", "ld.global latency (L2 hit)", &Machine::global_load_latency_cycles, kCycles},
      {"tensor", "tensor_flops_per_cycle_16bit", "dense f16/bf16 FLOP per SM per cycle", &Machine::tensor_flops_per_cycle_16bit, kFlops},
      {"tensor", "tensor_flops_per_cycle_8bit", "dense 8-bit FLOP per SM per cycle", &Machine::tensor_flops_per_cycle_8bit, kFlops},
      {"tensor", "tensor_flops_per_cycle_tf32", "dense tf32 FLOP per SM per cycle", &Machine::tensor_flops_per_cycle_tf32, kFlops},
      {"tensor", "tensor_flops_per_cycle_4bit", "dense 4-bit FLOP per SM per cycle (0: not supported)", &Machine::tensor_flops_per_cycle_4bit,
       kFlops},
      {"tensor", "wgmma_latency_cycles", "wgmma: end of its tensor-pipe occupancy to its group completing", &Machine::wgmma_latency_cycles,
       kCycles},
      {"tensor", "wgmma_issue_cycles", "wgmma: a warpgroup's issue of one wgmma with N <= 128 when the pipe's queue has room",
       &Machine::wgmma_issue_cycles, kCycles},
      {"tensor", "wgmma_issue_cycles_n256", "wgmma: the same for N > 128", &Machine::wgmma_issue_cycles_n256, kCycles},
      {"tensor", "wgmma_queue_depth",
       "wgmma: how many issued wgmmas can wait behind the one the SM's tensor pipe works on; a warpgroup's next wgmma "
       "issues only when the one that many places earlier has started (0: no limit)",
       &Machine::wgmma_queue_depth, {0, 64, "wgmmas (Hopper: 6); the simulator keeps that many start times per SM"}},
      {"tensor", "wgmma_beside_alu_cycles",
       "wgmma: tensor-pipe cycles a wgmma takes beyond its FLOP when it issues while ALU work of the SM runs beside it "
       "(compute ops with mma_speed below 100)",
       &Machine::wgmma_beside_alu_cycles, kCycles},
      {"tensor", "mma_sync_latency_cycles", "mma.sync: dependent-issue latency", &Machine::mma_sync_latency_cycles, kCycles},
      {"tensor", "mma_sync_flops_per_cycle_16bit", "mma.sync dense 16-bit FLOP per SM per cycle (all four sub-partitions)",
       &Machine::mma_sync_flops_per_cycle_16bit, kFlops},
      {"tensor", "umma_latency_cycles", "tcgen05.mma: end of occupancy to completion", &Machine::umma_latency_cycles, kCycles},
      {"tmem", "tmem_ld_cycles", "tcgen05.ld/st of 32 lanes x 32 bit x 32 columns", &Machine::tmem_ld_cycles, kCycles},
      {"tmem", "tmem_cp_cycles", "tcgen05.cp of 128x256b", &Machine::tmem_cp_cycles, kCycles},
      {"tmem", "tmem_alloc_cycles", "tcgen05.alloc / dealloc when columns are free", &Machine::tmem_alloc_cycles, kCycles},
      {"clc", "clc_latency_cycles", "try_cancel issue to the response landing", &Machine::clc_latency_cycles, kCycles},
      {"atomics", "atomic_latency_cycles", "atom on a global word (L2): issue to the result back (the word changes halfway)",
       &Machine::atomic_latency_cycles, kCycles},
      {"atomics", "acquire_load_latency_cycles", "ld.acquire/ld.relaxed of a global word (L2): round trip (also each poll's, in a spin)",
       &Machine::acquire_load_latency_cycles, kCycles},
      {"atomics", "atomic_issue_cycles", "red / st.relaxed: cycles before the warp issues again", &Machine::atomic_issue_cycles, kCycles},
      {"atomics", "release_issue_cycles", "the release fence of red/st/atom .release: cycles before the request leaves and the warp issues again",
       &Machine::release_issue_cycles, kCycles},
      {"atomics", "atomic_same_address_per_cycle", "thread-level atomics on one word the L2 applies per cycle (they go one after another)",
       &Machine::atomic_same_address_per_cycle,
       {0.01, 10000, "per SM cycle (real: ~22); each atomic holds the word 1 / this cycles, so it must be positive"}},
      {"atomics", "spin_poll_cycles", "a spin loop of ld.acquire: cycles from one poll to the next", &Machine::spin_poll_cycles, kCycles},
      {"atomics", "fence_cycles", "fence.acq_rel.gpu (__threadfence): cycles before the warp issues again", &Machine::fence_cycles, kCycles},
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
    for (const auto& d : param_defs())
      r.push_back({d.unit, d.name, d.meaning, std::holds_alternative<std::int64_t Machine::*>(d.field), d.range.min, d.range.max,
                   d.range.why});
    return r;
  }();
  return v;
}

std::vector<int> Machine::gpc_of_sms() const {
  std::vector<int> of;
  for (std::size_t g = 0; g < gpc_sms.size(); ++g) of.insert(of.end(), static_cast<std::size_t>(gpc_sms[g]), static_cast<int>(g));
  of.resize(static_cast<std::size_t>(sm_count), static_cast<int>(gpc_count()) - 1);
  return of;
}

double Machine::hbm_loaded_latency(double u) const {
  if (hbm_loaded_utilisation.empty() || !(u > 0)) return 0;
  double x0 = 0, y0 = 0;
  for (std::size_t i = 0; i < hbm_loaded_utilisation.size(); ++i) {
    const double x1 = hbm_loaded_utilisation[i], y1 = hbm_loaded_cycles[i];
    if (u <= x1) return y0 + (y1 - y0) * (u - x0) / (x1 - x0);
    x0 = x1, y0 = y1;
  }
  return y0;
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

namespace {
std::mutex installed_mutex;
std::string installed_dir;  // set_installed_data_dir

// Where the built-in models or machines (`sub`: kernels, machines) are: the environment variable `env` when
// set; else beside an installed binary, PREFIX/share/smpipe/SUB for PREFIX/bin/smpipe (`cmake --install`);
// else where the installed package a program was built against lives (the C++ API); else the source tree the
// binary was built from, or when that is gone the configured install prefix.
std::string data_dir(const char* env, const char* sub) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* e = std::getenv(env)) {
    // a variable pointing nowhere would list no machines or models and fail every name: say so where it is read
    if (!fs::is_directory(e, ec))
      throw isa::InputError(fmt::format("{} is set to '{}', which is not a folder (it names the folder of the built-in {}; "
                                        "unset it to use those installed with smpipe)",
                                        env, isa::printable(e), sub));
    return e;
  }
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "smpipe" / sub;
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  {
    std::lock_guard<std::mutex> lock(installed_mutex);
    if (!installed_dir.empty() && fs::is_directory(fs::path(installed_dir) / sub, ec)) return installed_dir + "/" + sub;
  }
  std::string source = std::string(SMPIPE_SOURCE_DIR) + "/models/" + sub;
  std::string prefix = std::string(SMPIPE_INSTALL_DATA_DIR) + "/" + sub;
  if (!fs::is_directory(source, ec) && fs::is_directory(prefix, ec)) return prefix;
  return source;
}
}  // namespace

void set_installed_data_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(installed_mutex);
  installed_dir = dir;
}

std::string machines_dir() { return data_dir("SMPIPE_MACHINES", "machines"); }

std::string kernels_dir() { return data_dir("SMPIPE_KERNELS", "kernels"); }

std::vector<std::string> builtin_machine_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(machines_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine at_sm_clock(const Machine& machine, double mhz) {
  auto clock_ok = [](double c) { return std::isfinite(c) && c >= kMinClockMhz && c <= kMaxClockMhz; };
  if (!clock_ok(mhz))
    throw isa::InputError(fmt::format("an SM clock of {} MHz is not in {}..{} MHz (real SM clocks are 1000-3000 MHz)", mhz,
                                      kMinClockMhz, kMaxClockMhz));
  if (!clock_ok(machine.clock_mhz))
    throw isa::InputError(fmt::format("machine '{}' has an SM clock of {} MHz, not in {}..{} MHz", isa::printable(machine.name),
                                      machine.clock_mhz, kMinClockMhz, kMaxClockMhz));
  // Both clocks within 100..10000 MHz: the bandwidths scale by 1/100 .. 100, so they stay positive and finite.
  Machine m = machine;
  m.l2_bytes_per_cycle = machine.l2_bytes_per_cycle * machine.clock_mhz / mhz;
  m.hbm_bytes_per_cycle = machine.hbm_bytes_per_cycle * machine.clock_mhz / mhz;
  m.l2_store_bytes_per_cycle = machine.l2_store_bytes_per_cycle * machine.clock_mhz / mhz;
  m.l2_delivery_bytes_per_cycle = machine.l2_delivery_bytes_per_cycle * machine.clock_mhz / mhz;
  // The L2's combining window is a time (measured in ns, stored in cycles of the file's clock).
  m.l2_combine_window_cycles = static_cast<std::int64_t>(
      std::llround(static_cast<double>(machine.l2_combine_window_cycles) * mhz / machine.clock_mhz));
  m.clock_mhz = mhz;
  m.sources["clock_mhz"] = fmt::format("set: {} MHz (the machine file says {})", mhz, machine.clock_mhz);
  m.sources["l2_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  m.sources["hbm_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  m.sources["l2_store_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  m.sources["l2_delivery_bytes_per_cycle"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  m.sources["l2_combine_window_cycles"] = fmt::format("scaled to the {} MHz SM clock", mhz);
  return m;
}

double sustained_clock_mhz(const Machine& machine, double tensor_busy, bool random_data) {
  double u = random_data ? std::clamp(std::isfinite(tensor_busy) ? tensor_busy : 0.0, 0.0, 1.0) : 0.0;
  // Never above the machine's own clock (its boost clock): a machine file may set that lower than its clocks
  // under load.
  return std::min(machine.clock_mhz, machine.load_clock_mhz - u * (machine.load_clock_mhz - machine.load_clock_random_mhz));
}

Machine load_machine(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::string path = name_or_path;
  if (path.size() < 5 || path.substr(path.size() - 5) != ".json") {
    path = machines_dir() + "/" + name_or_path + ".json";
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw isa::InputError(fmt::format("unknown machine '{}' (built-in: {}; or give a .json file)", isa::printable(name_or_path),
                                        fmt::join(builtin_machine_names(), ", ")));
  }
  return parse_machine(isa::read_input_file(path, "machine file", kMaxMachineFileBytes), path);
}

namespace {

// Text a machine file may hold: no control characters (a name or a source is printed on one line), at most
// `max` bytes; `ascii`: printable ASCII only (names matched against CUDA's device names).
std::string text_problem(const std::string& s, std::size_t max, bool ascii) {
  if (s.size() > max) return fmt::format("is {} bytes long, more than {}", s.size(), max);
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return "contains a control character";
    else if (ascii && c > 0x7e) return "contains a character that is not printable ASCII";
  return "";
}

// A number as the user wrote it ("1e+30", "132"), cut short if long.
std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

}  // namespace

Machine parse_machine(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    // nlohmann refuses numbers beyond a double's range (1e400: "number overflow") here too.
    throw isa::InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  Machine m;
  m.path = path;
  auto bad = [&](const std::string& msg) { return isa::InputError(fmt::format("{}: {}", path, msg)); };
  // The "source" (tagged, bounded text) and optional "note" of a parameter or of the GPC list, named `what` in errors.
  auto sourced = [&](const nlohmann::json& entry, const std::string& what) {
    std::string source = entry["source"];
    if (!valid_source(source)) throw bad(fmt::format("{}: source must start with published:, measured:, derived: or estimate:", what));
    if (auto problem = text_problem(source, 4096, false); !problem.empty()) throw bad(fmt::format("{}: source {}", what, problem));
    if (entry.contains("note") && (!entry["note"].is_string() || !text_problem(entry["note"], 4096, false).empty()))
      throw bad(fmt::format("{}: \"note\" must be a string of at most 4096 bytes without control characters", what));
    return source;
  };
  if (!j.is_object()) throw bad("expected a JSON object");
  if (j.contains("params") && !j.contains("units"))
    throw bad("this machine file lists its parameters flat under \"params\" (the format before units): group them by unit "
              "under \"units\", e.g. \"units\": {\"sm\": {\"params\": {\"sm_count\": ...}}, \"l2\": {\"impl\": \"single_queue\", "
              "\"params\": {...}}} (docs/simulator.md, Machine files; the built-in machines show every unit)");
  for (const auto& [key, value] : j.items())
    if (key != "name" && key != "description" && key != "gpu_names" && key != "units")
      throw bad(fmt::format("unknown key '{}'", isa::printable(key)));
  if (!j.contains("name") || !j["name"].is_string()) throw bad("missing \"name\" (a string)");
  m.name = j["name"];
  if (m.name.empty()) throw bad("\"name\" is empty");
  if (auto p = text_problem(m.name, 64, true); !p.empty()) throw bad(fmt::format("\"name\" {} (at most 64 printable ASCII characters)", p));
  if (j.contains("description")) {
    if (!j["description"].is_string()) throw bad("\"description\" must be a string");
    m.description = j["description"];
    if (auto p = text_problem(m.description, 4096, false); !p.empty()) throw bad(fmt::format("\"description\" {}", p));
  }
  if (j.contains("gpu_names")) {
    if (!j["gpu_names"].is_array()) throw bad("\"gpu_names\" must be a list of strings");
    if (j["gpu_names"].size() > 16) throw bad(fmt::format("\"gpu_names\" lists {} names, more than 16", j["gpu_names"].size()));
    for (std::size_t i = 0; i < j["gpu_names"].size(); ++i) {
      const auto& g = j["gpu_names"][i];
      if (!g.is_string() || g.get<std::string>().empty()) throw bad("\"gpu_names\" must be a list of non-empty strings");
      if (auto p = text_problem(g.get<std::string>(), 64, true); !p.empty())
        throw bad(fmt::format("\"gpu_names\"[{}] {} (at most 64 printable ASCII characters)", i, p));
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
      throw bad(fmt::format("unknown unit '{}' (units: {})", isa::printable(unit), fmt::join(unit_names, ", ")));
    if (!section.is_object()) throw bad(fmt::format("unit '{}' must be an object", unit));
    for (const auto& [k, v] : section.items())
      if (k != "impl" && k != "params" && k != "note" && !(k == "gpcs" && unit == "sm") && !(k == "hbm_loaded_latency" && unit == "l2"))
        throw bad(fmt::format("unit '{}': unknown key '{}'", unit, isa::printable(k)));
    if (section.contains("note") && (!section["note"].is_string() || !text_problem(section["note"], 4096, false).empty()))
      throw bad(fmt::format("unit '{}': \"note\" must be a string of at most 4096 bytes without control characters", unit));
    if (section.contains("impl")) {
      if (!section["impl"].is_string()) throw bad(fmt::format("unit '{}': \"impl\" must be a string", unit));
      std::string impl = section["impl"];
      std::vector<std::string> impls;
      for (const UnitChoice& k : known)
        if (k.unit == unit) impls.emplace_back(k.impl);
      if (std::find(impls.begin(), impls.end(), impl) == impls.end())
        throw bad(fmt::format("unit '{}' has no implementation '{}' (known: {})", unit, isa::printable(impl), fmt::join(impls, ", ")));
      m.impls[unit] = impl;
    }
    if (section.contains("params")) {
      if (!section["params"].is_object()) throw bad(fmt::format("unit '{}': \"params\" must be an object", unit));
      for (const auto& [key, value] : section["params"].items()) {
        const ParamDef* def = nullptr;
        for (const auto& d : param_defs())
          if (key == d.name) def = &d;
        if (def == nullptr) throw bad(fmt::format("unit '{}': unknown parameter '{}'", unit, isa::printable(key)));
        if (unit != def->unit) throw bad(fmt::format("parameter '{}' belongs to unit '{}', not '{}'", key, def->unit, unit));
      }
    }
  }
  for (const auto& d : param_defs()) {
    const nlohmann::json* section = units.contains(d.unit) ? &units[d.unit] : nullptr;
    if (section == nullptr || !section->contains("params") || !(*section)["params"].contains(d.name))
      throw bad(fmt::format("missing parameter '{}' of unit '{}' ({}); the built-in machine files in {} have every "
                            "parameter with its source: a file written before the parameter existed can take it from the "
                            "one closest to its GPU",
                            d.name, d.unit, d.meaning, machines_dir()));
    const auto& p = (*section)["params"][d.name];
    if (!p.is_object() || !p.contains("value") || !p["value"].is_number() || !p.contains("source") || !p["source"].is_string())
      throw bad(fmt::format("parameter '{}' must be {{\"value\": number, \"source\": \"published|measured|derived|estimate: ...\"}}",
                            d.name));
    for (const auto& [k, _] : p.items())
      if (k != "value" && k != "source" && k != "note")
        throw bad(fmt::format("parameter '{}': unknown key '{}'", d.name, isa::printable(k)));
    m.sources[d.name] = sourced(p, fmt::format("parameter '{}'", d.name));
    // The value: its range is checked on the double, before any conversion (1e30 cannot wrap an integer field).
    const nlohmann::json& jv = p["value"];
    const double v = jv.is_number_unsigned()  ? static_cast<double>(jv.get<std::uint64_t>())
                     : jv.is_number_integer() ? static_cast<double>(jv.get<std::int64_t>())
                                              : jv.get<double>();
    const bool integer = std::holds_alternative<std::int64_t Machine::*>(d.field);
    const std::string why = *d.range.why ? fmt::format(" ({})", d.range.why) : "";
    if (!std::isfinite(v) || v < d.range.min || v > d.range.max)
      throw bad(fmt::format("parameter '{}' of unit '{}' is {}: it must be {} from {} to {}{}", d.name, d.unit, shown(jv),
                            integer ? "an integer" : "a number", d.range.min, d.range.max, why));
    if (v > 0 && v < d.range.min_above_zero)
      throw bad(fmt::format("parameter '{}' of unit '{}' is {}: it must be 0 or from {} to {}{}", d.name, d.unit, shown(jv),
                            d.range.min_above_zero, d.range.max, why));
    if (integer && v != std::floor(v))
      throw bad(fmt::format("parameter '{}' of unit '{}' is {}: it must be an integer", d.name, d.unit, shown(jv)));
    std::visit(
        [&](auto field) {
          using F = std::remove_reference_t<decltype(m.*field)>;
          if constexpr (std::is_same_v<F, std::int64_t>)
            m.*field = static_cast<std::int64_t>(v);  // integral and within the range: exact
          else
            m.*field = v;
        },
        d.field);
  }
  // The GPCs (optional): positive SM counts, in SM order, that add up to sm_count (a cluster larger than every GPC is
  // refused when a kernel asks for one).
  if (units.contains("sm") && units["sm"].contains("gpcs")) {
    const nlohmann::json& g = units["sm"]["gpcs"];
    if (!g.is_object() || !g.contains("sms") || !g["sms"].is_array() || !g.contains("source") || !g["source"].is_string())
      throw bad("unit 'sm': \"gpcs\" must be {\"sms\": [SMs of each GPC, in SM order], \"source\": \"published|measured|derived|estimate: ...\"}");
    for (const auto& [k, _] : g.items())
      if (k != "sms" && k != "source" && k != "note") throw bad(fmt::format("unit 'sm': \"gpcs\": unknown key '{}'", isa::printable(k)));
    const nlohmann::json& sms = g["sms"];
    if (sms.empty() || sms.size() > 1024) throw bad("unit 'sm': \"gpcs\": \"sms\" must list 1 to 1024 GPCs");
    std::int64_t total = 0;
    for (const auto& n : sms) {
      if (!n.is_number_integer() || n.get<std::int64_t>() < 1 || n.get<std::int64_t>() > 1024)
        throw bad(fmt::format("unit 'sm': \"gpcs\": {} is not an SM count (an integer from 1 to 1024)", shown(n)));
      m.gpc_sms.push_back(n.get<std::int64_t>());
      total += m.gpc_sms.back();
    }
    if (total != m.sm_count)
      throw bad(fmt::format("unit 'sm': \"gpcs\" hold {} SMs in all, but sm_count is {} (a machine with other SMs lists its "
                            "own GPCs, or none: then a cluster takes any SMs)",
                            total, m.sm_count));
    m.gpc_source = sourced(g, "unit 'sm': \"gpcs\"");
  }
  // HBM's latency under load (optional): knots of utilisation (rising, in (0, 2]) and cycles (0 .. 100000).
  if (units.contains("l2") && units["l2"].contains("hbm_loaded_latency")) {
    const nlohmann::json& h = units["l2"]["hbm_loaded_latency"];
    const char* form =
        "unit 'l2': \"hbm_loaded_latency\" must be {\"utilisation\": [rising shares of hbm_bytes_per_cycle], \"cycles\": [as many "
        "latencies], \"source\": \"published|measured|derived|estimate: ...\"}";
    if (!h.is_object() || !h.contains("utilisation") || !h["utilisation"].is_array() || !h.contains("cycles") ||
        !h["cycles"].is_array() || !h.contains("source") || !h["source"].is_string())
      throw bad(form);
    for (const auto& [k, _] : h.items())
      if (k != "utilisation" && k != "cycles" && k != "source" && k != "note")
        throw bad(fmt::format("unit 'l2': \"hbm_loaded_latency\": unknown key '{}'", isa::printable(k)));
    const nlohmann::json &us = h["utilisation"], &cs = h["cycles"];
    if (us.empty() || us.size() > 64 || us.size() != cs.size())
      throw bad(fmt::format("unit 'l2': \"hbm_loaded_latency\" needs 1 to 64 knots, as many utilisations as cycles ({} and {})",
                            us.size(), cs.size()));
    for (std::size_t i = 0; i < us.size(); ++i) {
      const double prev = i == 0 ? 0.0 : m.hbm_loaded_utilisation.back();
      if (!us[i].is_number() || !(us[i].get<double>() > prev) || !(us[i].get<double>() <= 2))
        throw bad(fmt::format("unit 'l2': \"hbm_loaded_latency\": utilisation {} must be a number above {} and at most 2 (rising)",
                              shown(us[i]), prev));
      if (!cs[i].is_number() || !(cs[i].get<double>() >= 0) || !(cs[i].get<double>() <= 100000))
        throw bad(fmt::format("unit 'l2': \"hbm_loaded_latency\": cycles {} must be a number from 0 to 100000", shown(cs[i])));
      m.hbm_loaded_utilisation.push_back(us[i].get<double>());
      m.hbm_loaded_cycles.push_back(cs[i].get<double>());
    }
    m.hbm_loaded_source = sourced(h, "unit 'l2': \"hbm_loaded_latency\"");
  }
  // Rules between parameters.
  if (m.smem_per_cta_max > m.smem_per_sm)
    throw bad(fmt::format("smem_per_cta_max ({}) is larger than smem_per_sm ({})", m.smem_per_cta_max, m.smem_per_sm));
  if (m.smem_reserved_per_cta > m.smem_per_sm)
    throw bad(fmt::format("smem_reserved_per_cta ({}) is larger than smem_per_sm ({})", m.smem_reserved_per_cta, m.smem_per_sm));
  if (m.tmem_columns % 32 != 0)
    throw bad(fmt::format("tmem_columns ({}) must be a multiple of 32 (the allocator's chunk)", m.tmem_columns));
  return m;
}

}  // namespace smpipe::models
