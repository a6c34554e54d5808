// TMA store bandwidth and latency under load (part of the "hierarchy" group; measurement names hier_store_*;
// selectable alone with --only store). Data for the write path of a memory model: an epilogue that writes its
// output tile with cp.async.bulk.tensor stores from smem and waits with cp.async.bulk.wait_group.read before it
// reuses a buffer (CUTLASS's PipelineTmaStore).
//
//  1. Store ring, all SMs (1 CTA per SM, 200 KB smem): one thread per CTA issues TMA 2D stores from D smem
//     buffers (commit per store; before reusing buffer s: wait_group.read D-1), D = 1, 2, 4, three box kinds:
//     64 x 256 bf16 (32 KB) and 64 x 64 (8 KB) of a 64-column tensor (128 B rows, 128B swizzle, contiguous in
//     global), and K2's epilogue subtile, 32 columns x 128 rows (8 KB, 64B swizzle) of an 8192-column tensor
//     (each box row = 64 B of a 16 KB global row). Footprints: "l2" = each CTA rewrites its own 128 KB region
//     (16.5 MB in all), "hbm" = each CTA writes 16 MiB of fresh boxes (2.1 GB per rep, L2 cleaned first).
//     Bandwidth until the last wait_group.read 0 returns (_read_gbs) and until wait_group 0 returns
//     (_complete_gbs); per-store issue -> buffer-released latency.
//  2. The same with one CTA (one SM), and the isolated latency of one store: issue -> wait_group.read 0 ->
//     wait_group 0.
//  3. Mixed: all SMs stream TMA loads from a 2 GiB tensor (32 KB boxes, 4 in flight, as hier_loaded_bw_hbm)
//     while storing the same number of bytes to fresh regions (32 KB boxes x 2 buffers, or K2 subtiles x 2),
//     from two threads (independent) or from one thread that alternates (coupled).
// Data check: the destination is poisoned (0xFF) before every rep; after the last rep a kernel compares 9
// elements of every box written (the last write of it) with the expected value; 4 elements of every 16th
// loaded box are compared with the source pattern in the mixed kernel.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "common.cuh"
#include "tma_util.cuh"

