// A machine description: every number the simulator uses, with its source, grouped by the unit that uses
// it, and the implementation of each unit where there is a choice. Loaded from models/machines/NAME.json:
//   {"name": ..., "description": ..., "gpu_names": [...],
//    "units": {"sm": {"params": {...}}, "l2": {"impl": "single_queue", "params": {...}}, ...}}
// A unit, implementation or key the simulator does not know, or a missing parameter, is an error.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace smpipe::models {

struct Machine {
  std::string name;
  std::string description;
  std::string path;

  // GPU and SM resources
  std::int64_t sm_count = 0;
  double clock_mhz = 0;
  // The SM clock a GPU holds under sustained load (sustained_clock_mhz): with the tensor pipe busy on zero or
  // constant operands, and with it busy all the time on random operands (the power cap).
  double load_clock_mhz = 0;
  double load_clock_random_mhz = 0;
  // How clock_mhz was chosen, for reports ("boost clock", "sustained under load, ..."): set by api::set_clock
  // (--clock, by default sustained), not read from a file; empty with --clock-mhz or a machine loaded alone.
  std::string clock_basis;
  std::int64_t max_warps_per_sm = 0;
  std::int64_t max_ctas_per_sm = 0;
  std::int64_t registers_per_sm = 0;  // the register file: a CTA of a kernel with regs= takes its warps' registers
  std::int64_t smem_per_sm = 0;
  std::int64_t smem_per_cta_max = 0;
  std::int64_t smem_reserved_per_cta = 0;
  std::int64_t max_cluster_size = 0;
  // The GPCs a cluster is placed in ("units": {"sm": {"gpcs": {"sms": [...], "source": ...}}}, optional): SMs 0 ..
  // gpc_sms[0] - 1 form the first, the next gpc_sms[1] the second, ...; a cluster's CTAs run on SMs of one GPC. Empty:
  // a cluster may take any SMs. gpc_source: its source tag, as a parameter's.
  std::vector<std::int64_t> gpc_sms;
  std::string gpc_source;
  // Each SM's GPC (index into gpc_sms); SMs past the listed GPCs, or all of them without a list, form the last GPC.
  std::vector<int> gpc_of_sms() const;
  std::size_t gpc_count() const { return std::max<std::size_t>(1, gpc_sms.size()); }
  // Whether GPC g holds one TPC (2 SMs or fewer): the machine files list so the GPU's SMs that clusters cannot use
  // with the rest of their GPC (docs/simulator.md). Without a list, the one GPC of all the SMs.
  bool one_tpc_gpc(std::size_t g) const { return (gpc_sms.empty() ? sm_count : gpc_sms[g]) <= 2; }
  std::int64_t tmem_columns = 0;  // 0: no tensor memory (pre-Blackwell)
  std::int64_t has_wgmma = 0;     // 1 on sm90a
  std::int64_t cta_launch_cycles = 0;
  double launch_overhead_ns = 0;  // a kernel launch's fixed cost beyond its CTAs' span
  // synchronisation
  std::int64_t op_issue_cycles = 0;
  std::int64_t mbarrier_arrive_cycles = 0;
  std::int64_t mbarrier_test_wait_cycles = 0;
  std::int64_t mbarrier_wake_cycles = 0;
  std::int64_t remote_arrive_cycles = 0;
  std::int64_t named_barrier_cycles = 0;
  double named_barrier_cycles_per_warp = 0;
  std::int64_t cluster_sync_cycles = 0;
  // data movement
  std::int64_t tma_issue_cycles = 0;
  std::int64_t tma_multicast_issue_cycles = 0;  // a multicast tma.load's issue: added per destination CTA beyond the first
  std::int64_t tma_load_latency_cycles = 0;
  double tma_bytes_per_cycle = 0;  // one SM's TMA engine
  double tma_gpc_latency_cycles = 0;  // a TMA load's latency added per other SM of its GPC that loads
  double tma_gpc_latency_max_cycles = 0;  // ... at most
  double tma_store_bytes_per_cycle = 0;  // one SM's TMA engine reading smem for stores
  std::int64_t tma_store_read_cycles = 0;
  std::int64_t tma_store_latency_cycles = 0;
  double l2_bytes_per_cycle = 0;   // whole GPU
  std::int64_t l2_capacity_bytes = 0;
  double hbm_bytes_per_cycle = 0;  // whole GPU
  std::int64_t hbm_latency_cycles = 0;  // an L2 miss beyond an L2 hit
  std::int64_t l2_combine_sms = 1;      // SMs (consecutive ids) whose identical reads in flight reach the L2 as one
  std::int64_t l2_combine_window_cycles = 0;  // ... when the second starts at most this long after the first
  double l2_miss_lookups = 1;           // L2 work of a byte read from HBM, in bytes that hit
  double l2_store_cost = 1;             // L2 work of a byte a tensor store writes, in bytes that hit
  double l2_multicast_read_cost = 1;    // L2 work of a byte a multicast tensor load reads, in bytes of a unicast read
  std::int64_t l2_multicast_combines = 1;  // 1: multicast reads join and are joined by other SMs' reads as unicast ones
  std::int64_t l2_partitions = 1;  // 2: each half of the GPCs' L2 partition keeps its own copy of what its SMs read
  double l2_store_bytes_per_cycle = 0;  // whole GPU: the L2 takes at most this many stored bytes per cycle
  double l2_oob_bytes_per_cycle = 0;  // whole GPU: the L2 answers the parts of TMA load boxes outside their tensor at most this fast (0: free)
  double l2_delivery_bytes_per_cycle = 0;  // whole GPU: the L2 delivers at most this many bytes of tensor reads to the SMs, every SM's copy counted (0: no limit)
  // Combining beyond the group: a read of a block another CTA's read has in flight (started at most
  // l2_combine_window_cycles earlier) reaches the L2 with it for this share of its bytes, by the CTAs' places in
  // launch order: near (in the same aligned group of l2_combine_block_ctas consecutive CTAs: CTAs a and b with
  // a / l2_combine_block_ctas == b / l2_combine_block_ctas) or far.
  std::int64_t l2_combine_block_ctas = 0;
  double l2_combine_near_share = 0, l2_combine_far_share = 0;
  // How much a tensor transfer's time through the L2 (and, for a miss, through HBM) varies from one transfer to the
  // next under load, as a share of it (uniform in +-share; 0: every transfer takes the time its queues give it).
  double l2_latency_spread = 0, hbm_latency_spread = 0;
  // HBM moves less when reads and writes share it (the bus turns around between them): a byte served while a share x
  // of HBM's recent traffic (its last hbm_latency_cycles) goes the other way costs 1 + hbm_turnaround x bytes of
  // hbm_bytes_per_cycle (0: reads and writes mix for free).
  double hbm_turnaround = 0;
  // The most of the L2 a kernel's stores leave dirty for the next launch, as a share of l2_capacity_bytes: a dirty start
  // (RunOptions::l2_dirty_bytes, `--l2 dirty`) holds at most this much (1: the whole L2).
  double l2_dirty_left_share = 1;
  // HBM's latency under load ("units": {"l2": {"hbm_loaded_latency": {"utilisation": [...], "cycles": [...], "source":
  // ...}}}, optional; cache_hbm): a read that misses while HBM's recent traffic is a share u of hbm_bytes_per_cycle
  // arrives hbm_loaded_latency(u) cycles later than hbm_latency_cycles says, less what the model already charges it for
  // that load (its wait in the HBM queue, its GPC's tma_gpc_latency_cycles). Knots (utilisation, cycles), utilisation
  // rising; linear between them and from (0, 0), the last knot's cycles beyond it. Empty: no such latency.
  std::vector<double> hbm_loaded_utilisation, hbm_loaded_cycles;
  std::string hbm_loaded_source;
  double hbm_loaded_latency(double utilisation) const;
  // 1: the SMs with reads in flight share the L2 equally at every moment (processor sharing, re-timed as SMs start
  // and finish); 0: a transfer's share is the one it gets when it starts.
  std::int64_t l2_processor_sharing = 0;
  std::int64_t cp_async_latency_cycles = 0;
  double lsu_bytes_per_cycle = 0;  // one SM's load/store path (cp.async, ld/st.global): whole 128-byte lines of loads
  double lsu_load_min_cycles = 0;  // the least one warp's load instruction holds that path (narrow loads of 1-2 lines)
  double lsu_store_bytes_per_cycle = 0;  // the same path for stores: whole 32-byte sectors
  double lsu_partial_sector_factor = 1;  // a store's sector written in part costs this many whole ones
  double smem_bytes_per_cycle = 0;
  // st.shared: a sub-partition's queue of shared-memory store instructions not yet taken by the shared memory (the
  // warp issues on while it has room); one warp's store instructions at most at this rate; fence.proxy.async's own time
  // (after the warp's stores are written).
  std::int64_t smem_store_queue_ops = 1;
  double smem_warp_store_bytes_per_cycle = 0;
  std::int64_t fence_proxy_async_cycles = 0;
  std::int64_t global_load_latency_cycles = 0;
  // tensor cores
  std::int64_t tensor_flops_per_cycle_16bit = 0;  // dense FLOP per SM per cycle
  std::int64_t tensor_flops_per_cycle_8bit = 0;
  std::int64_t tensor_flops_per_cycle_tf32 = 0;
  std::int64_t tensor_flops_per_cycle_4bit = 0;
  std::int64_t wgmma_latency_cycles = 0;
  std::int64_t wgmma_issue_cycles = 0;       // one wgmma's issue when nothing stalls it (N <= 128)
  std::int64_t wgmma_issue_cycles_n256 = 0;  // ... N > 128
  std::int64_t wgmma_queue_depth = 0;        // wgmmas that can wait behind the one the pipe works on (0: no limit)
  std::int64_t wgmma_beside_alu_cycles = 0;  // pipe cycles a wgmma adds when issued while ALU work (mma_speed) runs on the SM
  std::int64_t mma_sync_latency_cycles = 0;
  std::int64_t mma_sync_flops_per_cycle_16bit = 0;  // mma.sync (legacy path) dense FLOP per SM per cycle
  std::int64_t umma_latency_cycles = 0;
  std::int64_t tmem_ld_cycles = 0;
  std::int64_t tmem_cp_cycles = 0;
  std::int64_t tmem_alloc_cycles = 0;
  std::int64_t clc_latency_cycles = 0;
  // global-memory synchronisation (atomics unit)
  std::int64_t atomic_latency_cycles = 0;
  std::int64_t acquire_load_latency_cycles = 0;
  std::int64_t atomic_issue_cycles = 0;
  std::int64_t release_issue_cycles = 0;
  double atomic_same_address_per_cycle = 0;  // thread-level atomics on one word the L2 applies per cycle
  std::int64_t fence_cycles = 0;
  std::int64_t spin_poll_cycles = 0;

