// The memory behind the SMs (L2 and HBM) as a unit with implementations chosen in the machine file
// (section "l2", key "impl"). Units that move data to or from global memory ask it when a transfer that
// can start at `start` is done: with the tensor box it touches where the op names one (TMA; cp.async and
// ld/st.global given box=), or as bytes without an address.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/block_cache.hpp"
#include "models/memory/shared_link.hpp"
#include "models/memory/transfer.hpp"

namespace isa {
struct TensorDecl;
}

namespace smpipe::models {

// The part of a tensor one TMA op reads or writes: the box `box` at coordinates `at` (outermost first, as
// in the language; the last dimension is contiguous in memory).
struct TensorAccess {
  std::int32_t tensor = 0;  // index into the program's tensors
  int rank = 0;
  std::array<std::int64_t, 5> at{}, box{};
  std::int64_t bytes = 0;   // the whole box's bytes (what the SM's engine moves)
  bool write = false;
  bool multicast = false;    // a multicast load (.multicast::cluster): read once for the CTAs of a cluster
  std::uint32_t sm = 0;      // the SM that issued it
  std::int64_t cta = 0;      // the linear id of its CTA (launch order)
  // When the SM has sent the box's last request (its engine or load path moves the box from `start` to here): the
  // parts that miss reach HBM no sooner, so an HBM read's latency adds to the box's own time through the SM (as the
  // GPU's isolated loads show: an HBM box takes a fixed time longer than the same box hitting, at every size).
  Cycle sent{0};
  // Whether HBM's latency under load (Machine::hbm_loaded_latency) applies to its misses: TMA loads, the transfers it
  // was measured with (the LSU's cp.async and global loads, whose requests the GPU issues otherwise, are not measured:
  // without it), and the latency the issuing unit already adds to the box for the load around it (a TMA load's GPC
  // share, tma_gpc_latency_cycles), which it counts in.
  bool under_load = false;
  Cycle loaded{0};
  // A TMA load: the parts of its box outside the tensor are filled with zeros, which the L2 answers
  // (l2_oob_bytes_per_cycle). The LSU's reads with a box (cp.async, ld.global) are not measured: without it.
  bool zero_fill = false;
};

// Who hears when a read started with MemoryHierarchy::read is through the memory: landed(token, done) is called
// once, at or before `done` (at the read's start where the hierarchy knows its end right away).
class Landing {
 public:
  virtual void landed(std::uint32_t token, Cycle done) = 0;