namespace mb {
namespace {

const std::string G = "hierarchy";

constexpr int kStDyn = 200 * 1024 + 1024;  // > half the SM's smem: one CTA per SM
constexpr int kStLatCap = 1024;             // ring latency samples per CTA (smem)
constexpr int kStRecW = 12;                 // u64 words per CTA in the ring record
constexpr int kMixRecW = 12;                // u64 words per CTA in the mixed record
constexpr int kTags = 8;                    // tag of smem buffer s of CTA k = k * kTags + s
constexpr int kLat1N = 1016, kLat1Warm = 16;

template <int N>
DEVI void bulk_wait_read_n() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Box geometry of a store tensor: bf16 [rows][W], box [box_h][box_w], swizzle swz bytes (0, 64 or 128).
// Box index gb (row-major over boxes) -> x = (gb % bpr) * box_w, y = (gb / bpr) * box_h, bpr = W / box_w.
struct Geo {
  const char* tag;
  int box_w, box_h, swz, W;
  int bpr() const { return W / box_w; }
  int bytes() const { return box_w * box_h * 2; }
};

// Value of element (r, c) of a box written from the smem buffer with tag t.
__host__ __device__ inline uint16_t st_val(uint32_t t, uint32_t r, uint32_t c, int box_h) {
  return pattern(t * static_cast<uint32_t>(box_h) + r, c);
}

// Byte offset of element (r, c) in a smem box of rows of box_w bf16 written/read by the TMA with swizzle swz
// (16-byte chunk index XOR address bits 7-9 (128B) / 7-8 (64B); buffer 1024-byte aligned).
__device__ inline uint32_t box_off(uint32_t r, uint32_t c, int box_w, int swz) {
  uint32_t o = r * static_cast<uint32_t>(box_w) * 2u + c * 2u;
  if (swz == 128)
    o ^= ((o >> 7) & 7u) << 4;
  else if (swz == 64)
    o ^= ((o >> 7) & 3u) << 4;
  return o;
}

// All threads of the CTA: buffer s (of n) <- the box image of tag tag0 + s.
__device__ void fill_store_bufs(unsigned char* buf, int n, int box_w, int box_h, int swz, uint32_t tag0) {
  const int per = box_w * box_h;
  for (int e = threadIdx.x; e < n * per; e += blockDim.x) {
    const int s = e / per, q = e % per;
    const uint32_t r = q / box_w, cc = q % box_w;
    *reinterpret_cast<uint16_t*>(buf + static_cast<size_t>(s) * per * 2 + box_off(r, cc, box_w, swz)) =
        st_val(tag0 + s, r, cc, box_h);
  }
}

struct StArgs {
  int box_w, box_h, W, bytes, swz;
  int iters;             // stores per CTA
  int region;            // boxes in the CTA's region; store i writes box i % region of it
  long long cta_stride;  // boxes between the regions of consecutive CTAs
  int lat_from, lat_to;  // stores [from, to) record their latency
  uint32_t* lat;         // [cta][kStLatCap]
  unsigned long long* rec;
};

// First box of CTA k's region -> (x0, y0).
DEVI void region_origin(const StArgs& a, int& x0, int& y0) {
  const long long b0 = static_cast<long long>(blockIdx.x) * a.cta_stride;
  const int bpr = a.W / a.box_w;
  x0 = static_cast<int>(b0 % bpr) * a.box_w;
  y0 = static_cast<int>(b0 / bpr) * a.box_h;
}

// Thread 0 of each CTA: store i (i = 0..iters-1) from buffer s = i % D to box i % region of the CTA's region:
// [i >= D: wait_group.read D-1 (store i-D, the last user of buffer s, has read it); its latency = clock64 now -
// clock64 at its issue]; t_iss = clock64; cp.async.bulk.tensor.2d store; commit_group. At the end:
// wait_group.read 0 (t_read), wait_group 0 (t_complete). The smem buffers are written once before the timed
// region and never changed.
template <int D>
__global__ void __launch_bounds__(128, 1) k_store_ring(const __grid_constant__ CUtensorMap map, const StArgs a) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ uint32_t lat_s[kStLatCap];
  unsigned char* buf = align1024(dyn_raw);
  fill_store_bufs(buf, D, a.box_w, a.box_h, a.swz, blockIdx.x * kTags);
  fence_proxy_async_smem();  // generic smem writes -> visible to the async proxy (TMA)
  __syncthreads();
  if (threadIdx.x != 0) return;
  prefetch_tmap(&map);
  const uint32_t sbase = smem_u32(buf);
  int x0, y0;
  region_origin(a, x0, y0);
  int x = x0, y = y0, j = 0, nlat = 0;
  unsigned long long t_iss[D];
#pragma unroll
  for (int s = 0; s < D; ++s) t_iss[s] = 0;
  unsigned long long wait_cyc = 0, issue_cyc = 0;
  const unsigned long long g0 = gtime(), c0 = clk();
  for (int i = 0; i < a.iters; i += D) {
#pragma unroll
    for (int s = 0; s < D; ++s) {
      const int it = i + s;
      if (it < a.iters) {
        if (it >= D) {
          const unsigned long long tw = clk();
          bulk_wait_read_n<D - 1>();
          const unsigned long long t = clk();
          wait_cyc += t - tw;
          const int prev = it - D;
          if (prev >= a.lat_from && prev < a.lat_to && nlat < kStLatCap) lat_s[nlat++] = static_cast<uint32_t>(t - t_iss[s]);
        }
        t_iss[s] = clk();
        tma_store_2d(&map, x, y, sbase + static_cast<uint32_t>(s * a.bytes));
        bulk_commit();
        issue_cyc += clk() - t_iss[s];
        if (++j == a.region) {
          j = 0;
          x = x0;
          y = y0;
        } else if ((x += a.box_w) >= a.W) {
          x = 0;
          y += a.box_h;
        }
      }
    }
  }
  const unsigned long long c_is = clk();
  bulk_wait_read_n<0>();
  const unsigned long long g_rd = gtime(), c_rd = clk();
  bulk_wait0();
  const unsigned long long g_dn = gtime(), c_dn = clk();
  uint32_t* lat = a.lat + static_cast<size_t>(blockIdx.x) * kStLatCap;
  for (int k = 0; k < nlat; ++k) lat[k] = lat_s[k];
  unsigned long long* r = a.rec + static_cast<size_t>(blockIdx.x) * kStRecW;
  r[0] = g0;
  r[1] = g_rd;
  r[2] = g_dn;
  r[3] = c_rd - c0;
  r[4] = c_dn - c0;
  r[5] = smid();
  r[6] = static_cast<unsigned long long>(nlat);
  r[7] = wait_cyc;
  r[8] = issue_cyc;
  r[9] = c_is - c0;
  r[10] = static_cast<unsigned long long>(a.iters);
  r[11] = 0;
}

using StoreKernel = void (*)(CUtensorMap, StArgs);
StoreKernel store_kernel(int D) {
  switch (D) {
    case 1: return k_store_ring<1>;
    case 2: return k_store_ring<2>;
    case 4: return k_store_ring<4>;
    default: throw std::runtime_error("k_store_ring: unsupported D " + std::to_string(D));
  }
}

// One CTA, thread 0: kLat1N isolated stores of one box (buffer of tag 0) to box i % region of the region at box 0:
// t0; store; commit; t1; wait_group.read 0; t2; wait_group 0; t3. Samples kept in smem, copied out at the end.
__global__ void __launch_bounds__(128, 1) k_store_lat1(const __grid_constant__ CUtensorMap map, const StArgs a,
                                                     uint32_t* out) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ uint32_t s_out[3 * kLat1N];
  unsigned char* buf = align1024(dyn_raw);
  fill_store_bufs(buf, 1, a.box_w, a.box_h, a.swz, 0);
  fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x != 0) return;
  prefetch_tmap(&map);
  const uint32_t src = smem_u32(buf);
  int x = 0, y = 0, j = 0;
  for (int i = 0; i < a.iters && i < kLat1N; ++i) {
    const unsigned long long t0 = clk();
    tma_store_2d(&map, x, y, src);
    bulk_commit();
    const unsigned long long t1 = clk();
    bulk_wait_read_n<0>();
    const unsigned long long t2 = clk();
    bulk_wait0();
    const unsigned long long t3 = clk();
    s_out[3 * i] = static_cast<uint32_t>(t1 - t0);
    s_out[3 * i + 1] = static_cast<uint32_t>(t2 - t0);
    s_out[3 * i + 2] = static_cast<uint32_t>(t3 - t0);
    if (++j == a.region) {
      j = 0;
      x = 0;
      y = 0;
    } else if ((x += a.box_w) >= a.W) {
      x = 0;
      y += a.box_h;
    }
  }
  for (int i = 0; i < 3 * a.iters && i < 3 * kLat1N; ++i) out[i] = s_out[i];
}

// Mixed load + store. Loads: DL slots of lbox_rows x 64 bf16 (128B swizzle), CTA k reads boxes
// [k * lslice, + liters) of the load tensor in order. Stores: as k_store_ring (D = DS, streaming region of
// liters * spl boxes), spl stores per load. coupled = 0: thread 0 runs the loads, thread 32 (another warp) the
// stores; coupled = 1: thread 0 alternates (wait load slot, re-issue it, then spl x (wait_group.read DS-1, store)).
struct MixArgs {
  int lbytes, lbox_rows, liters;
  long long lslice;
  int box_w, box_h, W, sbytes, swz, spl;
  long long cta_stride;
  int coupled;
  int lwrap, swrap;  // > 0: the CTA's loads (stores) cycle over its first lwrap (swrap) boxes: an L2-resident mix
  unsigned long long* rec;
};