  std::map<std::string, std::string> sources;  // parameter -> source tag
  std::map<std::string, std::string> impls;    // unit -> the implementation the file names (absent: the default)
  std::vector<std::string> gpu_names;          // device names it stands for ("H100"), matched in hardware traces

  // Dense tensor FLOP per SM per cycle for an MMA input element width.
  std::int64_t tensor_rate(int operand_bits, bool tf32) const;
};

// A section of a machine file (a unit of the simulator) and one of its implementations (models/units.cpp).
struct UnitChoice {
  std::string_view unit, impl;
};
std::vector<UnitChoice> known_units();

struct MachineParam {
  const char* unit;  // the machine-file section (a unit of the simulator) it belongs to
  const char* name;
  const char* meaning;
  bool integer;      // an integer (else any number in the range)
  double min, max;   // the range a machine file's value must lie in (both included)
  const char* why;   // why that range, where it is not obvious ("" otherwise)
};
// Every parameter with its range (models/machine.cpp has the table). A machine file is refused when a value
// has the wrong JSON type, is not an integer where one is needed, or lies outside its range: checked before
// any conversion, so that no value can wrap, and so that every time the simulator derives from the machine
// (bytes / bandwidth, cycles / clock) is finite and fits its 64-bit cycle count.
const std::vector<MachineParam>& machine_params();