 protected:
  ~Landing() = default;
};

class MemoryHierarchy : public Unit {
 public:
  using Unit::Unit;
  std::string_view name() const override { return "l2"; }
  // When `bytes` moved between SM `sm` and global memory, issued at `start`, are through.
  virtual Cycle transfer(Cycle start, std::int64_t bytes, std::uint32_t sm) = 0;
  // The same for a tensor box; implementations without addresses count its bytes.
  virtual Cycle transfer(Cycle start, const TensorAccess& a) { return transfer(start, a.bytes, a.sm); }
  // A tensor read whose end may depend on what the memory serves after it starts (processor sharing): `to` hears
  // it. By default its end is known at the start.
  virtual void read(Cycle start, const TensorAccess& a, Landing& to, std::uint32_t token) { to.landed(token, transfer(start, a)); }
};

// When an op's `bytes` moved at `start` are through `l2`: with the box of the tensor its attribute `tensor` names
// (TMA's tensor=, cp.async's and ld.global's src=, st.global's dst=) when the op gives box=, else as bytes
// without an address. `sent`: when the SM has sent the op's last request (TensorAccess::sent).
Cycle through_l2(MemoryHierarchy& l2, const OpContext& ctx, isa::Attr tensor, Cycle start, Cycle sent, std::int64_t bytes,
                 bool write);
// The same for a TMA load, whose end `to` hears (MemoryHierarchy::read; without a box, at once); the parts of its box
// outside the tensor are zero-filled (TensorAccess::zero_fill).
void read_l2(MemoryHierarchy& l2, const OpContext& ctx, isa::Attr tensor, Cycle start, Cycle sent, std::int64_t bytes,
             Landing& to, std::uint32_t token, bool multicast = false, std::optional<Cycle> loaded = std::nullopt);

// "single_queue": the whole GPU's L2 bandwidth as one shared queue, first come first served, no addresses,
// no latency of its own (the issuing unit adds its measured latency). First-order: it cannot tell hits
// from misses, nor near from far L2 partitions.
class SingleQueueL2 : public MemoryHierarchy {
 public:
  using MemoryHierarchy::MemoryHierarchy;
  using MemoryHierarchy::transfer;
  Cycle transfer(Cycle start, std::int64_t bytes, std::uint32_t sm) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  BandwidthQueue queue_;
};

// "cache_hbm": the L2 as a cache of the tensors' blocks in front of HBM. A tensor box touches blocks of
// kBlockRows rows x kBlockBytes bytes of its tensor (an aligned 4 KB region; the tensors of a kernel are
// row-major); the L2 holds the l2_capacity_bytes most recently used blocks (LRU). Every byte a box moves
// goes through the GPU-wide L2 queue (l2_bytes_per_cycle); the bytes of blocks that miss are read from HBM
// first, through the HBM queue (hbm_bytes_per_cycle), and add hbm_latency_cycles to the box's time through the SM
// (they arrive hbm_latency_cycles after both HBM served them and the SM sent the box's last request). Stores allocate their
// blocks dirty, without reading HBM: the L2 takes stored bytes at most at l2_store_bytes_per_cycle (all SMs
// storing alone: half the read rate), and a stored byte also costs l2_store_cost bytes of l2_bytes_per_cycle
// (loads and stores side by side share the L2: validation/results/{h100,h200}/store.json); a dirty block evicted
// is written back through the HBM queue, and the box that evicted it is done no sooner than that write-back; a byte
// read or written back while HBM's recent traffic goes partly the other way costs HBM more (hbm_turnaround). Parts of
// a box outside its tensor move no memory traffic (TMA fills them with zeros). A block remembers which 64-byte
// half rows it holds: a box reads from HBM only the parts it needs that the L2 does not hold yet (a box narrower
// or shorter than a block brings its part; a later box the rest). Transfers without an address count as hits.
// The L2's work: a byte that hits costs one byte of l2_bytes_per_cycle, a byte read from HBM costs
// l2_miss_lookups (its request and its fill; measured with Nsight Compute: 1.75 L2 lookups per byte read
// from HBM against 1.03 per byte that hits, validation/results/h100/l2_combine_ncu.json and
// l2_coalescing_ncu.json).
// Combining: the SMs of a group of l2_combine_sms consecutive ids (a TPC on Hopper) reach the L2 through one
// path; a read of a block that another SM of the group started at most l2_combine_window_cycles earlier for every
// part this one needs, and whose data is not yet delivered, goes to the L2 with the requests of that read still
// outstanding: a read's requests leave evenly from its start until its data is there, so one that comes a fraction
// f of the way through joins 1 - f of its bytes (no L2 or HBM work of their own, done when that read is); the rest
// are lookups of their own. Measured: two SMs of a TPC reading the same boxes make half the L2 requests of two SMs
// reading different data while they start within ~128 ns of each other (l2_combine_adjacent_delay*).
// Combining between CTAs: a read that does not join its group's read of a block joins, for a share of its bytes still
// outstanding of it, the read of every part it needs that another CTA started at most l2_combine_window_cycles earlier
// and whose data is still coming: l2_combine_near_share when the two CTAs' linear indices (blockIdx, x fastest: the
// order the GPU launches them in) lie in one aligned block of l2_combine_block_ctas consecutive CTAs (a / block == b /
// block; what such a block is on the GPU is not known: the pairs' CTAs 0-15 ran on SMs of several GPCs, smids in
// l2_combine_ncu.json), l2_combine_far_share otherwise. Measured on pairs (H100, l2_combine_dist* and l2_combine_far*
// in l2_combine_ncu.json and l2_smpairs_ncu.json): about 0.6 for CTAs 2-8 apart, 0.4 at 12, 0.2 at 16, 0.13 at 24 and
// beyond; the pairs at 12 and 16 apart lie in one block of 16 for a third and none of the pairs (CTAs k and k + d, k in
// the first half of each run of 2d), and a block of 16 fits all the distances best (make_machines.py,
// combine_block_fit). Not in the fit (though the idea of blocks came from them): chains of CTAs 8 and 12 apart walking
// the same boxes on the H200 make 0.73 and 0.80 requests per delivered byte, as blocks of 16 give (the model 0.69 and
// 0.77; the distance rule it replaced, "12 apart or less", 0.5: validation/results/h200/sharing). Tested after the fit: CTA pairs 8
// apart combine 0.61 inside a block and 0.16 shifted across a block's edge on the H200 (validation/results/h200/blockedge).
// In a launch of clusters the near share goes to CTAs on SMs of one GPC instead (near_group): there the H200's CTAs of
// different clusters combine at the far share inside a block of 16 too, a cluster of 4's two TPCs and clusters in one
// GPC near (validation/results/h200/clusteredge), as the GPU fills a plain launch's GPCs block by block. Chosen by SM id
// rather than by CTA, non-TPC pairs combine 15-44 % and consecutive SM ids (TPCs of one GPC) hardly beyond their TPC
// pairs (l2_smpairs_ncu.json): what predicts it is the CTAs' place in launch order
// (validation/microbench/tools/combine_by_launch.py). The rest of the read's bytes are lookups of their own, of parts
// the L2 already holds or has coming (no second HBM read). Only a read that joined no other CTA's read is one others
// join, but a later reader's share is near when any CTA on that read lies in its block: its issuer or one of the last
// kJoiners CTAs that came to it (joined for a share, or found it with nothing left to join: each of their requests is
// outstanding at the L2 as well; many SMs reading the same data at once combine at the near share wherever one of them
// shares the reader's block: with every read joinable only at its issuer's share (measured with the distance rule
// before 2026-12-03), CTAs k mod 4 walking the same boxes would combine 18 % of their bytes where the GPU combines 69
// %, tma_load_bw_pipe_l2_all_sms_box32KB_shared4, and the skinny GEMMs, whose B or A tile many CTAs read at once,
// combined half of what the GPU's did; docs/accuracy.md). The table of such reads is direct-mapped by block (a read of
// another block may take an entry over, and then nothing joins the read it held).
// The L2 delivers every SM's copy of the data it reads, combined or not, at most at l2_delivery_bytes_per_cycle,
// shared round robin by the SMs with transfers in flight (measured: every SM walking the same boxes of an L2-resident
// tensor, 0.29 requests per delivered byte, lands 19.8 TB/s on the H100, 22.1 on the H200; the L2's own bandwidth
// binds first wherever requests do not combine; one SM's stage beside such a load lands in ~1,200 cycles, not behind
// the others' backlog: loadlat_*_g16/g131).
// Not modelled: a read combines more the more readers of its block have it in flight (CTAs k mod 2-6 walking the same
// boxes: the H200 0.34-0.39 requests per delivered byte, the model 0.53-0.62; tma_sharing_mod* in
// validation/results/h200/sharing); groups of 4 consecutive SMs reading together combine fully (0.32 requests per byte
// against 0.63 for a TPC and 1.25 alone, hier_l2_sharing_bw_group4 in l2_coalescing_ncu.json; the model 0.45: its two
// TPCs combine at the near share); on the GPU the share goes on fading over microseconds of lag rather than ending at
// the window (TPC 0.87 at 512 ns, 0.66 at 4 us; CTAs 4 apart 0.49, 0.23; far pairs 0.13, 0.09:
// l2_combine_lag_ncu.json); pairs of readers that are not a TPC read 1.2-1.5x the distinct bytes from HBM (the model
// reads a block once).
// At launch (RunOptions::warm_l2, the default) the L2 holds every block of the tensors the program's code names when
// they all fit in l2_capacity_bytes: what a previous launch of the same kernel leaves, as back-to-back benchmark
// launches find it (start_warm); else it starts empty. With RunOptions::l2_dirty_bytes it starts instead as a kernel
// that stored that many bytes of other data leaves it: those blocks held dirty (as many in either partition), so that
// the launch's first misses evict them and write them back to HBM (measured: GEMM0 of K1 after a kernel that wrote 42 MB
// takes 7 us more than after itself, validation/results/h100/k1_lt/k1_lt_launches.json). With
// RunOptions::l2_dirty_tensors it starts as the kernel that wrote those tensors of the program leaves them: their last
// blocks held dirty (at most that share), each in one partition; this launch reads them there and writes them back.
// Any other read of parts of a block still coming from HBM is an L2 lookup of its own that waits for that data
// (no second HBM read); parts the L2 already holds do not wait for other parts in flight.
// Under load a transfer's time varies from one box to the next (the L2's slices and HBM's channels each queue their
// own requests; the model has one queue for each): with l2_latency_spread set, a transfer's time from issue to done
// through the L2 is drawn uniformly within +-that share of what the queues give it, and a miss's through HBM within
// +-hbm_latency_spread, by the box's address and the seed (measured: the p10-p90 spread of the loaded latency of
// 32 KB boxes on all SMs, hier_loaded_latency_*_box32KB_d4, 0.25 and 0.30). The CTAs then drift apart from one
// k-block to the next as they do on the GPU (docs/replay.md). Off in the built-in machines (docs/simulator.md).

// The L2 and the crossbar serve the SMs round robin, not request by request: while n SMs have tensor
// transfers in flight each gets 1/n of l2_bytes_per_cycle (processor sharing), so a stage's latency grows
// with the number of SMs waiting for data even when the GPU-wide bandwidth is not saturated. An SM's own
// transfers follow one another on its share; the GPU-wide queue still bounds the total.
//
// With l2_processor_sharing = 1 the share is kept exact instead: at every moment each SM with reads in flight gets an
// equal share of the L2 (models/memory/shared_link.hpp), so a read that starts slows those in flight and one that ends
// speeds them up, and reads that start together end together (132 SMs that each start a stage of 32 KB at once all
// get their data after 132 x 32 KB of the L2's time, as on the GPU, not one after the other). A TMA load's end is
// then known only when it comes (MemoryHierarchy::read); a read that joins another's requests waits for that read's
// end as it comes. What the other paths (stores, cp.async, global loads) are told at their start is the end their
// share gives if no SM starts or finishes meanwhile; their work takes its share of the L2 all the same.
class CachedL2 : public MemoryHierarchy {
 public:
  static constexpr std::int64_t kBlockRows = 32, kBlockBytes = 128;
  explicit CachedL2(Simulator& sim);
  Cycle transfer(Cycle start, std::int64_t bytes, std::uint32_t sm) override;
  Cycle transfer(Cycle start, const TensorAccess& a) override;
  void read(Cycle start, const TensorAccess& a, Landing& to, std::uint32_t token) override;
  void complete(std::uint32_t target, std::uint64_t payload) override;
  void add_stats(Stats& stats, std::int64_t cycles, std::int64_t sms_used) const override;