template <int DL, int DS>
__global__ void __launch_bounds__(64, 1) k_mixed(const __grid_constant__ CUtensorMap lmap,
                                                 const __grid_constant__ CUtensorMap smap, const MixArgs a,
                                                 unsigned* err) {
  extern __shared__ unsigned char dyn_raw[];
  __shared__ __align__(8) uint64_t bars[DL];
  unsigned char* lbuf = align1024(dyn_raw);
  unsigned char* sbuf = lbuf + static_cast<size_t>(DL) * a.lbytes;
  fill_store_bufs(sbuf, DS, a.box_w, a.box_h, a.swz, blockIdx.x * kTags);
  const uint32_t bar0 = smem_u32(&bars[0]);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < DL; ++k) mbar_init(bar0 + 8u * k, 1);
    fence_mbar_init();
  }
  fence_proxy_async_smem();
  __syncthreads();
  const bool ld = threadIdx.x == 0;
  const bool st = a.coupled ? threadIdx.x == 0 : threadIdx.x == 32;
  if (!ld && !st) return;
  if (ld) prefetch_tmap(&lmap);
  if (st) prefetch_tmap(&smap);
  const uint32_t lb0 = smem_u32(lbuf), sb0 = smem_u32(sbuf);
  StArgs sa{};
  sa.box_w = a.box_w;
  sa.box_h = a.box_h;
  sa.W = a.W;
  sa.cta_stride = a.cta_stride;
  int x0, y0;
  region_origin(sa, x0, y0);
  int x = x0, y = y0, s_issued = 0;
  long long lb = static_cast<long long>(blockIdx.x) * a.lslice;
  int l_issued = 0, l_done = 0, chk = 16;
  unsigned bad = 0;
  int y_s[DL];
  const unsigned long long g0 = gtime(), c0 = clk();
  if (ld) {
#pragma unroll
    for (int s = 0; s < DL; ++s) {
      y_s[s] = 0;
      if (l_issued < a.liters) {
        y_s[s] = static_cast<int>((a.lwrap ? lb - l_issued + l_issued % a.lwrap : lb) * a.lbox_rows);
        mbar_arrive_expect_tx(bar0 + 8u * s, a.lbytes);
        tma_load_2d(lb0 + static_cast<uint32_t>(s * a.lbytes), &lmap, 0, y_s[s], bar0 + 8u * s);
        ++lb;
        ++l_issued;
      }
    }
  }
  uint32_t ph = 0;
  bool ok = true;
  unsigned long long g_lend = 0;
  for (int i = 0; i < a.liters && ok; i += DL) {
#pragma unroll
    for (int s = 0; s < DL; ++s) {
      if (i + s < a.liters && ok) {
        if (ld) {
          const uint32_t fb = bar0 + 8u * s;
          ok = mbar_wait<WAIT_TRY>(fb, ph, err);
          if (ok) {
            ++l_done;
            if (--chk == 0) {
              chk = 16;
              const unsigned char* bp = lbuf + static_cast<size_t>(s) * a.lbytes;
              const uint32_t rs[2] = {0u, static_cast<uint32_t>(a.lbox_rows - 1)}, cs[2] = {0u, 61u};
              for (uint32_t r : rs)
                for (uint32_t cc : cs)
                  if (*reinterpret_cast<const volatile uint16_t*>(bp + swz128(r, cc)) != pattern(y_s[s] + r, cc)) ++bad;
              fence_proxy_async_smem();
            }
            if (l_issued < a.liters) {
              y_s[s] = static_cast<int>((a.lwrap ? lb - l_issued + l_issued % a.lwrap : lb) * a.lbox_rows);
              mbar_arrive_expect_tx(fb, a.lbytes);
              tma_load_2d(lb0 + static_cast<uint32_t>(s * a.lbytes), &lmap, 0, y_s[s], fb);
              ++lb;
              ++l_issued;
            }
          }
        }
        if (st) {
          for (int q = 0; q < a.spl; ++q) {
            if (s_issued >= DS) bulk_wait_read_n<DS - 1>();
            tma_store_2d(&smap, x, y, sb0 + static_cast<uint32_t>((s_issued % DS) * a.sbytes));
            bulk_commit();
            ++s_issued;
            if ((x += a.box_w) >= a.W) {
              x = 0;
              y += a.box_h;
            }
            if (a.swrap && s_issued % a.swrap == 0) {
              x = x0;
              y = y0;
            }
          }
        }
      }
    }
    ph ^= 1u;
  }
  if (ld) g_lend = gtime();
  unsigned long long* r = a.rec + static_cast<size_t>(blockIdx.x) * kMixRecW;
  if (ld) {
    if (bad) atomicAdd(&err[ERR_DATA], bad);
    r[0] = g0;
    r[1] = g_lend;
    r[2] = static_cast<unsigned long long>(l_done);
    r[3] = smid();
  }
  if (st) {
    bulk_wait_read_n<0>();
    const unsigned long long g_rd = gtime();
    bulk_wait0();
    const unsigned long long g_dn = gtime(), c_dn = clk();
    r[4] = g0;
    r[5] = g_rd;
    r[6] = g_dn;
    r[7] = static_cast<unsigned long long>(s_issued);
    r[8] = c_dn - c0;
    r[9] = g_dn - g0;
  }
}

// One thread per checked box (CTA k, box j of its region; j < min(iters, region)): 9 elements of the box must hold
// the value of the tag of the last store to it (store i -> buffer i % D). cnt[0] += mismatches, cnt[1] += of them
// still the poison 0xFFFF.
__global__ void k_store_check(const uint16_t* dst, int box_w, int box_h, int W, int ncta, long long cta_stride,
                              int nbox, int iters, int region, int D, unsigned long long* cnt) {
  const long long n = static_cast<long long>(ncta) * nbox;
  const int bpr = W / box_w;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int k = static_cast<int>(t / nbox), j = static_cast<int>(t % nbox);
    const long long gb = k * cta_stride + j;
    const long long x = (gb % bpr) * box_w, y = (gb / bpr) * box_h;
    const int last = region >= iters ? j : j + region * ((iters - 1 - j) / region);
    const uint32_t tag = static_cast<uint32_t>(k * kTags + last % D);
    const uint32_t rs[3] = {0u, static_cast<uint32_t>(box_h - 1), static_cast<uint32_t>(box_h / 2 + 1)};
    const uint32_t cs[3] = {0u, static_cast<uint32_t>(box_w - 1), static_cast<uint32_t>(box_w / 2 + 3)};
    unsigned long long b = 0, p = 0;
    for (uint32_t r : rs)
      for (uint32_t c : cs) {
        const uint16_t v = dst[(y + r) * W + x + c];
        if (v != st_val(tag, r, c, box_h)) {
          ++b;
          if (v == 0xFFFFu) ++p;
        }
      }
    if (b) atomicAdd(&cnt[0], b);
    if (p) atomicAdd(&cnt[1], p);
  }
}

