// A hardware trace (`smpipe-hwtrace` version 1, docs/trace-format.md) read into memory: what a real kernel
// did on a real GPU, warp by warp, in the .pipe op vocabulary. Written by traces/collect.py.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smpipe::traces {

struct HwEvent {
  std::int64_t cycle = 0;  // SM cycles since the CTA's clock_start
  std::string op;          // an op, "X.end" of a blocking op X, or a marker (tile, epilogue, tail, exit)
  std::string barrier;     // "" = none
  std::optional<std::int64_t> index;
  std::optional<int> phase;
  std::int64_t bytes = 0;
  std::optional<std::int64_t> iteration;
  std::string tensor;  // "" = none
};

struct HwWarp {
  int warp = 0;
  std::string role;
  int lanes = 32;
  std::int64_t dropped = 0;
  bool window_cut = false;
  std::int64_t end = 0;
  std::vector<HwEvent> events;
};

struct HwCta {
  std::int64_t cta = 0;
  int sm = 0;
  std::int64_t clock_start = 0, clock_end = 0;
  std::int64_t globaltimer_start = 0, globaltimer_end = 0;
  std::int64_t dropped = 0;
  std::vector<HwWarp> warps;
};

struct HwBarrier {
  std::string name;
  bool named = false;         // a bar.sync id (else an mbarrier)
  std::optional<int> size;    // array length; none for a scalar
  std::int64_t count = 0;     // mbarrier arrivals per phase / named barrier threads
  int named_id = 0;
};

struct HwTensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape, box;
  int swizzle = 0;
  std::string smem;
  int l2_promotion = -1;  // bytes (0, 64, 128, 256: cuTensorMapEncodeTiled's l2Promotion); -1: the trace does not say
};

// A GEMM's problem and tiling, from params M, N, K, tile [BM, BN, BK], epilogue_tile [EM, EN] and group_m (all of
// them or none): where a tile's boxes lie, for a kernel whose tile scheduler the replay knows (docs/replay.md).
struct HwGemm {
  std::int64_t m = 0, n = 0, k = 0, bm = 0, bn = 0, bk = 0, em = 0, en = 0;
  std::int64_t group_m = 0;  // raster groups of this many m-blocks (<= 0: one group of all rows)
};

struct HwSmem {
  std::string name;
  int size = 1;
  std::int64_t bytes = 0;
};

struct HwTrace {
  std::string path;
  std::string kernel, variant, gpu, date, command;
  double sm_clock_mhz = 0;  // 0: not measured
  std::vector<HwBarrier> barriers;
  std::vector<HwTensor> tensors;
  std::vector<HwSmem> smem;
  // params the replay uses (kernel-specific in the format; absent ones take the defaults)
  std::array<std::int64_t, 3> grid{0, 0, 0};  // 0: unknown (params.grid absent)
  std::array<std::int64_t, 3> cluster{1, 1, 1};
  int warps = 0;                                // warps per CTA
  std::string wgmma_shape;                      // "m64n256k16" (params.wgmma), "" if none
  std::string wgmma_dtype = "bf16";
  std::int64_t wgmma_per_event = 1;
  std::string wgmma_a, wgmma_b;                 // smem arrays of the operands
  std::optional<HwGemm> gemm;                   // params of a GEMM (absent: not all of them given)
  // probe
  std::int64_t cta_first = 0, slots = 0, tile_limit = 0;
  bool truncated = false;
  // run
  double kernel_ms = -1;  // -1: not recorded
  std::vector<HwCta> ctas;

  const HwBarrier* barrier(const std::string& name) const;
  const HwTensor* tensor(const std::string& name) const;
  const HwSmem* smem_buffer(const std::string& name) const;
};

// What a trace may hold (docs/replay.md, "Limits"). Every count and size read from the file is checked before it
// sizes memory or a loop, every number that becomes part of the replay program before it is used, and every name
// that does is an identifier (it cannot carry text into the program --emit-pipe writes).
inline constexpr std::int64_t kMaxTraceCycle = std::int64_t{1} << 40;  // event cycles, warp ends (~9 minutes at 2 GHz)
inline constexpr std::int64_t kMaxTraceClock = std::int64_t{1} << 62;  // clock64 / %globaltimer values (ns since 1970: ~2^60.6)
inline constexpr std::size_t kMaxTraceCtas = 128;                      // recorded CTAs (the probe records a few)
inline constexpr std::size_t kMaxTraceWarps = 32;                      // warps per CTA (1024 threads)
inline constexpr std::size_t kMaxTraceDecls = 256;                     // barriers, smem buffers, tensors: each
inline constexpr std::int64_t kMaxTraceGrid = std::int64_t{1} << 31;   // CTAs in params.grid (as CUDA: x < 2^31)
inline constexpr std::int64_t kMaxTraceBytes = std::int64_t{1} << 31;  // bytes of one event or smem buffer
inline constexpr std::size_t kMaxTraceNameLength = 64;
inline constexpr int kMaxTraceJsonDepth = 32;                               // nesting of the JSON document
inline constexpr std::int64_t kMaxTraceJsonValues = std::int64_t{1} << 23;  // values in it (an event is 9; K2 8192^3: 0.7 M)

// A name the replay program can use as it is: [A-Za-z_][A-Za-z0-9_]*, at most kMaxTraceNameLength characters.
bool is_identifier(const std::string& s);

// Reads and checks a trace file: format and version, every event's op in the vocabulary, every barrier,
// tensor and buffer it names declared, indices in range, cycles non-decreasing per warp, each blocking op
// followed by its `.end`. Throws isa::InputError naming the file and the place (ctas[i].warps[j].events[k]).
HwTrace read_hwtrace(const std::string& path);
// The same from text (`name` is used in messages).
HwTrace parse_hwtrace(const std::string& text, const std::string& name);

// The ops of the format that block (each is followed by `X.end` in the trace).
bool is_blocking_op(const std::string& op);
// Markers: events that are not ops (tile, epilogue, tail, exit).
bool is_marker(const std::string& op);
// "X.end": the return of the blocking op X.
bool is_end(const std::string& op);
// What an event is, in words: "wait full" ("wait full[2]" with_index), "tma.load A", "bar.sync epi", "wgmma".
std::string event_label(const HwEvent& e, bool with_index);
// The kind of the interval from event `e` to the next event `f` of the same warp, as compare reports it: a blocking
// op's own wait ("wait full": from X to X.end), or the warp's time from one event to the next op or marker
// ("arrive empty -> wait").
std::string interval_kind(const HwEvent& e, const HwEvent& f);
// The waits a trace's `bar.sync.end` records leave out: per kind of interval that starts at one ("bar.sync.end epi ->
// st.shared"), the mean over its samples of the time from the warp's arrival (its `bar.sync` record) to the last
// arrival of the same use of the barrier (the k-th `bar.sync` of that barrier in each warp of the CTA). SASS runs
// bar.sync as BAR.SYNC.DEFER_BLOCKING: a warp gets past the instruction at once and blocks at a later one until the
// barrier completes (a clock read right after it is not held back: the bar_sync_latency microbenchmarks), so the
// probe's `bar.sync.end` comes at once and the wait lands in the interval after it.
std::map<std::string, double> deferred_barrier_waits(const HwTrace& trace);

}  // namespace smpipe::traces
