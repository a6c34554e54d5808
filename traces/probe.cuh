// smpipe device-side capture probe: per-warp event records of a kernel's pipeline ops, for replay in the
// simulator (docs/trace-format.md; decoded by traces/collect.py).  Header-only, CUDA C++, no atomics.
//
// Switched on at compile time with -DSMPIPE_PROBE=1.  When it is off (the default) every SMPIPE_PROBE_*
// macro expands to nothing, its arguments are not evaluated, and no probe code or data is generated.
//
// How it records (when on):
//   - The host gives the kernel one buffer in global memory (smpipe_probe::host_setup) and chooses the
//     recorded CTAs (linear CTA ids [cta_first, cta_first + slots)), the records each warp may keep
//     (capacity), and a tile window (tile_limit: only the first N tiles of each warp; 0 = all).
//   - Every warp of a recorded CTA records into its own array; the write position lives in a register
//     (no atomics, no shared memory); records beyond the capacity are counted, not written (dropped).
//   - A record is 16 bytes, one 16-byte streaming store by lane 0: the cycle (low 32 bits of clock64; the
//     warp header keeps the full clock64 at the warp's start, to unwrap against), the op tag, barrier id,
//     index, phase, tensor id, bytes, iteration.  Only lane 0 keeps a write position, so a warp records
//     its probe calls made while lane 0 is active (all of them in a kernel whose single-thread roles run
//     on lane 0, as K2's do); calls made by other lanes alone record nothing.
//   - Blocking ops are recorded twice, before (WAIT) and after (WAIT_END), so that hardware wait times
//     can be set beside simulated ones.  Two fused tags keep the wgmma issue path short: WGMMA_FENCED
//     (wgmma.fence then the wgmma batch) and WGMMA_COMMIT_WAIT (wgmma.commit then wgmma.wait N).
//   - Headers: the CTA's (blockIdx, %smid, clock64 and %globaltimer at start, by thread 0) and each
//     warp's (clock64 base, clock64 and %globaltimer at the warp's end, records attempted, window cut).
//     The CTA's end is the latest end of its warps (the collector computes it: no barrier is added).
//
// Cost (K2 GEMM on an H100, validation/results/h100/k2_probe_overhead.json): a record is about ten
// instructions and ~55 cycles of its warp's time (the smallest gap between two records in the traces; more
// when the warp's memory pipe is busy); probe points that record nothing cost a not-taken branch, but the larger kernel still ran
// ~2 % (8192^3) to ~13 % (2048^3, one tile per CTA) slower.  Rules that came out of the measurements:
// (1) no probe branch between wgmma.fence and wgmma.commit, or ptxas fences the wgmma pipeline (C7519,
// "warpgroup.arrive is injected"): record before the fence and after the commit (the fused tags);
// (2) few records on a loop's critical path.  Tried and slower on K2: staging records in the lanes'
// registers and flushing them in batches (+44 %: the selects cost more than the stores), branch-free
// predicated stores (+7 % recording nothing), running K2's single-thread roles on their whole warp.
//
// Raw buffer layout (little endian; version kRawVersion; traces/collect.py reads exactly this):
//   [0, 64)  global header (written by the host):  u32 magic 'SMPB' (0x42504d53), u32 version (2 when sampled),
//            u32 record_bytes (16), u32 slots, u32 warps_per_cta, u32 capacity, u32 cta_first,
//            u32 tile_limit, u32 cta_header_bytes (64), u32 warp_header_bytes (32), u32 kb_sample (0 or 1:
//            every k-block; N: only the k-blocks kb % N == 0 of the SMPIPE_PROBE_KB records), 20 bytes zero.
//   slot i at 64 + i * slot_bytes, slot_bytes = 64 + warps*32 + warps*capacity*16:
//     CTA header (64 B):  u32 written (1), u32 block x, y, z, u32 smid, u32 nsmid, u64 clock64 start,
//                         u64 globaltimer start (ns), 24 bytes zero.
//     warp headers (32 B each):  u64 clock64 base, u64 clock64 end (0: the warp never finished), u64
//                         globaltimer end, u32 n = the records of the warp's window, EXIT included (the
//                         first min(n, capacity) are stored; the rest are dropped), u32 window cut (0: the
//                         window did not close; else 1 + the records before it closed: the warp's
//                         records stop there, EXIT follows them).
//     records (capacity x 16 B per warp), record = 4 x u32:
//       w0 cycle: low 32 bits of clock64; full value = base + ((w0 - (u32) base) mod 2^32)
//          (valid while a warp runs under 2^32 cycles, ~2 s)
//       w1 op (bits 0-7) | barrier id (8-15, 0xFF none) | index (16-23, 0xFF none) |
//          phase (24-25: 0, 1, 3 = none) | tensor id (26-29, 0 none) | 0 (30-31)
//       w2 bytes   w3 iteration (int32, -1 = none)
#pragma once