// Reads n 16-byte words with ld.global.cg (evicts L2's dirty lines by filling it with clean ones).
__global__ void k_read_sink(const uint4* p, size_t n, unsigned* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) atomicAdd(sink, 1u);
}

CUtensorMap make_store_map(void* base, const Geo& g, uint64_t rows) {
  CUtensorMap m;
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(g.W), rows};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(g.W) * 2};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(g.box_w), static_cast<cuuint32_t>(g.box_h)};
  cuuint32_t es[2] = {1, 1};
  CUresult r = get_encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE,
                             g.swz == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled (store map) failed: " + std::to_string((int)r));
  return m;
}

struct Env {
  uint16_t* dst = nullptr;  // destination buffer
  size_t dst_bytes = 0;
  uint4* clean = nullptr;  // 256 MiB, read to clean L2
  size_t clean_bytes = 0;
  unsigned* sink = nullptr;
  unsigned long long* cnt = nullptr;  // check counters
};

// The buffers an Env points at, owned: a destination for every SM's 16 MiB store stream (and 1 MiB more), the 256 MiB
// read that cleans the L2, the sink and the check counters.
constexpr size_t kPerCtaStream = 16ull << 20;
struct EnvBuffers {
  DevBuf<uint16_t> dst;
  DevBuf<uint4> clean;
  DevBuf<unsigned> sink{1};
  DevBuf<unsigned long long> cnt{2};
  Env env;
  explicit EnvBuffers(Ctx& c)
      : dst(static_cast<size_t>(c.sm_count) * kPerCtaStream / 2 + (1u << 20)), clean((256ull << 20) / 16) {
    env.dst = dst.p;
    env.dst_bytes = dst.n * 2;
    env.clean = clean.p;
    env.clean_bytes = clean.n * 16;
    CK(cudaMemset(clean.p, 0x5A, env.clean_bytes));
    env.sink = sink.p;
    env.cnt = cnt.p;
    c.reset_err();
  }
};

// Rows of the destination tensor that hold boxes [0, nboxes) of geometry g.
uint64_t rows_for(const Geo& g, long long nboxes) {
  const long long bands = (nboxes + g.bpr() - 1) / g.bpr();
  return static_cast<uint64_t>(bands) * g.box_h;
}

void clean_l2(Ctx& c, Env& e) {
  k_read_sink<<<c.sm_count * 4, 512>>>(e.clean, e.clean_bytes / 16, e.sink);
  CK_LAUNCH();
}

struct CheckRes {
  unsigned long long bad = 0, poison = 0, checked = 0;
  std::string str() const {
    if (!bad) return "pass (" + std::to_string(checked) + " elements)";
    return "FAIL: " + std::to_string(bad) + " of " + std::to_string(checked) + " elements wrong, " +
           std::to_string(poison) + " still poison";
  }
};

CheckRes check_stores(Ctx& c, Env& e, const Geo& g, int ncta, long long cta_stride, int iters, int region, int D) {
  CK(cudaMemset(e.cnt, 0, 2 * sizeof(unsigned long long)));
  const int nbox = std::min(iters, region);
  k_store_check<<<c.sm_count * 8, 256>>>(e.dst, g.box_w, g.box_h, g.W, ncta, cta_stride, nbox, iters, region, D, e.cnt);
  CK_LAUNCH();
  unsigned long long h[2];
  CK(cudaMemcpy(h, e.cnt, sizeof h, cudaMemcpyDeviceToHost));
  CheckRes r;
  r.bad = h[0];
  r.poison = h[1];
  r.checked = static_cast<unsigned long long>(ncta) * nbox * 9;
  return r;
}