// The SM clocks a machine file or --clock-mhz may give (MHz): real SM clocks are 1,000-3,000 MHz; the
// bounds keep cycles-to-time conversions and the L2 bandwidth scaling of at_sm_clock (at most 100x) finite.
inline constexpr double kMinClockMhz = 100;
inline constexpr double kMaxClockMhz = 10000;

// Constants a .pipe file may use that come from the machine: SM_COUNT.
std::map<std::string, std::int64_t> predefined_constants(const Machine& machine);

// The machine with its SM clock set to `mhz` (a GPU that ran below its nominal clock, e.g. at its power
// cap). Numbers counted in SM cycles keep their value; the GPU-wide L2 bandwidth, measured in bytes per
// second, keeps its bytes per second (so its bytes per SM cycle grow as the clock drops). An assumption:
// the L2 and the memory run on clocks of their own (docs/replay.md). `mhz` must be finite and within
// kMinClockMhz..kMaxClockMhz (else isa::InputError).
Machine at_sm_clock(const Machine& machine, double mhz);

// The SM clock the GPU holds under sustained load (MHz). Under a kernel that keeps the GPU busy the clock leaves
// its boost value (clock_mhz) for load_clock_mhz, with zero or constant operands too (the H100: ~1,800 MHz at
// ~300 W, far below its 700 W cap); random operands add the tensor cores' switching power, which takes the board to
// its power cap and the clock down to load_clock_random_mhz when the tensor pipe is busy all the time. Dynamic power
// follows the switching activity, so between the two the clock falls in proportion to `tensor_busy`, the share of the
// GPU's tensor-pipe capacity the kernel uses (its utilisation times the share of the SMs it runs on, 0..1):
//   random data:   load_clock_mhz - tensor_busy * (load_clock_mhz - load_clock_random_mhz)
//   constant data: load_clock_mhz
// and never above clock_mhz (a machine file may set its boost clock below its clocks under load).
double sustained_clock_mhz(const Machine& machine, double tensor_busy, bool random_data);

// NAME (looked up in models/machines/) or a path to a .json file (at most kMaxMachineFileBytes). Throws
// isa::InputError.
inline constexpr std::size_t kMaxMachineFileBytes = std::size_t{1} << 20;  // the built-in files are ~15 KB
Machine load_machine(const std::string& name_or_path);
// A machine description from its JSON text; `path` names it in messages. Throws isa::InputError.
Machine parse_machine(const std::string& text, const std::string& path);
std::vector<std::string> builtin_machine_names();
// The built-in machine whose gpu_names occur in a device name ("NVIDIA H100 80GB HBM3"), or "".
std::string machine_for_gpu(const std::string& device);
std::string machines_dir();
std::string kernels_dir();
// The share/smpipe folder of an installed smpipe that a program embedding the library was built against
// (the C++ API passes what find_package found): used before the source tree. Thread-safe.
void set_installed_data_dir(const std::string& dir);

}  // namespace smpipe::models