 private:
  static constexpr std::uint32_t kNoJob = ~0u;
  // What a box does in the L2 (cache_hbm's lookups, combining, HBM), before its share of the L2's bandwidth.
  struct Plan {
    std::int64_t hit = 0, miss = 0, written = 0;
    std::int64_t outside = 0;  // read bytes of the box outside its tensor, when they cost the L2 (l2_oob_bytes_per_cycle)
    // the L2's work: bytes that hit, missed bytes x l2_miss_lookups, stores x l2_store_cost, bytes outside the tensor x
    // l2_bytes_per_cycle / l2_oob_bytes_per_cycle
    std::int64_t work = 0;
    Cycle floor;              // done no sooner (reads joined, data coming from HBM for others, its own HBM read)
    std::uint64_t box = 0;    // the box's address: what the spread of its time draws by
    std::int64_t group = 0;   // its SM's group (l2_combine_sms) and the SM's bit in it
    std::uint64_t me = 0;
    std::int64_t cta = 0, near = 0;  // its CTA and that CTA's near group
  };
  Plan plan(Cycle start, const TensorAccess& a);
  // The blocks a box read itself (plan's): the reads others may join, until `done`; `job`: its read while its end
  // is not known (processor sharing; kNoJob: none).
  void remember(const Plan& p, Cycle start, Cycle done, std::uint32_t job);
  // When SM `sm`'s share of the L2 has moved `bytes` that can start at `start`.
  Cycle fair_share(std::uint32_t sm, Cycle start, std::int64_t bytes);
  // Processor sharing (l2_processor_sharing): when `work` queued on SM `sm`'s share now would be through if no SM
  // started or finished meanwhile; `queue`: queue it (else only the estimate).
  Cycle shared(std::uint32_t sm, Cycle start, std::int64_t work, bool queue);
  void reschedule();
  void arrive(std::uint32_t job);
  void finish(std::uint32_t job);
  static std::uint64_t block_parts(std::int64_t r0, std::int64_t rows, std::int64_t c0, std::int64_t c1);
  // A block's key: tensor (8 bits), column block (20 bits), row block (36 bits); wider keys alias, which only merges
  // blocks of huge tensors.
  static std::uint64_t block_key(std::int32_t tensor, std::int64_t cb, std::int64_t rb) {
    return (static_cast<std::uint64_t>(tensor & 0xff) << 56) | ((static_cast<std::uint64_t>(cb) & 0xfffff) << 36) |
           (static_cast<std::uint64_t>(rb) & 0xfffffffffULL);
  }
  // With l2_partitions 2 a block has a copy per partition: its key with this bit set for the second. (The bit is the
  // column block's highest: it aliases only rows over 64 MB wide.)
  static constexpr std::uint64_t kPartitionBit = std::uint64_t{1} << 55;
  // The key of SM `sm`'s copy of block `key` (its partition's).
  std::uint64_t copy_key(std::uint64_t key, std::int64_t sm) const {
    return partition_of_sm_.empty() ? key : key | (partition_of_sm_[static_cast<std::size_t>(sm)] ? kPartitionBit : 0);
  }
  std::vector<char> partition_of_sm_;  // l2_partitions 2: each SM's partition (0, 1); empty: one L2
  // Which CTAs combine at the near share (near_group): in a launch of clusters on a machine with GPCs, those on SMs of
  // one GPC (gpc_of_sm_); else those in one aligned block of l2_combine_block_ctas in launch order (gpc_of_sm_ empty).
  std::vector<int> gpc_of_sm_;
  std::int64_t near_group(std::int64_t cta, std::uint32_t sm) const;
  // The L2 at launch (RunOptions::warm_l2): every block of the program's tensors when they fit in it, else nothing.
  // And the dirty start (RunOptions::l2_dirty_bytes): blocks of no tensor of the program, held dirty; or
  // (RunOptions::l2_dirty_tensors) the last blocks of those tensors of the program, held dirty.
  void start_warm(bool warm, std::int64_t dirty_bytes, const std::vector<std::string>& dirty_tensors);
  std::vector<std::string> dirty_tensors_;  // the program's tensors held dirty at launch
  std::int64_t footprint_ = 0;  // the program's tensors in whole blocks, bytes
  std::int64_t dirty_start_ = 0;  // the dirty blocks at launch, bytes
  bool dirty_capped_ = false;     // fewer than asked (l2_dirty_left_share)
  bool warm_ = false;