std::string fmt(double v, int prec = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// ---------------------------------------------------------------------------------------------
// 1 + 2: store ring
// ---------------------------------------------------------------------------------------------

struct RingCfgS {
  Geo g;
  int D, ncta, iters, region, reps;
  bool hbm;
};

// Records hier_store_bw_<tag>_{read,complete}_gbs and hier_store_ring_latency_<tag>.
void run_store_ring(Ctx& c, Env& e, const RingCfgS& cfg, const std::string& tag) {
  const std::string base = "hier_store_bw_" + tag;
  const Geo& g = cfg.g;
  const int bytes = g.bytes();
  const long long stride = cfg.region;  // regions are contiguous in box order
  const long long nboxes = (cfg.ncta - 1) * stride + std::min(cfg.iters, cfg.region);
  const uint64_t rows = rows_for(g, nboxes);
  const size_t used = static_cast<size_t>(rows) * g.W * 2;
  if (used > e.dst_bytes) throw std::runtime_error(base + ": destination too small");
  CUtensorMap map = make_store_map(e.dst, g, rows);
  DevBuf<uint32_t> lat(static_cast<size_t>(cfg.ncta) * kStLatCap);
  DevBuf<unsigned long long> rec(static_cast<size_t>(cfg.ncta) * kStRecW);
  StArgs a{};
  a.box_w = g.box_w;
  a.box_h = g.box_h;
  a.W = g.W;
  a.bytes = bytes;
  a.swz = g.swz;
  a.iters = cfg.iters;
  a.region = cfg.region;
  a.cta_stride = stride;
  a.lat_from = cfg.D;
  a.lat_to = cfg.iters - cfg.D;
  a.lat = lat.p;
  a.rec = rec.p;
  cudaEvent_t ea, eb;
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  std::vector<double> rd, dn, ev, lats, bpc, bpc_c64, clkm, wf, isf, drain, endwait;
  std::string problem, smids;
  const int reps = c.quick ? 1 : cfg.reps;
  for (int r = 0; r <= reps; ++r) {
    CK(cudaMemset(e.dst, 0xFF, used));  // poison
    if (cfg.hbm) clean_l2(c, e);
    CK(cudaEventRecord(ea));
    store_kernel(cfg.D)<<<cfg.ncta, 128, kStDyn>>>(map, a);
    CK(cudaEventRecord(eb));
    CK_LAUNCH();
    if (r == 0) continue;  // warm-up
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ea, eb));
    auto h = rec.get();
    std::vector<uint32_t> hl(static_cast<size_t>(cfg.ncta) * kStLatCap);
    CK(cudaMemcpy(hl.data(), lat.p, hl.size() * 4, cudaMemcpyDeviceToHost));
    unsigned long long mn = ~0ull, mrd = 0, mdn = 0;
    std::vector<unsigned long long> sms;
    double wsum = 0, isum = 0;
    for (int k = 0; k < cfg.ncta; ++k) {
      const unsigned long long* q = &h[static_cast<size_t>(k) * kStRecW];
      mn = std::min(mn, q[0]);
      mrd = std::max(mrd, q[1]);
      mdn = std::max(mdn, q[2]);
      sms.push_back(q[5]);
      if (q[10] != static_cast<unsigned long long>(cfg.iters) && problem.empty())
        problem = "CTA " + std::to_string(k) + " record incomplete";
      for (unsigned long long jj = 0; jj < q[6] && jj < static_cast<unsigned long long>(kStLatCap); ++jj)
        lats.push_back(double(hl[static_cast<size_t>(k) * kStLatCap + jj]));
      wsum += double(q[7]) / double(q[9]);
      isum += double(q[8]) / double(q[9]);
      bpc_c64.push_back(double(cfg.iters) * bytes / double(q[3]));
      clkm.push_back(double(q[4]) / double(q[2] - q[0]) * 1000.0);
      drain.push_back(double(q[4] - q[3]));
      endwait.push_back(double(q[3] - q[9]));
    }
    std::sort(sms.begin(), sms.end());
    if (std::adjacent_find(sms.begin(), sms.end()) != sms.end() && problem.empty()) problem = "two CTAs ran on the same SM";
    if (cfg.ncta < c.sm_count) {
      smids.clear();
      for (int k = 0; k < cfg.ncta; ++k) smids += (k ? "," : "") + std::to_string(h[static_cast<size_t>(k) * kStRecW + 5]);
    }
    const double tot = double(cfg.ncta) * cfg.iters * bytes;
    rd.push_back(tot / double(mrd - mn));
    dn.push_back(tot / double(mdn - mn));
    ev.push_back(tot / (double(ms) * 1e6));
    bpc.push_back(rd.back() / (c.clk_ghz * cfg.ncta));
    wf.push_back(wsum / cfg.ncta);
    isf.push_back(isum / cfg.ncta);
  }
  CK(cudaEventDestroy(ea));
  CK(cudaEventDestroy(eb));
  const CheckRes chk = check_stores(c, e, g, cfg.ncta, stride, cfg.iters, cfg.region, cfg.D);
  const std::string kerr = c.take_err();
  if (!problem.empty() || !kerr.empty()) {
    c.res->fail(base + "_read_gbs", problem + kerr);
    return;
  }
  const Stats ls = compute_stats(lats);
  const double rd_med = compute_stats(rd).median, dn_med = compute_stats(dn).median;
  JObj p;
  p.str("footprint", cfg.hbm ? "hbm" : "l2")
      .str("box", g.tag)
      .num("box_bytes", bytes)
      .str("box_shape", std::to_string(g.box_w) + " cols x " + std::to_string(g.box_h) + " rows bf16")
      .num("tensor_cols", g.W)
      .num("swizzle_bytes", g.swz)
      .num("inflight_stores", cfg.D)
      .num("ctas", cfg.ncta)
      .num("stores_per_cta", cfg.iters)
      .num("bytes_per_cta", double(cfg.iters) * bytes)
      .num("region_bytes_per_cta", double(std::min(cfg.iters, cfg.region)) * bytes)
      .num("total_footprint_bytes", double(used))
      .num("read_gbs_median", rd_med)
      .num("complete_gbs_median", dn_med)
      .num("event_gbs_median", compute_stats(ev).median)
      .num("read_bytes_per_sm_cycle_per_sm", compute_stats(bpc).median)
      .num("complete_bytes_per_sm_cycle_per_sm", dn_med / (c.clk_ghz * cfg.ncta))
      .num("read_bytes_per_cycle_per_sm_clock64", compute_stats(bpc_c64).median)
      .num("ring_latency_median_cycles", ls.median)
      .num("ring_latency_mean_cycles", ls.mean)
      .num("wait_fraction", compute_stats(wf).mean)
      .num("issue_fraction", compute_stats(isf).mean)
      .num("end_wait_read0_cycles_median", compute_stats(endwait).median)
      .num("read_to_complete_cycles_median", compute_stats(drain).median)
      .num("read_to_complete_cycles_max", compute_stats(drain).max)
      .num("sm_clock_mhz_in_run_median", compute_stats(clkm).median)
      .num("sm_clock_ghz_used", c.clk_ghz)
      .str("data_check", chk.str());
  if (!smids.empty()) p.str("smids", smids);
  const std::string fpd =
      cfg.hbm ? "Footprint hbm: every store writes a fresh box (CTA k: its own " + fmt(double(cfg.iters) * bytes / 1048576.0, 0) +
                    " MiB, contiguous in box order), " + fmt(double(used) / 1e9, 2) +
                    " GB in all; before every rep the destination is poisoned (cudaMemset 0xFF) and L2 cleaned (a "
                    "256 MiB ld.global.cg read of another buffer: no dirty lines left). "
              : "Footprint l2: CTA k rewrites its own region of " + fmt(double(cfg.region) * bytes / 1024.0, 0) +
                    " KB (store i -> box i % " + std::to_string(cfg.region) + " of it), " +
                    fmt(double(used) / 1e6, 1) + " MB in all (< L2); destination poisoned (0xFF) before every rep. ";
  const std::string common =
      "TMA store ring: " + std::to_string(cfg.ncta) + " CTA(s) (1 per SM, 200 KB smem); thread 0 issues " +
      std::to_string(cfg.iters) + " cp.async.bulk.tensor.2d.global.shared::cta.bulk_group stores of " +
      std::to_string(g.box_w) + " x " + std::to_string(g.box_h) + " bf16 boxes (" + std::to_string(bytes / 1024) +
      " KB, " + std::to_string(g.swz) + "B swizzle, tensor of " + std::to_string(g.W) +
      " columns) from D = " + std::to_string(cfg.D) +
      " smem buffers, commit_group per store, cp.async.bulk.wait_group.read D-1 before reusing a buffer (D stores in "
      "flight, CUTLASS epilogue style); at the end wait_group.read 0 then wait_group 0. " + fpd +
      "After the last rep 9 elements of every box are compared with the value of its last writer: " + chk.str() + ". ";
  if (chk.bad) {
    c.res->fail(base + "_data_check", chk.str());
    c.res->notes.push_back(base + ": store data check " + chk.str() + " (bandwidth recorded anyway)");
  }
  c.res->add(base + "_read_gbs", G, "GB/s", rd,
             common + "Value: bytes stored / (last CTA's wait_group.read 0 return - first CTA start) by %globaltimer "
                      "(the source smem was read: what an epilogue waits on), one sample per rep after a warm-up rep. "
                      "params: bytes per SM-cycle per SM (GB/s / (clock x CTAs)), event_gbs = bytes / CUDA-event "
                      "time of the launch, wait_fraction / issue_fraction = share of the thread's loop spent in "
                      "wait_group.read / in store + commit.",
             p);
  c.res->add(base + "_complete_gbs", G, "GB/s", dn,
             common + "Value: bytes stored / (last CTA's wait_group 0 return - first CTA start) by %globaltimer (the "
                      "writes are complete, i.e. visible in L2/global; not necessarily written back to HBM).",
             p);
  if (!lats.empty())
    c.res->add("hier_store_ring_latency_" + tag, G, "cycles", lats,
               common + "Value: per store, clock64 when the wait_group.read D-1 that frees its buffer returned - "
                        "clock64 before its issue (stores [D, iters-D) of every CTA and measured rep). With D = 1 the "
                        "read latency of one store under this load; with D > 1 an upper bound (the thread may reach "
                        "the wait late).",
               p);
}