#include <cstdint>

#ifndef SMPIPE_PROBE
#define SMPIPE_PROBE 0
#endif

#if defined(__CUDACC__)
#define SMPIPE_PROBE_HD __host__ __device__ __forceinline__
#else
#define SMPIPE_PROBE_HD inline
#endif

namespace smpipe_probe {

constexpr uint32_t kMagic = 0x42504d53u;  // "SMPB"
constexpr uint32_t kRawVersion = 1;
// A buffer whose k-blocks are sampled (kb_sample > 1) says version 2, so that a collector that does not know the
// sampling word refuses it rather than reading it as a whole trace.
constexpr uint32_t kRawVersionSampled = 2;
constexpr uint32_t kRecordBytes = 16, kGlobalHeaderBytes = 64, kCtaHeaderBytes = 64, kWarpHeaderBytes = 32;
constexpr uint32_t kNone = 0xFFu;  // no barrier / no index
constexpr uint32_t kNoPhase = 3u;

// Op tags.  Names (traces/collect.py, docs/trace-format.md) follow the .pipe op vocabulary; *_END tags
// mark the return of the blocking op recorded just before; markers (TILE ...) are not ops.
enum Op : uint32_t {
  WAIT = 1,               // mbarrier wait (try_wait.parity loop) starts; phase = parity waited for
  WAIT_END = 2,           //   ... and returns
  ARRIVE = 3,             // mbarrier.arrive (every executing lane)
  ARRIVE_EXPECT_TX = 4,   // mbarrier.arrive.expect_tx; bytes = tx
  EXPECT_TX = 5,          // mbarrier.expect_tx; bytes = tx
  TMA_LOAD = 6,           // cp.async.bulk.tensor global -> shared, complete_tx on the barrier; bytes = box bytes
  TMA_STORE = 7,          // cp.async.bulk.tensor shared -> global (bulk group); bytes = box bytes
  TMA_COMMIT = 8,         // cp.async.bulk.commit_group
  TMA_WAIT = 9,           // cp.async.bulk.wait_group N (index = N)
  TMA_WAIT_END = 10,
  TMA_WAIT_READ = 11,     // cp.async.bulk.wait_group.read N (index = N)
  TMA_WAIT_READ_END = 12,
  WGMMA_FENCE = 13,       // wgmma.fence
  WGMMA = 14,             // a batch of wgmma.mma_async (how many and what shape: the trace's params)
  WGMMA_COMMIT = 15,      // wgmma.commit_group
  WGMMA_WAIT = 16,        // wgmma.wait_group N (index = N)
  WGMMA_WAIT_END = 17,
  BAR_SYNC = 18,          // bar.sync (named barrier)
  BAR_SYNC_END = 19,
  FENCE_PROXY_ASYNC = 20,
  LD_SHARED = 21,         // generic-proxy shared-memory reads start; bytes = this warp's bytes
  ST_SHARED = 22,         // generic-proxy shared-memory writes start (with the math that feeds them)
  COMPUTE = 23,           // ALU work starts
  TILE = 24,              // marker: a new tile starts (iteration = tile index)
  EPILOGUE = 25,          // marker: the tile's epilogue starts
  TAIL = 26,              // marker: the pipeline tail (producer / load / store tail) starts
  EXIT = 27,              // marker: the warp leaves the kernel (recorded if there is room)
  WGMMA_FENCED = 28,      // fused: wgmma.fence, then the wgmma batch (index = stage); one cycle for both
  WGMMA_COMMIT_WAIT = 29, // fused: wgmma.commit, then wgmma.wait N (index = N) starts; recorded after the commit
  OP_COUNT = 30
};

// What the host passes to the kernel (through a __constant__ variable, so kernel signatures stay as they are).
struct Config {
  unsigned char* buf;   // nullptr: nothing recorded
  uint32_t slots;       // CTAs recorded
  uint32_t cta_first;   // first linear CTA id recorded
  uint32_t warps_per_cta;
  uint32_t capacity;    // records per warp
  uint32_t tile_limit;  // 0: all tiles
  uint32_t kb_sample;   // > 1: a kernel's k-block records (SMPIPE_PROBE_KB) only of every kb_sample-th k-block
};

SMPIPE_PROBE_HD size_t slot_bytes(uint32_t warps, uint32_t capacity) {
  return size_t(kCtaHeaderBytes) + size_t(warps) * kWarpHeaderBytes + size_t(warps) * capacity * kRecordBytes;
}
SMPIPE_PROBE_HD size_t buffer_bytes(uint32_t slots, uint32_t warps, uint32_t capacity) {
  return kGlobalHeaderBytes + size_t(slots) * slot_bytes(warps, capacity);
}

}  // namespace smpipe_probe