  BandwidthQueue l2_, hbm_, stores_;  // stores_: the L2 taking stored bytes (l2_store_bytes_per_cycle)
  std::int64_t delivered_ = 0;  // read bytes delivered (each SM's copy)
  BlockCache cache_;
  // A rate shared round robin by the SMs with transfers on it: a transfer gets 1/n of it, n the SMs with transfers in
  // flight when it is queued (its time is not re-timed as others start or end), and an SM's own transfers follow one
  // another on its share.
  struct RoundRobin {
    std::vector<Cycle> free;  // per SM: its share is busy until
    std::vector<char> busy;   // per SM: counted in n
    std::int64_t n = 0;       // SMs with transfers in flight
    Cycle last{0};            // the latest end given
    // (busy until, SM), earliest first; an entry is current while it equals `free` of its SM.
    std::priority_queue<std::pair<std::int64_t, std::uint32_t>, std::vector<std::pair<std::int64_t, std::uint32_t>>,
                        std::greater<>> ends;
    void resize(std::size_t sms) {
      free.assign(sms, Cycle(0));
      busy.assign(sms, 0);
    }
    // When SM `sm`'s share of `per_cycle` has moved `bytes` that can start at `start`.
    Cycle serve(std::uint32_t sm, Cycle start, std::int64_t bytes, double per_cycle);
  };
  RoundRobin l2_share_;        // the L2's bandwidth (l2_bytes_per_cycle)
  RoundRobin delivery_share_;  // its delivery of read bytes to the SMs (l2_delivery_bytes_per_cycle)
  std::vector<std::int32_t> fresh_;  // the blocks the current box reads itself (not merged)
  // The current box's 256-byte promotions still to apply (column block, row block, the rows that missed).
  std::vector<std::tuple<std::int64_t, std::int64_t, std::uint64_t>> promotions_;
  // The CTA table keeps, beside a read's CTA, the last kJoiners other CTAs that joined it (CachedL2's comment).
  static constexpr int kJoiners = 8;
  // A recent read of a block that later reads may join: until when they may (they start at or before), when its
  // data is delivered (after that, nothing joins it), the parts of the block it reads (a read joins only when they
  // cover its own), and who is on it.
  struct InFlightRead {
    std::uint64_t key = ~0ULL;
    std::int64_t start = 0, until = -1, done = 0;
    std::uint64_t parts = 0;
    std::uint64_t sms = 0;  // the group table: the group's SMs on it (bit: SM id mod l2_combine_sms)
    std::int64_t cta = -1;    // the CTA table: the CTA that issued it
    std::int32_t near = -1;   // ... and its near group (CachedL2::near_group; 32 bits as the joiners' CTAs)
    // the CTA table: the last CTAs that joined it and their near groups (a ring of n_joiners, next_joiner the oldest
    // once full)
    std::array<std::int32_t, kJoiners> joiners{};
    std::array<std::int32_t, kJoiners> joiner_near{};
    std::uint8_t n_joiners = 0, next_joiner = 0;
    // Whether a CTA on the read (its issuer or a joiner other than `c`) is in near group `g`, CTA `c`'s (the caller
    // never asks about a read that `c` issued itself).
    bool has_near(std::int64_t c, std::int64_t g) const {
      if (near == static_cast<std::int32_t>(g)) return true;
      for (int i = 0; i < n_joiners; ++i)
        if (joiners[static_cast<std::size_t>(i)] != c && joiner_near[static_cast<std::size_t>(i)] == static_cast<std::int32_t>(g))
          return true;
      return false;
    }
    void add_joiner(std::int64_t c, std::int64_t g) {
      joiners[next_joiner] = static_cast<std::int32_t>(c);
      joiner_near[next_joiner] = static_cast<std::int32_t>(g);
      next_joiner = static_cast<std::uint8_t>((next_joiner + 1) % kJoiners);
      n_joiners = static_cast<std::uint8_t>(std::min(n_joiners + 1, kJoiners));
    }
    std::uint32_t job = kNoJob, gen = 0;  // processor sharing: the read, while its end is not known (`done`: an estimate)
    // The share of its requests still outstanding when a read starting at `at` comes: its requests leave
    // evenly from `start` to `done`, and a later one joins only those not yet answered.
    double outstanding(Cycle at) const {
      if (done <= start || at.v <= start) return 1.0;
      return std::clamp(static_cast<double>(done - at.v) / static_cast<double>(done - start), 0.0, 1.0);
    }
  };
  // A read of the tables whose end has not come yet (processor sharing): its data is still coming, whatever `done`
  // estimated; joinable while it is, for the share of its requests outstanding as its end is projected now.
  bool in_flight(const InFlightRead& r) const;
  bool joinable(const InFlightRead& r, std::uint64_t key, Cycle at, std::uint64_t need) const;
  double outstanding(const InFlightRead& r, Cycle at) const;
  // Both tables are direct-mapped on the block's key; a read whose entry another block took over is no longer joined.
  static std::size_t slot(std::uint64_t key, int bits) {
    return static_cast<std::size_t>(((key ^ (key >> 29) ^ (key >> 41)) * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
  }
  // Each group's recent reads (a TPC has up to ~100 blocks in flight: 4-6 stages of two boxes).
  static constexpr int kRequestBits = 10;
  static constexpr std::uint64_t kRequestsPerGroup = std::uint64_t{1} << kRequestBits;
  InFlightRead& request(std::int64_t group, std::uint64_t key) {
    return requests_[static_cast<std::size_t>(group) * kRequestsPerGroup + slot(key, kRequestBits)];
  }
  std::vector<InFlightRead> requests_;  // [group * kRequestsPerGroup + slot]
  std::vector<std::pair<std::uint64_t, std::uint64_t>> issued_;  // (key, parts) of the blocks the current box reads itself
  // The GPU-wide reads other CTAs may join (combining by launch order): sized for every SM's ~100 blocks in flight.
  static constexpr int kCtaReadBits = 15;
  InFlightRead& cta_read(std::uint64_t key) { return cta_reads_[slot(key, kCtaReadBits)]; }
  std::vector<InFlightRead> cta_reads_;
  // The blocks of the rows plan() walks, in walk order: key and entries in the two tables (nullptr: not used).
  struct WalkBlock {
    std::uint64_t key;
    InFlightRead* request;
    InFlightRead* cta_read;
  };
  std::vector<WalkBlock> walk_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> owned_;  // (key, parts) of the blocks the current box reads
                                                                 // without joining another CTA's read
  // Processor sharing: the L2's share per SM, and the reads in it whose end is not known yet.
  enum Event : std::uint32_t { kArrive, kTick };
  struct Job {
    Cycle start, floor, through;
    std::uint64_t box = 0;
    std::int64_t work = 0;
    std::uint64_t order = 0;                              // issue order
    double vend = 0;                                      // its end in the link's virtual time (once arrived)
    bool arrived = false;                                 // in the link (its start has come)
    std::uint32_t sm = 0, token = 0, gen = 0, deps = 0;  // deps: joined reads not through yet
    bool through_done = false;
    Landing* to = nullptr;
    std::vector<std::uint32_t> dependents;                    // reads that joined this one
    std::vector<std::pair<bool, std::size_t>> entries;        // its table entries (group table?, index)
  };
  bool sharing_ = false;
  SharedLink link_;
  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_jobs_;
  // (virtual end, issue order, job) of the reads in the link: reads that end at once land in the order they were issued.
  using Pending = std::tuple<double, std::uint64_t, std::uint32_t>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::uint64_t issued_reads_ = 0;
  std::uint64_t tick_ = 0;  // the current tick event's number (older ones are stale)
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>> joined_;  // (job, gen, estimated end) of the reads
                                                                               // in flight the current box joined
  std::int64_t hit_bytes_ = 0, miss_bytes_ = 0, merged_bytes_ = 0, written_ = 0, written_back_ = 0, hbm_bytes_ = 0;
  std::int64_t outside_bytes_ = 0;  // read bytes of boxes outside their tensor (when they cost the L2)
  std::int64_t hbm_read_bytes_ = 0;  // of hbm_bytes_: the reads (misses and the bytes their L2 promotion brings)
  // HBM's time in bytes of hbm_bytes_per_cycle (its bytes and what turning around between reads and writes costs), and
  // its traffic by direction in buckets of hbm_latency_cycles (the current one, mix_bucket_, and the one before): hbm_cost.
  std::int64_t hbm_busy_bytes_ = 0;
  struct MixBytes {
    std::int64_t read = 0, written = 0;
  };
  MixBytes mix_cur_, mix_prev_;
  std::int64_t mix_bucket_ = 0;
  std::int64_t hbm_cost(Cycle start, std::int64_t read, std::int64_t written);
  // HBM's recent load (hbm_loaded_latency): its cost in buckets of one HBM read's latency alone.
  struct {
    std::int64_t bucket = 0, cur = 0, prev = 0;
  } hbm_load_;
  double hbm_recent_share(Cycle start);
  std::int64_t l2_work_ = 0;  // bytes of L2 bandwidth used (a missed byte counts l2_miss_lookups)
};

}  // namespace smpipe::models