// ---------------------------------------------------------------------------------------------
// 2: isolated single-store latency
// ---------------------------------------------------------------------------------------------

void run_store_lat1(Ctx& c, Env& e, const Geo& g, bool hbm) {
  const int bytes = g.bytes();
  const int n = c.quick ? 64 + kLat1Warm : kLat1N;
  const int region = hbm ? n : std::max(1, 128 * 1024 / bytes);
  const uint64_t rows = rows_for(g, std::min(n, region));
  const size_t used = static_cast<size_t>(rows) * g.W * 2;
  CUtensorMap map = make_store_map(e.dst, g, rows);
  StArgs a{};
  a.box_w = g.box_w;
  a.box_h = g.box_h;
  a.W = g.W;
  a.bytes = bytes;
  a.swz = g.swz;
  a.iters = n;
  a.region = region;
  DevBuf<uint32_t> out(3 * kLat1N);
  CK(cudaMemset(e.dst, 0xFF, used));
  if (hbm) clean_l2(c, e);
  k_store_lat1<<<1, 128, kStDyn>>>(map, a, out.p);
  CK_LAUNCH();
  auto h = out.get();
  const CheckRes chk = check_stores(c, e, g, 1, region, n, region, 1);
  std::vector<double> iss, rd, dn;
  for (int i = kLat1Warm; i < n; ++i) {
    iss.push_back(h[3 * i]);
    rd.push_back(h[3 * i + 1]);
    dn.push_back(h[3 * i + 2]);
  }
  const std::string fp = hbm ? "hbm" : "l2";
  const std::string base = "hier_store_latency_1sm_" + fp + "_" + g.tag;
  const std::string kerr = c.take_err();
  if (!kerr.empty()) {
    c.res->fail(base + "_read", kerr);
    return;
  }
  if (chk.bad) {
    c.res->fail(base + "_data_check", chk.str());
    c.res->notes.push_back(base + ": store data check " + chk.str() + " (latency recorded anyway)");
  }
  JObj p;
  p.str("footprint", fp).str("box", g.tag).num("box_bytes", bytes).num("tensor_cols", g.W).num("swizzle_bytes", g.swz)
      .num("samples_after_warmup", n - kLat1Warm).num("region_boxes", region).str("data_check", chk.str());
  const std::string d =
      "One SM, one thread, isolated stores: t0 = clock64; cp.async.bulk.tensor.2d store of one " + std::to_string(g.box_w) +
      " x " + std::to_string(g.box_h) + " bf16 box (" + std::to_string(bytes / 1024) + " KB, " + std::to_string(g.swz) +
      "B swizzle, tensor of " + std::to_string(g.W) + " columns); commit_group; t1; wait_group.read 0; t2; wait_group 0; "
      "t3 (each store starts with nothing in flight). " +
      (hbm ? "Destination: a fresh box per store (" + std::to_string(n) + " boxes after poisoning and an L2 clean: "
                 "lines not in L2; the data still fit in L2, so this is L2 write-allocate, not HBM)."
           : std::string("Destination: a 128 KB region rewritten (lines in L2, dirty).")) +
      " First " + std::to_string(kLat1Warm) + " samples dropped. Data check: " + chk.str() + ". ";
  c.res->add(base + "_issue", G, "cycles", iss, d + "Value: t1 - t0 (store + commit issue cost).", p);
  c.res->add(base + "_read", G, "cycles", rd, d + "Value: t2 - t0 (issue -> wait_group.read 0 returns).", p);
  c.res->add(base + "_complete", G, "cycles", dn, d + "Value: t3 - t0 (issue -> wait_group 0 returns).", p);
}

// ---------------------------------------------------------------------------------------------
// 3: mixed loads + stores
// ---------------------------------------------------------------------------------------------