#if SMPIPE_PROBE

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

namespace smpipe_probe {

// In the constant bank: the record code reads the buffer address as an instruction operand.
static __constant__ Config g_config;

// Per-thread probe state: two registers.  Meaningful in lane 0 only: the other lanes have e = 0.
struct Warp {
  uint32_t o;  // byte offset from g_config.buf of the warp's next record (advances by 16 per record)
  uint32_t e;  // records are stored while o < e: the end of the warp's array; 0 = not recording
};

// The "memory" clobber keeps plain C++ loads and stores (K2's epilogue smem traffic) on their side of a
// probe point; volatile asm keeps its order among the kernel's other volatile asm anyway.  (Dropping the
// clobbers was measured: no faster.)
__device__ __forceinline__ unsigned long long clock64_ordered() {
  unsigned long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ uint32_t smid() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t nsmid() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t linear_cta() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
__device__ __forceinline__ uint32_t linear_warp() {
  return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >> 5;
}
// Start of this CTA's slot, or nullptr when the CTA is not recorded.
__device__ __forceinline__ unsigned char* slot_of(const Config& c) {
  const uint32_t s = linear_cta() - c.cta_first;  // unsigned: CTAs before cta_first wrap to large values
  if (c.buf == nullptr || s >= c.slots) return nullptr;
  return c.buf + kGlobalHeaderBytes + size_t(s) * slot_bytes(c.warps_per_cta, c.capacity);
}
__device__ __forceinline__ unsigned char* records_of(const Config& c, unsigned char* slot, uint32_t warp) {
  return slot + kCtaHeaderBytes + size_t(c.warps_per_cta) * kWarpHeaderBytes + size_t(warp) * c.capacity * kRecordBytes;
}
__device__ __forceinline__ unsigned long long* warp_header(const Config& c, unsigned char* slot, uint32_t warp) {
  (void)c;
  return reinterpret_cast<unsigned long long*>(slot + kCtaHeaderBytes + warp * kWarpHeaderBytes);
}

// Called by every thread at kernel entry (before any role branch).
__device__ __forceinline__ void init(Warp& w) {
  const Config& c = g_config;
  const uint32_t warp = linear_warp(), lane = threadIdx.x & 31u;
  unsigned char* slot = slot_of(c);
  const unsigned long long now = clock64_ordered();
  w.o = w.e = 0;
  if (slot == nullptr || warp >= c.warps_per_cta || lane != 0) return;
  w.o = static_cast<uint32_t>(records_of(c, slot, warp) - c.buf);
  w.e = w.o + c.capacity * kRecordBytes;
  warp_header(c, slot, warp)[0] = now;
  if (warp == 0) {
    uint32_t* h = reinterpret_cast<uint32_t*>(slot);
    h[1] = blockIdx.x;
    h[2] = blockIdx.y;
    h[3] = blockIdx.z;
    h[4] = smid();
    h[5] = nsmid();
    reinterpret_cast<unsigned long long*>(slot)[3] = now;
    reinterpret_cast<unsigned long long*>(slot)[4] = globaltimer();
    h[0] = 1;
  }
}

__device__ __forceinline__ uint32_t pack(uint32_t op, uint32_t tensor, uint32_t bar, uint32_t idx, uint32_t phase) {
  return (op & 0xFFu) | ((bar & 0xFFu) << 8) | ((idx & 0xFFu) << 16) | ((phase & 3u) << 24) | ((tensor & 15u) << 26);
}

// One record (lane 0 of a recorded warp; a not-taken branch everywhere else).  The cycle is the low 32
// bits of clock64; the collector unwraps it against the warp's base.
__device__ __forceinline__ void record(Warp& w, uint32_t op, uint32_t tensor, uint32_t bar, uint32_t idx,
                                       uint32_t phase, uint32_t bytes, int32_t iter) {
  if (w.o < w.e) {
    const uint32_t t = static_cast<uint32_t>(clock64_ordered());
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(g_config.buf + w.o), "r"(t),
                 "r"(pack(op, tensor, bar, idx, phase)), "r"(bytes), "r"(static_cast<uint32_t>(iter))
                 : "memory");
  }
  w.o += kRecordBytes;  // counts records past the capacity too (they are dropped)
}

// Whether k-block `kb`'s records are kept (Config::kb_sample): every k-block unless sampling.
__device__ __forceinline__ bool kb_recorded(int32_t kb) {
  const uint32_t n = g_config.kb_sample;
  return n <= 1u || static_cast<uint32_t>(kb) % n == 0u;
}

// A tile starts; `ordinal` is its position in the CTA's tile sequence, from 0 (a pingpong consumer warpgroup sees every
// other one).  At the end of the tile window (the first tile at or past tile_limit) the warp stops recording (until
// EXIT) and notes in its header where the window ended.
__device__ __forceinline__ void tile(Warp& w, int32_t tile_index, uint32_t ordinal) {
  const Config& c = g_config;
  if (w.e != 0u && c.tile_limit != 0u && ordinal >= c.tile_limit) {
    unsigned char* slot = slot_of(c);
    const uint32_t warp = linear_warp();
    const uint32_t done = (w.o - static_cast<uint32_t>(records_of(c, slot, warp) - c.buf)) / kRecordBytes;
    reinterpret_cast<uint32_t*>(warp_header(c, slot, warp))[7] = done + 1u;  // w.e != 0: this is lane 0
    w.e = 0;
  }
  record(w, TILE, 0, kNone, kNone, kNoPhase, 0, tile_index);
}

// Called by every thread at the very end of the kernel (every path must reach it): records EXIT (after
// the last record kept, if there is room) and writes the warp's end header.
__device__ __forceinline__ void finish(Warp& w) {
  const Config& c = g_config;
  const uint32_t warp = linear_warp();
  unsigned char* slot = slot_of(c);
  if (slot == nullptr || warp >= c.warps_per_cta || (threadIdx.x & 31u) != 0) return;
  unsigned long long* wh = warp_header(c, slot, warp);
  const uint32_t base = static_cast<uint32_t>(records_of(c, slot, warp) - c.buf);
  const uint32_t attempted = (w.o - base) / kRecordBytes;
  const uint32_t cut = reinterpret_cast<volatile uint32_t*>(wh)[7];
  const uint32_t at = cut ? cut - 1u : attempted;  // EXIT goes right after the records of the window
  Warp x{base + at * kRecordBytes, base + c.capacity * kRecordBytes};
  record(x, EXIT, 0, kNone, kNone, kNoPhase, 0, -1);
  wh[1] = clock64_ordered();
  wh[2] = globaltimer();
  reinterpret_cast<uint32_t*>(wh)[6] = at + 1u;  // records of the window, EXIT included (kept: min(this, capacity))
}

// ---------------------------------------------------------------------------------------------------
// Host side: allocate the buffer with its global header, point the kernel's g_config at it, read it back.
// Only the translation unit that includes this header with SMPIPE_PROBE=1 sees g_config; call these from it.
// ---------------------------------------------------------------------------------------------------
struct HostBuffer {
  unsigned char* dev = nullptr;
  size_t bytes = 0;
  Config cfg{};
};

// Returns cudaSuccess or the first error.  slots = 0 or warps = 0 leaves recording off (buf = nullptr).
inline cudaError_t host_setup(HostBuffer& hb, uint32_t slots, uint32_t cta_first, uint32_t warps,
                              uint32_t capacity, uint32_t tile_limit, uint32_t kb_sample = 1) {
  if (buffer_bytes(slots, warps, capacity) >= (size_t(1) << 32)) return cudaErrorInvalidValue;  // 32-bit offsets
  Config c{};
  c.slots = slots;
  c.cta_first = cta_first;
  c.warps_per_cta = warps;
  c.capacity = capacity;
  c.tile_limit = tile_limit;
  c.kb_sample = kb_sample;
  const size_t bytes = (slots && warps && capacity) ? buffer_bytes(slots, warps, capacity) : 0;
  if (bytes > hb.bytes) {
    if (hb.dev) cudaFree(hb.dev);
    hb.dev = nullptr;
    hb.bytes = 0;
    cudaError_t e = cudaMalloc(&hb.dev, bytes);
    if (e != cudaSuccess) return e;
    hb.bytes = bytes;
  }
  if (bytes) {
    cudaError_t e = cudaMemset(hb.dev, 0, bytes);
    if (e != cudaSuccess) return e;
    uint32_t h[16] = {kMagic, kb_sample > 1 ? kRawVersionSampled : kRawVersion, kRecordBytes, slots, warps, capacity, cta_first, tile_limit,
                      kCtaHeaderBytes, kWarpHeaderBytes, kb_sample, 0, 0, 0, 0, 0};
    e = cudaMemcpy(hb.dev, h, sizeof h, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return e;
    c.buf = hb.dev;
  }
  hb.cfg = c;
  return cudaMemcpyToSymbol(g_config, &c, sizeof c);
}

// Copies the used part of the buffer (header + all slots) to the host.
inline cudaError_t host_read(const HostBuffer& hb, std::vector<unsigned char>& out) {
  const size_t bytes = hb.cfg.buf ? buffer_bytes(hb.cfg.slots, hb.cfg.warps_per_cta, hb.cfg.capacity) : 0;
  out.resize(bytes);
  if (!bytes) return cudaSuccess;
  return cudaMemcpy(out.data(), hb.dev, bytes, cudaMemcpyDeviceToHost);
}

inline void host_free(HostBuffer& hb) {
  if (hb.dev) cudaFree(hb.dev);
  hb = HostBuffer{};
}

}  // namespace smpipe_probe

// -------- instrumentation macros (on) --------
#define SMPIPE_PROBE_ONLY(...) __VA_ARGS__
#define SMPIPE_PROBE_INIT(w) \
  ::smpipe_probe::Warp w;     \
  ::smpipe_probe::init(w)
// op without a tensor: SMPIPE_PROBE_REC(w, WAIT, bar_id, index, phase, bytes, iteration)
#define SMPIPE_PROBE_REC(w, op, bar, idx, phase, bytes, iter) \
  ::smpipe_probe::record(w, ::smpipe_probe::op, 0u, (bar), (idx), (phase), (bytes), (iter))
// op on a tensor (TMA): SMPIPE_PROBE_REC_T(w, TMA_LOAD, tensor_id, bar_id, index, phase, bytes, iteration)
#define SMPIPE_PROBE_REC_T(w, op, tensor, bar, idx, phase, bytes, iter) \
  ::smpipe_probe::record(w, ::smpipe_probe::op, (tensor), (bar), (idx), (phase), (bytes), (iter))
// a tile starts: its index (recorded) and the warp's tile count so far from 0 (for the tile window)
#define SMPIPE_PROBE_TILE(w, tile_index, ordinal) ::smpipe_probe::tile(w, (tile_index), (ordinal))
#define SMPIPE_PROBE_FINISH(w) ::smpipe_probe::finish(w)
// a record of k-block kb, kept only for the sampled k-blocks (Config::kb_sample) when the kernel is built with
// SMPIPE_PROBE_KB_SAMPLING; otherwise always kept, with no branch of its own (the check costs the kernel time)
#if SMPIPE_PROBE_KB_SAMPLING
#define SMPIPE_PROBE_KB(kb, record)           \
  do {                                        \
    if (::smpipe_probe::kb_recorded(kb)) record; \
  } while (0)
#else
#define SMPIPE_PROBE_KB(kb, record) record
#endif

#else  // SMPIPE_PROBE off: every macro is empty

#define SMPIPE_PROBE_ONLY(...)
#define SMPIPE_PROBE_INIT(w)
#define SMPIPE_PROBE_REC(w, op, bar, idx, phase, bytes, iter)
#define SMPIPE_PROBE_REC_T(w, op, tensor, bar, idx, phase, bytes, iter)
#define SMPIPE_PROBE_TILE(w, tile_index, ordinal)
#define SMPIPE_PROBE_FINISH(w)
#define SMPIPE_PROBE_KB(kb, record)

#endif  // SMPIPE_PROBE