// resident: every CTA's loads cycle over 4 boxes of its slice and its stores over 128 KB of its region (17 MB of
// each in all, L2-resident after the first touch): the L2's reads and writes side by side, without HBM.
void run_mixed(Ctx& c, Env& e, uint16_t* big, long long big_rows, const Geo& g, int spl, bool coupled, bool resident,
               const std::string& suffix = "") {
  constexpr int DL = 4, DS = 2;
  const int lrows = 256, lbytes = lrows * kRowBytes;
  const int liters = static_cast<int>((12ll << 20) / lbytes);  // 12 MiB of loads per CTA
  const int ncta = c.sm_count;
  const long long lnboxes = big_rows / lrows, lslice = lnboxes / ncta;
  if (lslice < liters) throw std::runtime_error("mixed: load tensor too small");
  const int siters = liters * spl;
  const long long stride = siters;
  const uint64_t rows = rows_for(g, static_cast<long long>(ncta) * siters);
  const size_t used = static_cast<size_t>(rows) * g.W * 2;
  if (used > e.dst_bytes) throw std::runtime_error("mixed: destination too small");
  if (DL * lbytes + DS * g.bytes() + 1024 > kStDyn) throw std::runtime_error("mixed: smem");
  CUtensorMap lmap = make_map(big, static_cast<uint64_t>(big_rows), lrows);
  CUtensorMap smap = make_store_map(e.dst, g, rows);
  DevBuf<unsigned long long> rec(static_cast<size_t>(ncta) * kMixRecW);
  MixArgs a{};
  a.lbytes = lbytes;
  a.lbox_rows = lrows;
  a.liters = liters;
  a.lslice = lslice;
  a.box_w = g.box_w;
  a.box_h = g.box_h;
  a.W = g.W;
  a.sbytes = g.bytes();
  a.swz = g.swz;
  a.spl = spl;
  a.cta_stride = stride;
  a.coupled = coupled ? 1 : 0;
  a.lwrap = resident ? 4 : 0;
  a.swrap = resident ? static_cast<int>((128 << 10) / g.bytes()) : 0;
  a.rec = rec.p;
  std::vector<double> lg, sr, sd, tg, lspan, sspan, lend_over_send, clkm;
  std::string problem;
  const int reps = c.quick ? 1 : 3;
  const double lb_tot = double(ncta) * liters * lbytes, sb_tot = double(ncta) * siters * g.bytes();
  for (int r = 0; r <= reps; ++r) {
    CK(cudaMemset(e.dst, 0xFF, used));
    clean_l2(c, e);
    k_mixed<DL, DS><<<ncta, 64, kStDyn>>>(lmap, smap, a, c.d_err);
    CK_LAUNCH();
    if (r == 0) continue;
    auto h = rec.get();
    unsigned long long l0 = ~0ull, l1 = 0, s0 = ~0ull, srd = 0, sdn = 0;
    std::vector<unsigned long long> sms;
    std::vector<double> ratio;
    for (int k = 0; k < ncta; ++k) {
      const unsigned long long* q = &h[static_cast<size_t>(k) * kMixRecW];
      l0 = std::min(l0, q[0]);
      l1 = std::max(l1, q[1]);
      s0 = std::min(s0, q[4]);
      srd = std::max(srd, q[5]);
      sdn = std::max(sdn, q[6]);
      sms.push_back(q[3]);
      if ((q[2] != static_cast<unsigned long long>(liters) || q[7] != static_cast<unsigned long long>(siters)) &&
          problem.empty())
        problem = "CTA " + std::to_string(k) + " completed " + std::to_string(q[2]) + " loads / " + std::to_string(q[7]) +
                  " stores";
      ratio.push_back(double(q[1] - q[0]) / double(q[6] - q[4]));
      clkm.push_back(double(q[8]) / double(q[9]) * 1000.0);
    }
    std::sort(sms.begin(), sms.end());
    if (std::adjacent_find(sms.begin(), sms.end()) != sms.end() && problem.empty()) problem = "two CTAs ran on the same SM";
    lg.push_back(lb_tot / double(l1 - l0));
    sr.push_back(sb_tot / double(srd - s0));
    sd.push_back(sb_tot / double(sdn - s0));
    tg.push_back((lb_tot + sb_tot) / double(std::max(l1, sdn) - std::min(l0, s0)));
    lspan.push_back(double(l1 - l0) / 1000.0);
    sspan.push_back(double(sdn - s0) / 1000.0);
    lend_over_send.push_back(compute_stats(ratio).median);
  }
  const CheckRes chk = check_stores(c, e, g, ncta, stride, siters, resident ? a.swrap : siters, DS);
  const std::string mode = coupled ? "coupled" : "indep";
  const std::string base = std::string("hier_store_mixed_") + (resident ? "l2_" : "") + mode + "_" + g.tag + suffix;
  const std::string kerr = c.take_err();
  if (!problem.empty() || !kerr.empty()) {
    c.res->fail(base + "_load_gbs", problem + kerr);
    return;
  }
  if (chk.bad) {
    c.res->fail(base + "_data_check", chk.str());
    c.res->notes.push_back(base + ": store data check " + chk.str() + " (bandwidth recorded anyway)");
  }
  const double clk = c.clk_ghz * ncta;
  JObj p;
  p.str("mode", mode).str("footprint", resident ? "l2" : "hbm").str("store_box", g.tag).num("store_box_bytes", g.bytes()).num("store_tensor_cols", g.W)
      .num("store_swizzle_bytes", g.swz).num("stores_per_load", spl).num("load_box_bytes", lbytes)
      .num("loads_in_flight", DL).num("store_buffers", DS).num("ctas", ncta).num("load_bytes_per_cta", double(liters) * lbytes)
      .num("store_bytes_per_cta", double(siters) * g.bytes())
      .num("load_gbs_median", compute_stats(lg).median)
      .num("store_read_gbs_median", compute_stats(sr).median)
      .num("store_complete_gbs_median", compute_stats(sd).median)
      .num("total_gbs_median", compute_stats(tg).median)
      .num("load_bytes_per_sm_cycle_per_sm", compute_stats(lg).median / clk)
      .num("store_bytes_per_sm_cycle_per_sm", compute_stats(sr).median / clk)
      .num("load_span_us_median", compute_stats(lspan).median)
      .num("store_span_us_median", compute_stats(sspan).median)
      .num("cta_load_time_over_store_time_median", compute_stats(lend_over_send).median)
      .num("sm_clock_mhz_in_run_median", compute_stats(clkm).median)
      .num("sm_clock_ghz_used", c.clk_ghz)
      .str("data_check", chk.str());
  const std::string d =
      std::string("Mixed load + store, all SMs (1 CTA per SM): CTA k TMA-loads 12 MiB ") +
      (resident ? "cycling over the first 4 boxes (128 KB) of its own slice of a 2 GiB tensor (L2-resident after the first touch) "
                : "of its own slice of a 2 GiB tensor ") +
      "(64 x 256 bf16 boxes, 32 KB, 128B swizzle, 4 in flight, one mbarrier per slot; 4 elements of every 16th "
      "box checked) and TMA-stores " + (spl * g.bytes() == lbytes ? std::string("the same number of bytes")
                                        : std::to_string(spl * g.bytes() / 1024) + " KB per 32 KB loaded") +
      " (" + std::to_string(spl) + " store(s) of " +
      std::to_string(g.box_w) + " x " + std::to_string(g.box_h) + " bf16 (" + std::to_string(g.bytes() / 1024) +
      " KB, " + std::to_string(g.swz) + "B swizzle, tensor of " + std::to_string(g.W) +
      " columns) per load; 2 smem buffers, wait_group.read 1 before reuse) " +
      (resident ? "cycling over 128 KB of its own region (L2-resident); " : "to its own fresh region; ") +
      (coupled ? "one thread alternates: wait load slot, re-issue it, then its stores (rates coupled 1:1). "
               : "thread 0 runs the loads, thread 32 (another warp) the stores, independently. ") +
      "Before every rep the destination is poisoned and L2 cleaned (256 MiB read of another buffer). Store data "
      "check after the last rep: " + chk.str() + ". ";
  c.res->add(base + "_load_gbs", G, "GB/s", lg,
             d + "Value: load bytes / (last CTA's last load completion - first CTA start), %globaltimer, per rep.", p);
  c.res->add(base + "_store_read_gbs", G, "GB/s", sr,
             d + "Value: store bytes / (last CTA's final wait_group.read 0 - first CTA start).", p);
  c.res->add(base + "_store_complete_gbs", G, "GB/s", sd,
             d + "Value: store bytes / (last CTA's final wait_group 0 - first CTA start).", p);
  c.res->add(base + "_total_gbs", G, "GB/s", tg,
             d + "Value: (load + store bytes) / (last end of either - first start).", p);
}

}  // namespace

// Group "wbmix": how much a byte written to HBM costs beside reads, by the share of writes. The mixed load + store
// run (run_mixed, HBM source and destination, all SMs) with 8 KB stores, 1 and 2 per 32 KB load (a fifth and a third
// of the bytes written), and 32 KB stores, 1 per load (half), coupled and independent, in one session; with the HBM
// rate R and a written byte costing c read bytes, a mix of L loaded and S stored bytes takes (L + c S) / R.
void bench_store_mix(Ctx& c) {
  CK(cudaFuncSetAttribute(k_mixed<4, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kStDyn));
  EnvBuffers bufs(c);
  Env& e = bufs.env;
  const Geo box32{"box32KB", 64, 256, 128, 64}, box8{"box8KB", 64, 64, 128, 64};
  const PatternTensor big(c, 2ull << 30);
  for (int coupled = 0; coupled < 2; ++coupled) {
    run_mixed(c, e, big.p, big.rows, box8, 1, coupled == 1, false, "_spl1");
    run_mixed(c, e, big.p, big.rows, box8, 2, coupled == 1, false, "_spl2");
    run_mixed(c, e, big.p, big.rows, box32, 1, coupled == 1, false, "_spl1");
  }
}

void bench_hier_store(Ctx& c) {
  const auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](const char* what) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("   [store] %s done at %.1f s\n", what, s);
    std::fflush(stdout);
  };
  for (int D : {1, 2, 4}) CK(cudaFuncSetAttribute(store_kernel(D), cudaFuncAttributeMaxDynamicSharedMemorySize, kStDyn));
  CK(cudaFuncSetAttribute(k_store_lat1, cudaFuncAttributeMaxDynamicSharedMemorySize, kStDyn));
  CK(cudaFuncSetAttribute(k_mixed<4, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kStDyn));

  EnvBuffers bufs(c);
  Env& e = bufs.env;

  const Geo geos[3] = {
      {"box32KB", 64, 256, 128, 64},    // contiguous 32 KB
      {"box8KB", 64, 64, 128, 64},      // contiguous 8 KB
      {"k2box8KB", 32, 128, 64, 8192},  // K2 epilogue subtile: 128 rows x 64 B of a 16 KB row
  };
  // 1: all SMs; 2: one SM
  for (int n : {c.sm_count, 1}) {
    for (int hbm = 0; hbm < 2; ++hbm) {
      for (const Geo& g : geos) {
        for (int D : {1, 2, 4}) {
          RingCfgS cfg{g, D, n, 0, 0, 3, hbm == 1};
          const int bytes = g.bytes();
          // per CTA: l2 8 MiB per rep; hbm 16 MiB (all SMs, 2.1 GB) or 64 MiB (one SM: more than L2 holds)
          const size_t per_cta = hbm ? (n == 1 ? (64ull << 20) : kPerCtaStream) : (8ull << 20);
          cfg.iters = static_cast<int>(per_cta / bytes);
          cfg.region = hbm ? cfg.iters : 128 * 1024 / bytes;
          const std::string tag = std::string(hbm ? "hbm_" : "l2_") + g.tag + "_d" + std::to_string(D) +
                                  (n == 1 ? "_1sm" : "");
          run_store_ring(c, e, cfg, tag);
        }
      }
      lap(n == 1 ? (hbm ? "1-SM ring hbm" : "1-SM ring l2") : (hbm ? "all-SM ring hbm" : "all-SM ring l2"));
    }
  }
  for (int hbm = 0; hbm < 2; ++hbm)
    for (const Geo& g : geos) run_store_lat1(c, e, g, hbm == 1);
  lap("isolated latency");
  // 3: mixed
  {
    const PatternTensor big(c, 2ull << 30);
    const long long big_rows = big.rows;
    for (int resident = 0; resident < 2; ++resident)
      for (int coupled = 0; coupled < 2; ++coupled) {
        run_mixed(c, e, big.p, big_rows, geos[0], 1, coupled == 1, resident == 1);
        run_mixed(c, e, big.p, big_rows, geos[2], 4, coupled == 1, resident == 1);
      }
  }
  lap("mixed");
}

}  // namespace mb
