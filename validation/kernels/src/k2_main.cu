// Driver for the K2 GEMM (k2_gemm.cuh): random bf16 inputs, output poisoned first, checked against cuBLAS
// (bf16 in, fp32 accumulate, fp32 out) by ||D - ref|| / ||ref||, a CPU float64 spot check of sampled
// elements, then timed with CUDA events (warm-up, median of --reps runs) next to cuBLAS bf16 (bf16 out)
// on the same inputs.  Writes one JSON file.
//
//   k2_gemm [--out FILE] [--shapes 4096x4096x4096,8192x8192x8192,...] [--reps N]
//           [--variants all|issue5|NAME,SPEC,...] [--bench-beta B] [--quick] [--skip-bench]
// --variants: all (default) = the two original cooperative 1x1 variants 128x256x64_s4 (alias 256x4) and
// 128x128x64_s6 (128x6); 128x256x64_s2 (256x2) and 128x128x64_s2 (128x2) have probe-on instances too (traces
// of a 2-stage ring); issue5 = the issue-5 set (kIssue5: pingpong, 2x1 clusters, epilogue knobs); or a list
// of names and specs schedule:tile:stages[:knobs] (parse_spec), e.g. pp:128x128:s6:c2, coop:128x256:s4:reuse:delay.
// A refused configuration (DelayTmaStore + ReuseSmemC with StagesC <= StagesD: a deadlock) stops the driver
// with a message before anything runs on the GPU.  --bench-beta B: also time alpha=1, beta=B (C loaded).
//           [--trace PREFIX] [--trace-ctas N] [--trace-first C] [--trace-tiles T] [--trace-beta B,...]
//           [--trace-kb-sample N] [--probe-overhead FILE]
// --trace-kb-sample N: the mainloop's records (waits, arrives, loads, wgmmas) of every N-th k-block only, so the probe
// costs the mainloop ~1/N of its cost (a trace for interval statistics; smpipe replay refuses it).
// --trace: runs the probe-on kernel (traces/probe.cuh, built when K2_PROBE is on) once per shape and beta,
// recording CTAs [C, C+N) (default 0..3), the first T tiles of each (default 0: all), and writes the raw
// buffer PREFIX_<shape>[_beta<B>].bin with its description PREFIX_<shape>[_beta<B>].meta.json
// (traces/collect.py turns the pair into a trace file, docs/trace-format.md).
// --probe-overhead: times the probe-off kernel against the probe-on kernel (recording the same CTAs, all
// tiles; and with the tile window; and recording nothing), launches interleaved, and writes FILE.
// --skip-bench: no cuBLAS comparison timing and no --out JSON (checks still run).
//   k2_gemm --sweep [--shapes S --variants V] [--group SHAPES@VARIANTS ...] [--data random|const|both]
//           [--reps N (10)] [--warm N (3)] [--flush-l2 [--flush-mb MB (256)] [--flush-stride BYTES (16)]] [--out FILE]
// --sweep: K2 alone (no cuBLAS timing), every (shape, data, variant) point timed with its SM clock, one row each
// in a smpipe.k2_sweep.v1 JSON rewritten after every point (run_sweep); a group is shapes x variants, --group
// repeatable (SHAPES comma-separated MxNxK, VARIANTS as --variants); numerics checked once per shape for the
// group's first variant and once for every other variant (on its first shape). --flush-l2: a kernel reading a
// 256 MB buffer runs before every timed launch (outside its events): each starts with a cold L2. --flush-mb sets the
// buffer's size, --flush-stride the distance between the 16-byte words read (2 MB: one word per large page, which
// evicts the GPU's address translations while leaving the L2 nearly as it was).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_common.h"
#include "k2_gemm.cuh"
#ifndef K2_WITH_PROBE
#define K2_WITH_PROBE 0
#endif
#if K2_WITH_PROBE
#include "k2_probe_api.h"
#endif

namespace {

using namespace khost;

using bf16 = __nv_bfloat16;

// ---------------------------------------------------------------------------------------------
// Tensor maps
// ---------------------------------------------------------------------------------------------
// Row-major bf16 matrix [rows][cols], box [box_rows][box_cols].
CUtensorMap make_map(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                     CUtensorMapSwizzle swz) {
  CUtensorMap m;
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {cols * 2};
  cuuint32_t box[2] = {box_cols, box_rows};
  cuuint32_t es[2] = {1, 1};
  CUresult r = encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, es,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed: " + std::to_string((int)r));
  return m;
}

// ---------------------------------------------------------------------------------------------
// Helper kernels
// ---------------------------------------------------------------------------------------------
__host__ __device__ inline uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}
// Uniform in [-1, 1), rounded to bf16.
__global__ void k_fill_random(bf16* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = hash32(i * 0x9E3779B97F4A7C15ull + seed);
    p[i] = __float2bfloat16(float(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}
// Reads n 16-byte words `stride` words apart (a buffer several times the L2, every word: the L2 holds only its clean
// lines afterwards, so the next launch finds a cold L2, nothing of its own data, nothing dirty to write back). `sink`
// is written only when the sum is an impossible value, so the reads are not optimised away.
__global__ void k_l2_flush_read(const uint4* p, size_t n, size_t stride, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i * stride];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0xFFFFFFFFu && sink) *sink = acc;
}

__global__ void k_fill_u16(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
__global__ void k_bf16_to_f32(const bf16* s, float* d, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    d[i] = __bfloat162float(s[i]);
}
// acc[0] += sum (d - ref)^2, acc[1] += sum ref^2, cnt[0] += non-finite d
__global__ void k_err(const bf16* d, const float* ref, size_t n, double* acc, unsigned long long* cnt) {
  double e = 0, r = 0;
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float x = __bfloat162float(d[i]);
    float y = ref[i];
    if (!isfinite(x)) {
      ++bad;
      continue;
    }
    double df = double(x) - double(y);
    e += df * df;
    r += double(y) * double(y);
  }
  for (int o = 16; o > 0; o >>= 1) {
    e += __shfl_down_sync(0xffffffffu, e, o);
    r += __shfl_down_sync(0xffffffffu, r, o);
    bad += __shfl_down_sync(0xffffffffu, bad, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&acc[0], e);
    atomicAdd(&acc[1], r);
    atomicAdd(&cnt[0], bad);
  }
}

// ---------------------------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------------------------
struct Variant {
  std::string name;
  std::string schedule = "cooperative";  // "cooperative" | "pingpong"
  int bn = 256, stages = 4, smem = 0;
  int cluster_m = 1;                     // 2: 2x1 cluster along M, B multicast
  int reuse = 0, delay = 0;              // ReuseSmemC, DelayTmaStore
  int sc = k2::STAGES_C, sd = k2::STAGES_D;
  int order_depth = 2;                   // pingpong OrderedSequenceBarrier depth
  int raster = k2::GROUP_M;              // scheduler raster group in m-blocks (Params::raster_group; <= 0: all rows)
  int epi_m = k2::EPI_M, epi_slots = 4;
  std::string spec;                      // as given on the command line
  bool legacy = false;   // an original cooperative 1x1 variant or a 2-stage one (probe-on instance, traces)
  bool probed = false;   // the probe-on build has its instance (traces, probe overhead): 1x1 clusters only
  int max_clusters = 0;  // clusters (or CTAs, 1x1) resident at once: the persistent grid
  bool one_per_tile = false;  // `np`: a grid of one CTA per tile (not persistent; 1x1 clusters)
  std::function<void(const CUtensorMap&, const CUtensorMap&, const CUtensorMap&, const CUtensorMap&, k2::Params, int,
                     cudaStream_t)>
      launch;
  int (*prepare)(int cluster_m, int sms) = nullptr;  // the instance's prepare_k
  void apply(k2::Params& p) const {
    p.cluster_m = cluster_m;
    p.reuse_c = reuse;
    p.delay_store = delay;
    p.stages_c = sc;
    p.stages_d = sd;
    p.order_depth = order_depth;
    p.raster_group = raster;
  }
  // Cluster rows per raster group on a problem of n_mrow cluster rows (the kernel's `group`, tile_coords).
  int raster_rows(int n_mrow) const {
    return raster <= 0 ? n_mrow : std::min(n_mrow, std::max(1, raster / cluster_m));
  }
};

// One compiled kernel instance (schedule, BN, stages); cluster and epilogue knobs are runtime parameters.
template <int BN, int ST, bool PP>
void launch_k(const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c, const CUtensorMap& d, k2::Params p,
              int grid, cudaStream_t st) {
  using C = k2::Cfg<BN, ST, PP>;
  if (p.cluster_m == 1) {
    k2::k2_gemm_kernel<BN, ST, PP><<<grid, k2::NUM_THREADS, C::SMEM_BYTES, st>>>(a, b, c, d, p);
    return;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid, 1, 1);
  cfg.blockDim = dim3(k2::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = C::SMEM_BYTES;
  cfg.stream = st;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = p.cluster_m;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, k2::k2_gemm_kernel<BN, ST, PP>, a, b, c, d, p));
}
// Sets the smem limit; returns how many clusters of cluster_m CTAs can be resident at once (1x1: #SMs).
template <int BN, int ST, bool PP>
int prepare_k(int cluster_m, int sms) {
  using C = k2::Cfg<BN, ST, PP>;
  CK(cudaFuncSetAttribute(k2::k2_gemm_kernel<BN, ST, PP>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM_BYTES));
  if (cluster_m == 1) return sms;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(cluster_m * 8, 1, 1);
  cfg.blockDim = dim3(k2::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = C::SMEM_BYTES;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cluster_m;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  int n = 0;
  CK(cudaOccupancyMaxActiveClusters(&n, k2::k2_gemm_kernel<BN, ST, PP>, &cfg));
  if (n < 1) throw std::runtime_error("no cluster of this kernel fits on the device");
  return n;
}
// Fills smem, epi_m, epi_slots, launch, prepare of a variant from one compiled instance; no CUDA call.
template <int BN, int ST, bool PP>
void bind(Variant& v) {
  using C = k2::Cfg<BN, ST, PP>;
  v.smem = C::SMEM_BYTES;
  v.epi_m = C::EPI_M_;
  v.epi_slots = C::EPI_SLOTS;
  v.launch = launch_k<BN, ST, PP>;
  v.prepare = prepare_k<BN, ST, PP>;
}
// The compiled instances (schedule, tile N, stages); every other knob is a runtime parameter.  Each costs
// ~1-2 s of ptxas and ~100-200 KB of binary.  Spec names: coop:128x<BN>:s<STAGES>, pp:128x128:s<STAGES>.
struct Instance {
  bool pp;
  int bn, stages;
  void (*bind)(Variant&);
};
#define K2_INSTANCE(BN, ST, PP) Instance{PP, BN, ST, bind<BN, ST, PP>}
const Instance kInstances[] = {
    K2_INSTANCE(256, 2, false), K2_INSTANCE(256, 3, false), K2_INSTANCE(256, 4, false),
    K2_INSTANCE(128, 2, false), K2_INSTANCE(128, 3, false), K2_INSTANCE(128, 4, false), K2_INSTANCE(128, 6, false),
    K2_INSTANCE(128, 2, true),  K2_INSTANCE(128, 3, true),  K2_INSTANCE(128, 4, true),  K2_INSTANCE(128, 6, true),
    K2_INSTANCE(64, 4, false),  K2_INSTANCE(64, 8, false),
};
#undef K2_INSTANCE
std::string instance_list() {
  std::string o;
  for (const Instance& in : kInstances)
    o += (o.empty() ? "" : ", ") + std::string(in.pp ? "pp" : "coop") + ":128x" + std::to_string(in.bn) + ":s" +
         std::to_string(in.stages);
  return o;
}
bool bind_instance(Variant& v) {
  for (const Instance& in : kInstances)
    if ((v.schedule == "pingpong") == in.pp && v.bn == in.bn && v.stages == in.stages) return in.bind(v), true;
  return false;
}
int prepare_variant(const Variant& v, int sms) { return v.prepare(v.cluster_m, sms); }

// The original variants and the 2-stage ones with probe-on instances (names kept: run_k2.sh, run_k2_trace.sh,
// k2_gemm.json select them by name).
Variant legacy_variant(int bn, int st) {
  Variant v;
  v.name = "128x" + std::to_string(bn) + "x64_s" + std::to_string(st);
  v.bn = bn;
  v.stages = st;
  v.legacy = true;
  v.spec = v.name;
  bind_instance(v);
  return v;
}

// Variant spec: schedule:tile:stages[:knob...], ':'-separated, e.g. "pp:128x128:s6:c2:reuse:delay:sc4:sd2".
//   schedule  coop | pp;   tile  128x256 | 128x128 | 128x64 (pp: 128x128 per consumer warpgroup);   stages sN;
//   (schedule, tile, stages) must be a compiled instance (kInstances: coop 128x256 s2/s3/s4, coop 128x128
//   s2/s3/s4/s6, pp 128x128 s2/s3/s4/s6, coop 128x64 s4/s8);   knobs: c1 | c2 (cluster 1x1 or 2x1 along M, B
//   multicast), reuse (ReuseSmemC), delay (DelayTmaStore), scN (StagesC), sdN (StagesD), odN (pingpong
//   order-barrier depth, 2 = CUTLASS, 1 = one ring), gN (scheduler raster group of N m-blocks, default g8;
//   g1 = along N: every n block of m row 0, then row 1, ...; g0 = one group of all m rows = along M; with c2
//   the group is max(1, N/2) cluster rows), np (a grid of one CTA per tile instead of the persistent one: each CTA
//   takes one tile, later CTAs start on SMs that ran earlier ones; 1x1 clusters).  Defaults: cooperative StagesC 2 (4 with reuse), StagesD 2;
//   pingpong StagesC 4, StagesD 2 (CUTLASS builder defaults where smem allows).
// Throws with a message on a bad or refused spec (the refusal happens before anything runs on the GPU).
Variant parse_spec(const std::string& spec) {
  std::vector<std::string> tok;
  {
    std::stringstream ss(spec);
    std::string t;
    while (std::getline(ss, t, ':')) tok.push_back(t);
  }
  auto bad = [&](const std::string& why) { return std::runtime_error("variant '" + spec + "': " + why); };
  if (tok.size() < 3) throw bad("expected schedule:tile:stages[:knobs]");
  Variant v;
  if (tok[0] == "coop") v.schedule = "cooperative";
  else if (tok[0] == "pp") v.schedule = "pingpong";
  else throw bad("schedule must be coop or pp");
  int tm = 0, tn = 0;
  if (std::sscanf(tok[1].c_str(), "%dx%d", &tm, &tn) != 2 || tm != k2::BM) throw bad("tile must be 128xN");
  v.bn = tn;
  if (tok[2].size() < 2 || tok[2][0] != 's') throw bad("stages must be sN");
  v.stages = std::atoi(tok[2].c_str() + 1);
  if (!bind_instance(v))
    throw bad("no compiled instance for this schedule/tile/stages (compiled: " + instance_list() + ")");
  v.spec = spec;
  int sc = -1, sd = -1;
  for (size_t i = 3; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t == "c1") v.cluster_m = 1;
    else if (t == "c2") v.cluster_m = 2;
    else if (t == "reuse") v.reuse = 1;
    else if (t == "delay") v.delay = 1;
    else if (t == "np") v.one_per_tile = true;
    else if (t.size() > 2 && t.compare(0, 2, "sc") == 0) sc = std::atoi(t.c_str() + 2);
    else if (t.size() > 2 && t.compare(0, 2, "sd") == 0) sd = std::atoi(t.c_str() + 2);
    else if (t.size() > 2 && t.compare(0, 2, "od") == 0) v.order_depth = std::atoi(t.c_str() + 2);
    else if (t.size() > 1 && t[0] == 'g' && t.find_first_not_of("0123456789", 1) == std::string::npos)
      v.raster = std::atoi(t.c_str() + 1);
    else throw bad("unknown knob '" + t + "'");
  }
  const bool pp = v.schedule == "pingpong";
  v.sd = sd > 0 ? sd : 2;
  v.sc = sc > 0 ? sc : (pp || v.reuse ? 4 : 2);
  if (v.sd < 1 || v.sd > 4) throw bad("StagesD must be 1..4");
  if (v.sc < 1 || v.sc > v.epi_slots) throw bad("StagesC must be 1.." + std::to_string(v.epi_slots));
  if (v.reuse && v.sd > v.sc) throw bad("ReuseSmemC needs StagesD <= StagesC");
  if (!v.reuse && v.sc + v.sd > v.epi_slots)
    throw bad("StagesC + StagesD must fit the " + std::to_string(v.epi_slots) + " epilogue smem slots");
  if (v.order_depth != 1 && v.order_depth != 2) throw bad("order depth must be 1 or 2");
  if (v.delay && v.reuse && v.sc <= v.sd)
    throw bad("refused: DelayTmaStore + ReuseSmemC with StagesC (" + std::to_string(v.sc) + ") <= StagesD (" +
              std::to_string(v.sd) + ") deadlocks: with ReuseSmemC the C slot of subtile i comes back once the store of subtile i+StagesD-1 has "
              "read its smem, and a delayed store is issued only during the next subtile, after that subtile's C load "
              "was waited for, so slot i is free only after the C load of subtile i+StagesD; the C load of subtile "
              "i+StagesC needs slot i back first: a cycle when StagesC <= StagesD. CUTLASS rejects it statically; "
              "not run");
  if (v.raster < 0) throw bad("raster group must be >= 0 (g0 = all m rows)");
  if (v.one_per_tile && v.cluster_m != 1) throw bad("np (one CTA per tile) takes 1x1 clusters only");
  char nm[160];
  std::snprintf(nm, sizeof nm, "%s_128x%dx64_s%d_c%dx1_sc%d_sd%d%s%s%s", pp ? "pp" : "coop", v.bn, v.stages,
                v.cluster_m, v.sc, v.sd, v.reuse ? "_reuse" : "", v.delay ? "_delay" : "",
                pp ? (v.order_depth == 1 ? "_od1" : "_od2") : "");
  v.name = nm;
  if (v.raster != k2::GROUP_M) v.name += "_g" + std::to_string(v.raster);  // default g8: names as before
  if (v.one_per_tile) v.name += "_np";
  return v;
}
// --variants issue5: the variants of issue 5 (pingpong, 2x1 clusters with multicast, epilogue knobs).
const char* kIssue5 =
    "coop:128x256:s4,coop:128x256:s4:c2,coop:128x256:s4:reuse,coop:128x256:s4:delay,coop:128x256:s4:reuse:delay,"
    "pp:128x128:s6,pp:128x128:s6:od1,pp:128x128:s6:c2,pp:128x128:s6:reuse:delay";

// --variants: all (default): the two original cooperative 1x1 variants; issue5: the issue-5 set (kIssue5);
// otherwise a comma-separated list of original names (128x256x64_s4, 256x4, ...) and specs (parse_spec).
// Throws on a bad or refused item.
std::vector<Variant> parse_variant_list(const std::string& variants_arg) {
  std::vector<Variant> vars;
  std::string list = variants_arg == "issue5" ? std::string(kIssue5) : variants_arg;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    if (item == "all") {
      vars.push_back(legacy_variant(256, 4));
      vars.push_back(legacy_variant(128, 6));
    } else if (item == "issue5") {
      throw std::runtime_error("issue5 must be the only --variants item");
    } else if (item.compare(0, 5, "coop:") == 0 || item.compare(0, 3, "pp:") == 0) {
      vars.push_back(parse_spec(item));
    } else if (item == "128x256x64_s4" || item == "256x4") {
      vars.push_back(legacy_variant(256, 4));
    } else if (item == "128x128x64_s6" || item == "128x6") {
      vars.push_back(legacy_variant(128, 6));
    } else if (item == "128x256x64_s2" || item == "256x2") {
      vars.push_back(legacy_variant(256, 2));  // probe-on instances too (traces of a 2-stage ring)
    } else if (item == "128x128x64_s2" || item == "128x2") {
      vars.push_back(legacy_variant(128, 2));
    } else {
      throw std::runtime_error("unknown variant '" + item + "'");
    }
  }
  if (vars.empty()) throw std::runtime_error("no variant selected");
  return vars;
}

// ---------------------------------------------------------------------------------------------
// Misc host helpers
// ---------------------------------------------------------------------------------------------
const char* kSmi =
    "nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
    "power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -i 0 2>/dev/null";


// Times two GEMMs fairly: warm-up of each, then `reps` rounds, each round enqueues A then B back to back,
// every launch between its own pair of events (no host sync inside, so launch gaps stay out).  Both
// see the same clock / power state (the H100 drops its SM clock under the power cap during long runs).
// Returns per-run times in ms: {A runs, B runs}.
template <class FA, class FB>
std::pair<std::vector<double>, std::vector<double>> time_interleaved(FA fa, FB fb, int warm, int reps) {
  std::vector<cudaEvent_t> ev(4 * reps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < warm; ++i) {
    fa();
    fb();
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(ev[4 * i + 0]));
    fa();
    CK(cudaEventRecord(ev[4 * i + 1]));
    fb();
    CK(cudaEventRecord(ev[4 * i + 2]));
    // ev[4i+3] unused (B ends where the next A begins; kept symmetric for clarity)
  }
  CK(cudaEventRecord(ev[4 * reps - 1]));
  CK(cudaEventSynchronize(ev[4 * reps - 1]));
  CK(cudaGetLastError());
  std::vector<double> a, b;
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    CK(cudaEventElapsedTime(&t, ev[4 * i + 0], ev[4 * i + 1]));
    a.push_back(t);
    CK(cudaEventElapsedTime(&t, ev[4 * i + 1], ev[4 * i + 2]));
    b.push_back(t);
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return {a, b};
}

// Times several launchers round-robin: per round, each one's `pre` (stream-ordered setup, outside the
// events) then its launch between its own pair of events.  Returns per-run times in ms, one vector each.
struct Timed {
  std::function<void()> pre, launch;
};
std::vector<std::vector<double>> time_round_robin(const std::vector<Timed>& fs, int warm, int reps) {
  const size_t n = fs.size();
  std::vector<cudaEvent_t> ev(2 * n * reps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < warm; ++i)
    for (auto& f : fs) {
      if (f.pre) f.pre();
      f.launch();
    }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (fs[j].pre) fs[j].pre();
      CK(cudaEventRecord(ev[2 * (i * n + j)]));
      fs[j].launch();
      CK(cudaEventRecord(ev[2 * (i * n + j) + 1]));
    }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<std::vector<double>> out(n);
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < n; ++j) {
      float t = 0;
      CK(cudaEventElapsedTime(&t, ev[2 * (i * n + j)], ev[2 * (i * n + j) + 1]));
      out[j].push_back(t);
    }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return out;
}

void write_file(const std::string& path, const void* data, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  if (bytes && std::fwrite(data, 1, bytes, f) != bytes) throw std::runtime_error("short write " + path);
  std::fclose(f);
}

// Probe raw-buffer summary (traces/probe.cuh layout): per recorded CTA, the SM clock measured as
// clock64 ticks over globaltimer nanoseconds, records kept and dropped.
struct RawSummary {
  int ctas = 0;
  uint64_t records = 0, dropped = 0, unwritten = 0;  // unwritten: kept slots still zero (a probe bug; expect 0)
  std::vector<double> mhz;
};
RawSummary summarize_raw(const std::vector<unsigned char>& raw) {
  RawSummary r;
  if (raw.size() < 64) return r;
  auto u32 = [&](size_t off) {
    uint32_t v;
    std::memcpy(&v, raw.data() + off, 4);
    return v;
  };
  auto u64 = [&](size_t off) {
    uint64_t v;
    std::memcpy(&v, raw.data() + off, 8);
    return v;
  };
  const uint32_t slots = u32(12), warps = u32(16), cap = u32(20);
  const size_t slot_bytes = smpipe_probe::slot_bytes(warps, cap);
  for (uint32_t s = 0; s < slots; ++s) {
    const size_t base = 64 + s * slot_bytes;
    if (u32(base) != 1) continue;
    ++r.ctas;
    uint64_t c0 = u64(base + 24), g0 = u64(base + 32), c1 = 0, g1 = 0;
    for (uint32_t w = 0; w < warps; ++w) {
      const size_t wh = base + 64 + w * 32;
      if (u64(wh + 8) == 0) continue;  // the warp never reached its end
      c1 = std::max(c1, u64(wh + 8));
      g1 = std::max(g1, u64(wh + 16));
      const uint32_t n = u32(wh + 24), kept = std::min(n, cap);
      r.records += kept;
      r.dropped += n > cap ? n - cap : 0;
      const size_t rec0 = base + 64 + size_t(warps) * 32 + size_t(w) * cap * 16;
      for (uint32_t i = 0; i < kept; ++i) r.unwritten += (u32(rec0 + 16 * i + 4) & 0xFF) == 0;
    }
    if (g1 > g0 && c1 > c0) r.mhz.push_back(double(c1 - c0) / double(g1 - g0) * 1e3);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// --sweep: K2 alone, timed per (shape, data, variant) point, with the SM clock each point ran at.
// ---------------------------------------------------------------------------------------------
// A group = shapes x variants (--shapes/--variants, or --group SHAPES@VARIANTS, repeatable).  Per shape: inputs
// random in [-1, 1) (A, B; C zero: alpha 1, beta 0 throughout); a numerics check (D poisoned with NaN, launch,
// rel err ||D - ref||_F / ||ref||_F against cuBLAS fp32-out, non-finite count) of the group's first variant and
// of every variant not yet checked successfully on an earlier shape, all on the random inputs, before any timing
// of the shape; then per data mode (random: those inputs; const: A = B = 1/64 in bf16, C zero) and variant:
// `warm` launches, host sync, `reps` launches back to back, each between its own CUDA events (K2 alone, no
// cuBLAS in between), with Params::clocks set so that CTA 0 records clock64 / %globaltimer at its start and
// end: SM MHz per launch.  The JSON is rewritten (temp file + rename) after every point.
constexpr size_t kClk = 20;  // Params::clocks values per launch (k2_gemm.cuh)

struct SweepGroup {
  std::string text;
  std::vector<Shape> shapes;
  std::vector<Variant> vars;
};

int run_sweep(std::vector<SweepGroup>& groups, const std::vector<std::string>& datas, int warm, int reps,
              const std::string& out_path, const std::string& cmdline, bool flush_l2, size_t flush_bytes,
              size_t flush_stride) {
  const std::string date = utc_now();
  std::vector<std::string> rows;
  std::string smi_before, smi_after, error;
  std::string gpu_name = "";
  int sms = 0;
  std::string cc;
  bool all_ok = true, complete = false;
  std::string data_list;
  for (const auto& d : datas) data_list += (data_list.empty() ? "" : ",") + d;
  auto write_json = [&]() {
    std::ostringstream js;
    js << "{\n  \"schema\": \"smpipe.k2_sweep.v1\",\n  \"date_utc\": " << jstr(date)
       << ",\n  \"command_line\": " << jstr(cmdline) << ",\n  \"gpu\": {\"name\": " << jstr(gpu_name)
       << ", \"sm_count\": " << sms << ", \"cc\": " << jstr(cc) << "},\n  \"nvidia_smi\": {\"query\": "
       << jstr("name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
               "temperature.gpu,clocks_throttle_reasons.active")
       << ", \"before\": " << jstr(smi_before) << ", \"after\": " << jstr(smi_after) << "}"
       << ",\n  \"timing\": "
       << jstr("K2 alone (no cuBLAS in between), alpha=1 beta=0; per point " + std::to_string(warm) +
               " warm-up launches, host sync, then " + std::to_string(reps) +
               " launches back to back on one stream, each between its own pair of CUDA events; ms = median / p10 / "
               "p90 (nearest rank) of those; tflops = 2MNK / ms_median. The same inputs every launch (L2 warm for "
               "what fits in it)." +
               std::string(flush_l2 ? " --flush-l2: before every timed launch (outside its events) a kernel reads a "
                                      "buffer of flush_bytes, one 16-byte word every flush_stride bytes (every word of "
                                      "256 MB, 4-5x the L2, by default: each timed launch starts with a cold L2 holding "
                                      "only clean lines of that buffer)." : ""))
       << ",\n  \"clock\": "
       << jstr("Params::clocks: CTA 0 of every timed launch writes clock64 and %globaltimer at its start (thread 0) "
               "and after its store tail (thread 128); SM MHz = clock64 delta / globaltimer delta * 1000 per launch; "
               "clock_mhz_median/p10/p90 over the timed launches, clock_mhz_pooled = sum of clock deltas / sum of ns "
               "deltas, clock_window_ns_median = the median globaltimer window (short windows: coarser figure); "
               "cta0_cycles: CTA 0's clock64 from its entry, medians over the timed launches, to thread 0's return "
               "from the prologue's barrier (prologue), the load thread's first TMA load (first_tma), consumer "
               "thread 0's first full wait return (first_full) and its first tile's epilogue (first_epilogue), and "
               "its end after the store tail (end); load_kblock: the load thread's cycles from its first k-block's "
               "first TMA load to that of k-block STAGES - 1, over STAGES - 1 (the ring's first pass: every acquire "
               "free); load_kblock_steady: the same from k-block 0 to the first tile's last k-block, over its k-blocks - 1 "
               "(the ring's steady state, whatever bounds it); epilogue_first / epilogue_second: consumer thread 0's epilogue of its first and second tile; "
               "last_cta: the same from the grid's last CTA's entry to its prologue, first TMA load and end, "
               "start_ns its entry after CTA 0's (%globaltimer), sm its %smid (one_per_tile: a grid of one CTA per "
               "tile, the variant's np knob: the last CTA starts on an SM that ran earlier CTAs of the launch); "
               "one store each, no capture probe")
       << ",\n  \"check\": "
       << jstr("per shape, before its timing, on random inputs: the group's first variant and every variant not yet "
               "checked successfully on an earlier shape; D poisoned with NaN, one launch, rel_err = ||D-ref||_F / "
               "||ref||_F against cublasGemmEx (bf16 in, fp32 compute, fp32 out), ok = rel_err < 1e-2 and no "
               "non-finite output. Rows of a checked (shape, variant) carry its rel_err in every data mode; "
               "checked=false rows: rel_err null, ok = the launches ran")
       << ",\n  \"data\": "
       << jstr("random: A, B uniform in [-1, 1) rounded to bf16 (fresh per shape), C zero; const: A = B = 1/64 "
               "(bf16 0x3C80), C zero (D = K/4096 everywhere)")
       << ",\n  \"data_modes\": " << jstr(data_list) << ", \"warm\": " << warm << ", \"reps\": " << reps
       << ", \"l2_flush\": " << (flush_l2 ? "true" : "false") << ", \"flush_bytes\": " << (flush_l2 ? flush_bytes : 0)
       << ", \"flush_stride\": " << flush_stride
       << ",\n  \"complete\": " << (complete ? "true" : "false") << ", \"error\": " << (error.empty() ? "null" : jstr(error))
       << ", \"all_ok\": " << (all_ok ? "true" : "false") << ", \"points\": " << rows.size() << ",\n  \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) js << (i ? "," : "") << "\n    " << rows[i];
    js << "\n  ]\n}\n";
    const std::string s = js.str(), tmp = out_path + ".tmp";
    write_file(tmp, s.data(), s.size());
    if (std::rename(tmp.c_str(), out_path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
  };

  cublasHandle_t h = nullptr;
  std::vector<cudaEvent_t> ev;
  unsigned long long* d_clk = nullptr;
  uint4* d_flush = nullptr;  // --flush-l2
  unsigned* d_sink = nullptr;
  const size_t flush_words = flush_bytes / flush_stride;  // words read
  double* d_acc = nullptr;
  unsigned long long* d_cnt = nullptr;
  bf16 *A = nullptr, *B = nullptr, *Cm = nullptr, *D = nullptr;
  float* R = nullptr;
  auto free_shape = [&] {
    for (void* q : {(void*)A, (void*)B, (void*)Cm, (void*)D, (void*)R})
      if (q) cudaFree(q);
    A = B = Cm = D = nullptr;
    R = nullptr;
  };
  try {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    gpu_name = prop.name;
    cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    std::printf("device: %s, %d SMs, cc %s\n", prop.name, sms, cc.c_str());
    smi_before = smi_after = popen_all(kSmi);
    std::printf("nvidia-smi before: %s\n", smi_before.c_str());
    for (auto& g : groups)
      for (auto& v : g.vars) v.max_clusters = prepare_variant(v, sms);
    CKB(cublasCreate(&h));
    ev.resize(2 * reps);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    const size_t nclk = size_t(warm + reps) * kClk;
    CK(cudaMalloc(&d_clk, nclk * sizeof(unsigned long long)));
    if (flush_l2) {
      CK(cudaMalloc(&d_flush, flush_bytes));
      CK(cudaMemset(d_flush, 0x5A, flush_bytes));
      CK(cudaMalloc(&d_sink, sizeof(unsigned)));
    }
    CK(cudaMalloc(&d_acc, 2 * sizeof(double)));
    CK(cudaMalloc(&d_cnt, sizeof(unsigned long long)));
    std::vector<unsigned long long> hclk(nclk);
    uint64_t seed = 0x5eed0000ull + (uint64_t)std::time(nullptr);
    std::vector<std::string> checked_ok;  // variant names checked successfully on some shape
    write_json();

    for (auto& grp : groups) {
      for (const Shape& sh : grp.shapes) {
        const size_t M = sh.M, N = sh.N, K = sh.K;
        const double flops = 2.0 * M * N * K;
        CK(cudaMalloc(&A, M * K * 2));
        CK(cudaMalloc(&B, N * K * 2));
        CK(cudaMalloc(&Cm, M * N * 2));
        CK(cudaMalloc(&D, M * N * 2));
        CK(cudaMalloc(&R, M * N * 4));
        auto fill_random = [&](bf16* p, size_t n) {
          k_fill_random<<<4 * sms, 256>>>(p, n, seed);
          seed += 0x1234567ull;
          CK(cudaGetLastError());
        };
        auto fill_u16 = [&](bf16* p, size_t n, uint16_t val) {
          k_fill_u16<<<4 * sms, 256>>>(reinterpret_cast<uint16_t*>(p), n, val);
          CK(cudaGetLastError());
        };
        fill_random(A, M * K);
        fill_random(B, N * K);
        fill_u16(Cm, M * N, 0);
        const CUtensorMap tA = make_map(A, M, K, k2::BM, k2::BK, CU_TENSOR_MAP_SWIZZLE_128B);
        struct Geo {
          CUtensorMap tB, tC, tD;
          int grid, tiles, cluster_tiles, raster_rows;
        };
        std::vector<Geo> geo(grp.vars.size());
        for (size_t i = 0; i < grp.vars.size(); ++i) {
          const Variant& v = grp.vars[i];
          Geo& q = geo[i];
          q.tB = make_map(B, N, K, v.bn / v.cluster_m, k2::BK, CU_TENSOR_MAP_SWIZZLE_128B);
          q.tC = make_map(Cm, M, N, v.epi_m, k2::EPI_N, CU_TENSOR_MAP_SWIZZLE_64B);
          q.tD = make_map(D, M, N, v.epi_m, k2::EPI_N, CU_TENSOR_MAP_SWIZZLE_64B);
          const int mblk = int((M + k2::BM - 1) / k2::BM), nblk = int((N + v.bn - 1) / v.bn);
          const int mrow = (mblk + v.cluster_m - 1) / v.cluster_m;
          q.tiles = mblk * nblk;
          q.cluster_tiles = mrow * nblk;
          q.grid = v.one_per_tile      ? q.tiles
                   : v.cluster_m == 1 ? std::min(sms, q.tiles)
                                      : v.cluster_m * std::min(v.max_clusters, q.cluster_tiles);
          q.raster_rows = v.raster_rows(mrow);
        }
        auto launch = [&](size_t i, unsigned long long* clk) {
          k2::Params p{(int)M, (int)N, (int)K, 1.0f, 0.0f};
          grp.vars[i].apply(p);
          p.clocks = clk;
          grp.vars[i].launch(tA, geo[i].tB, geo[i].tC, geo[i].tD, p, geo[i].grid, 0);
        };
        char shname[64];
        std::snprintf(shname, sizeof shname, "%zux%zux%zu", M, N, K);
        std::printf("\n== shape %s (%s) ==\n", shname, grp.text.c_str());
        std::fflush(stdout);

        // ---- checks (random inputs, before the timing) ----
        std::vector<int> checked(grp.vars.size(), 0), cok(grp.vars.size(), 1);
        std::vector<double> cerr(grp.vars.size(), NAN);
        std::vector<unsigned long long> cnf(grp.vars.size(), 0);
        bool ref_done = false;
        for (size_t i = 0; i < grp.vars.size(); ++i) {
          const Variant& v = grp.vars[i];
          const bool seen = std::find(checked_ok.begin(), checked_ok.end(), v.name) != checked_ok.end();
          if (i != 0 && seen) continue;
          if (!ref_done) {  // fp32 reference: row-major D (M x N) = column-major D^T = B_rm . A_rm^T
            const float one = 1.f, zero = 0.f;
            CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B, CUDA_R_16BF, (int)K, A,
                             CUDA_R_16BF, (int)K, &zero, R, CUDA_R_32F, (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            ref_done = true;
          }
          fill_u16(D, M * N, 0xFFFFu);  // NaN
          launch(i, nullptr);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
          CK(cudaMemset(d_acc, 0, 2 * sizeof(double)));
          CK(cudaMemset(d_cnt, 0, sizeof(unsigned long long)));
          k_err<<<4 * sms, 256>>>(D, R, M * N, d_acc, d_cnt);
          CK(cudaGetLastError());
          double hacc[2];
          CK(cudaMemcpy(hacc, d_acc, sizeof hacc, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(&cnf[i], d_cnt, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
          cerr[i] = std::sqrt(hacc[0] / hacc[1]);
          checked[i] = 1;
          cok[i] = cerr[i] < 1e-2 && cnf[i] == 0;
          if (cok[i] && !seen) checked_ok.push_back(v.name);
          all_ok = all_ok && cok[i];
          std::printf("check %-44s rel err %.3e, non-finite %llu -> %s\n", v.name.c_str(), cerr[i], cnf[i],
                      cok[i] ? "OK" : "FAIL");
        }
        std::fflush(stdout);

        // ---- timing ----
        std::string filled = "random";
        for (const std::string& data : datas) {
          if (data != filled) {
            if (data == "const") {
              fill_u16(A, M * K, 0x3C80u);  // bf16 1/64
              fill_u16(B, N * K, 0x3C80u);
            } else {
              fill_random(A, M * K);
              fill_random(B, N * K);
            }
            filled = data;
          }
          for (size_t i = 0; i < grp.vars.size(); ++i) {
            const Variant& v = grp.vars[i];
            const Geo& q = geo[i];
            std::vector<double> ms, mhz, win;
            std::vector<double> steps[5];  // CTA 0's cycles from entry: prologue, first TMA, first full, epilogue, end
            std::vector<double> kb_load;   // the load thread's k-block on the ring's first pass (cycles)
            std::vector<double> kb_steady;  // ... from k-block 0 to the first tile's last (the ring's steady state)
            const int k_blocks = int((K + k2::BK - 1) / k2::BK);
            std::vector<double> epi[2];    // consumer thread 0's epilogue of its first and second tile (cycles)
            std::vector<double> last[4];   // the last CTA's cycles from its entry: prologue, first TMA, end; its start (ns after CTA 0's)
            std::vector<double> last_sm;   // its SM
            double sum_dc = 0, sum_dg = 0;
            if (cok[i]) {
              CK(cudaMemset(d_clk, 0, nclk * sizeof(unsigned long long)));
              for (int w = 0; w < warm; ++w) launch(i, d_clk + kClk * w);
              CK(cudaGetLastError());
              CK(cudaDeviceSynchronize());
              for (int r = 0; r < reps; ++r) {
                if (flush_l2) k_l2_flush_read<<<4 * sms, 512>>>(d_flush, flush_words, flush_stride / sizeof(uint4), d_sink);
                CK(cudaEventRecord(ev[2 * r]));
                launch(i, d_clk + kClk * (warm + r));
                CK(cudaEventRecord(ev[2 * r + 1]));
              }
              CK(cudaEventSynchronize(ev[2 * reps - 1]));
              CK(cudaGetLastError());
              CK(cudaMemcpy(hclk.data(), d_clk, nclk * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
              for (int r = 0; r < reps; ++r) {
                float t = 0;
                CK(cudaEventElapsedTime(&t, ev[2 * r], ev[2 * r + 1]));
                ms.push_back(t);
                const unsigned long long* c = &hclk[kClk * (warm + r)];
                if (c[2] > c[0] && c[3] > c[1]) {
                  const double dc = double(c[2] - c[0]), dg = double(c[3] - c[1]);
                  mhz.push_back(dc / dg * 1e3);
                  win.push_back(dg);
                  sum_dc += dc;
                  sum_dg += dg;
                  const unsigned long long at[5] = {c[4], c[5], c[6], c[7], c[2]};
                  for (int k = 0; k < 5; ++k)
                    if (at[k] >= c[0]) steps[k].push_back(double(at[k] - c[0]));
                  if (v.stages > 1 && c[8] > c[5]) kb_load.push_back(double(c[8] - c[5]) / (v.stages - 1));
                  if (k_blocks > 1 && c[19] > c[5]) kb_steady.push_back(double(c[19] - c[5]) / (k_blocks - 1));
                  if (c[9] > c[7] && c[7] > 0) epi[0].push_back(double(c[9] - c[7]));
                  if (c[11] > c[10] && c[10] > 0) epi[1].push_back(double(c[11] - c[10]));
                  if (c[16] > c[12] && c[13] >= c[1]) {
                    const unsigned long long lat[3] = {c[14], c[15], c[16]};
                    for (int k = 0; k < 3; ++k)
                      if (lat[k] >= c[12]) last[k].push_back(double(lat[k] - c[12]));
                    last[3].push_back(double(c[13] - c[1]));
                    last_sm.push_back(double(c[18]));
                  }
                }
              }
            }
            const bool timed = !ms.empty();
            const double md = timed ? median(ms) : NAN, p10 = timed ? pct(ms, 0.1) : NAN,
                         p90 = timed ? pct(ms, 0.9) : NAN;
            const double mn = timed ? pct(ms, 0.0) : NAN, mx = timed ? pct(ms, 1.0) : NAN;
            const bool hasc = !mhz.empty();
            const double cmd = hasc ? median(mhz) : NAN;
            const bool ok = cok[i] && timed;
            all_ok = all_ok && ok;
            std::printf("%-16s %-6s %-44s %8.4f ms (p10-p90 %.4f-%.4f) %7.1f TFLOP/s  %6.0f MHz  grid %d tiles %d%s\n",
                        shname, data.c_str(), v.name.c_str(), md, p10, p90, flops / (md * 1e-3) / 1e12, cmd, q.grid,
                        q.tiles, ok ? "" : "  FAIL");
            std::fflush(stdout);
            std::ostringstream r;
            r << "{\"M\": " << M << ", \"N\": " << N << ", \"K\": " << K << ", \"data\": " << jstr(data)
              << ", \"spec\": " << jstr(v.spec) << ", \"variant\": " << jstr(v.name)
              << ", \"schedule\": " << jstr(v.schedule) << ", \"tile_m\": " << k2::BM << ", \"tile_n\": " << v.bn
              << ", \"tile_k\": " << k2::BK << ", \"stages\": " << v.stages << ", \"cluster_m\": " << v.cluster_m
              << ", \"raster_group\": " << v.raster << ", \"raster_rows\": " << q.raster_rows
              << ", \"stages_c\": " << v.sc << ", \"stages_d\": " << v.sd << ", \"reuse\": " << v.reuse
              << ", \"delay\": " << v.delay << ", \"order_depth\": "
              << (v.schedule == "pingpong" ? std::to_string(v.order_depth) : std::string("null"))
              << ", \"epi_tile\": [" << v.epi_m << ", " << k2::EPI_N << "], \"grid\": " << q.grid
              << ", \"tiles\": " << q.tiles << ", \"cluster_tiles\": " << q.cluster_tiles
              << ", \"k_blocks\": " << k_blocks << ", \"smem_bytes\": " << v.smem << ", \"warm\": " << warm
              << ", \"reps\": " << reps << ", \"ms_median\": " << jnum(md) << ", \"ms_p10\": " << jnum(p10)
              << ", \"ms_p90\": " << jnum(p90) << ", \"ms_min\": " << jnum(mn) << ", \"ms_max\": " << jnum(mx)
              << ", \"tflops\": " << jnum(flops / (md * 1e-3) / 1e12) << ", \"clock_mhz_median\": " << jnum(cmd)
              << ", \"clock_mhz_p10\": " << jnum(hasc ? pct(mhz, 0.1) : NAN)
              << ", \"clock_mhz_p90\": " << jnum(hasc ? pct(mhz, 0.9) : NAN)
              << ", \"clock_mhz_pooled\": " << jnum(sum_dg > 0 ? sum_dc / sum_dg * 1e3 : NAN)
              << ", \"clock_window_ns_median\": " << jnum(hasc ? median(win) : NAN)
              << ", \"cta0_cycles\": {\"prologue\": " << jnum(steps[0].empty() ? NAN : median(steps[0]))
              << ", \"first_tma\": " << jnum(steps[1].empty() ? NAN : median(steps[1]))
              << ", \"first_full\": " << jnum(steps[2].empty() ? NAN : median(steps[2]))
              << ", \"first_epilogue\": " << jnum(steps[3].empty() ? NAN : median(steps[3]))
              << ", \"end\": " << jnum(steps[4].empty() ? NAN : median(steps[4]))
              << ", \"load_kblock\": " << jnum(kb_load.empty() ? NAN : median(kb_load))
              << ", \"load_kblock_steady\": " << jnum(kb_steady.empty() ? NAN : median(kb_steady))

              << ", \"epilogue_first\": " << jnum(epi[0].empty() ? NAN : median(epi[0]))
              << ", \"epilogue_second\": " << jnum(epi[1].empty() ? NAN : median(epi[1])) << "}"
              << ", \"one_per_tile\": " << (v.one_per_tile ? "true" : "false")
              << ", \"last_cta\": {\"prologue\": " << jnum(last[0].empty() ? NAN : median(last[0]))
              << ", \"first_tma\": " << jnum(last[1].empty() ? NAN : median(last[1]))
              << ", \"end\": " << jnum(last[2].empty() ? NAN : median(last[2]))
              << ", \"start_ns\": " << jnum(last[3].empty() ? NAN : median(last[3]))
              << ", \"sm\": " << jnum(last_sm.empty() ? NAN : median(last_sm)) << "}"
              << ", \"checked\": " << (checked[i] ? "true" : "false") << ", \"rel_err\": " << jnum(cerr[i])
              << ", \"nonfinite\": " << (checked[i] ? std::to_string(cnf[i]) : std::string("null"))
              << ", \"ok\": " << (ok ? "true" : "false") << "}";
            rows.push_back(r.str());
            write_json();
          }
        }
        free_shape();
        smi_after = popen_all(kSmi);
        write_json();
      }
    }
    complete = true;
    smi_after = popen_all(kSmi);
    std::printf("\nnvidia-smi after: %s\n", smi_after.c_str());
    write_json();
  } catch (const std::exception& e) {
    error = e.what();
    all_ok = false;
    std::fprintf(stderr, "error: %s\n", e.what());
    try {
      smi_after = popen_all(kSmi);
      write_json();
    } catch (const std::exception& e2) {
      std::fprintf(stderr, "error: %s\n", e2.what());
    }
    return 1;
  }
  free_shape();
  for (auto& e : ev) cudaEventDestroy(e);
  cudaFree(d_clk);
  if (d_flush) cudaFree(d_flush);
  if (d_sink) cudaFree(d_sink);
  cudaFree(d_acc);
  cudaFree(d_cnt);
  if (h) cublasDestroy(h);
  std::printf("wrote %s: %zu points (%s)\n", out_path.c_str(), rows.size(), all_ok ? "all ok" : "SOME FAILED");
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = "k2_gemm.json";
  std::string shapes_arg = "4096x4096x4096,8192x8192x8192,16384x4096x2048,2048x8192x16384,3000x5000x2040,3000x5000x2048,3072x5120x2048";
  std::string variants_arg = "all";
  int reps = 30, warm = 5;
  bool skip_bench = false;
  float bench_beta = 0.f;  // != 0: also time alpha=1, beta=B (C loaded) against cuBLAS with the same beta
  std::string trace_prefix, overhead_path, trace_beta_arg = "0";
  int trace_ctas = 4, trace_first = 0, trace_tiles = 0, trace_kb_sample = 1;
  bool sweep = false, reps_set = false, warm_set = false, shapes_set = false, variants_set = false;
  bool flush_l2 = false;  // --sweep --flush-l2: a cold L2 before every timed launch
  size_t flush_bytes = size_t(256) << 20, flush_stride = 16;
  std::string data_arg = "random";
  std::vector<std::string> group_args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
      return argv[++i];
    };
    if (a == "--out") out_path = next();
    else if (a == "--shapes") { shapes_arg = next(); shapes_set = true; }
    else if (a == "--reps") { reps = std::atoi(next().c_str()); reps_set = true; }
    else if (a == "--warm") { warm = std::atoi(next().c_str()); warm_set = true; }
    else if (a == "--variants") { variants_arg = next(); variants_set = true; }
    else if (a == "--quick") { reps = 5; warm = 2; reps_set = warm_set = true; }
    else if (a == "--sweep") sweep = true;
    else if (a == "--flush-l2") flush_l2 = true;
    else if (a == "--flush-mb") flush_bytes = size_t(std::atoll(next().c_str())) << 20;
    else if (a == "--flush-stride") flush_stride = size_t(std::atoll(next().c_str()));
    else if (a == "--data") data_arg = next();
    else if (a == "--group") group_args.push_back(next());
    else if (a == "--skip-bench") skip_bench = true;
    else if (a == "--bench-beta") bench_beta = std::strtof(next().c_str(), nullptr);
    else if (a == "--trace") trace_prefix = next();
    else if (a == "--trace-ctas") trace_ctas = std::atoi(next().c_str());
    else if (a == "--trace-first") trace_first = std::atoi(next().c_str());
    else if (a == "--trace-tiles") trace_tiles = std::atoi(next().c_str());
    else if (a == "--trace-kb-sample") trace_kb_sample = std::atoi(next().c_str());
    else if (a == "--trace-beta") trace_beta_arg = next();
    else if (a == "--probe-overhead") overhead_path = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += (i ? " " : "") + std::string(argv[i]);
  if (reps < 1 || warm < 0) {
    std::fprintf(stderr, "bad --reps / --warm\n");
    return 2;
  }
  if (flush_l2 && !sweep) {
    std::fprintf(stderr, "--flush-l2 needs --sweep\n");
    return 2;
  }
  if (flush_bytes < 16 || flush_stride < 16 || flush_stride % 16 || flush_stride > flush_bytes) {
    std::fprintf(stderr, "bad --flush-mb / --flush-stride\n");
    return 2;
  }
  if (sweep) {
    // --sweep [--shapes S --variants V] [--group S@V ...] [--data random|const|both] [--reps N] [--warm N]
    if (!trace_prefix.empty() || !overhead_path.empty() || bench_beta != 0.f || skip_bench) {
      std::fprintf(stderr, "--sweep does not combine with --trace / --probe-overhead / --bench-beta / --skip-bench\n");
      return 2;
    }
    if (!reps_set) reps = 10;
    if (!warm_set) warm = 3;
    std::vector<std::string> datas;
    if (data_arg == "random" || data_arg == "const") datas = {data_arg};
    else if (data_arg == "both") datas = {"random", "const"};
    else {
      std::fprintf(stderr, "--data must be random, const or both\n");
      return 2;
    }
    std::vector<SweepGroup> groups;
    try {
      auto add = [&](const std::string& sh, const std::string& va) {
        SweepGroup g;
        g.text = sh + "@" + va;
        g.shapes = parse_shapes(sh);
        g.vars = parse_variant_list(va);
        for (const Shape& x : g.shapes)
          if (x.M < 1 || x.N < 8 || x.K < 8 || x.N % 8 || x.K % 8)
            throw std::runtime_error("shape " + std::to_string(x.M) + "x" + std::to_string(x.N) + "x" +
                                     std::to_string(x.K) + ": N and K must be positive multiples of 8 (TMA strides)");
        if (g.shapes.empty()) throw std::runtime_error("group '" + g.text + "' has no shape");
        groups.push_back(g);
      };
      if (shapes_set || variants_set) add(shapes_arg, variants_arg);
      for (const std::string& ga : group_args) {
        const size_t at = ga.find('@');
        if (at == std::string::npos) throw std::runtime_error("--group expects SHAPES@VARIANTS, got '" + ga + "'");
        add(ga.substr(0, at), ga.substr(at + 1));
      }
      if (groups.empty()) throw std::runtime_error("--sweep needs --shapes/--variants or --group SHAPES@VARIANTS");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    }
    size_t points = 0;
    for (const auto& g : groups) points += g.shapes.size() * g.vars.size() * datas.size();
    std::printf("sweep: %zu groups, %zu points, data %s, warm %d, reps %d -> %s\n", groups.size(), points,
                data_arg.c_str(), warm, reps, out_path.c_str());
    return run_sweep(groups, datas, warm, reps, out_path, cmdline, flush_l2, flush_bytes, flush_stride);
  }
#if !K2_WITH_PROBE
  if (!trace_prefix.empty() || !overhead_path.empty()) {
    std::fprintf(stderr, "--trace / --probe-overhead need the probe build (cmake -DK2_PROBE=ON)\n");
    return 2;
  }
#endif
  std::vector<float> trace_betas;
  {
    std::stringstream ss(trace_beta_arg);
    std::string item;
    while (std::getline(ss, item, ',')) trace_betas.push_back(std::strtof(item.c_str(), nullptr));
  }
  if (trace_ctas < 1 || trace_first < 0 || trace_tiles < 0 || trace_kb_sample < 1) {
    std::fprintf(stderr, "bad --trace-ctas / --trace-first / --trace-tiles / --trace-kb-sample\n");
    return 2;
  }
#if K2_WITH_PROBE
  const bool kb_sampling = k2probe::kb_sampling();
#else
  const bool kb_sampling = false;
#endif
  if (trace_kb_sample > 1 && !kb_sampling) {
    std::fprintf(stderr, "--trace-kb-sample %d: this k2_gemm's probe keeps every k-block (configure with "
                         "-DK2_PROBE_KB_SAMPLING=ON)\n", trace_kb_sample);
    return 2;
  }
  // Variants (parsed and checked before anything touches the GPU: a refused configuration never runs).
  //   all (default): the two original cooperative 1x1 variants; issue5: the issue-5 set (kIssue5); otherwise a
  //   comma-separated list of original names (128x256x64_s4, 256x4, ...) and specs (parse_spec).
  std::vector<Variant> vars;
  try {
    vars = parse_variant_list(variants_arg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  for (const Variant& v : vars)
    std::printf("variant %s: %s, tile 128x%dx64, %d stages, cluster %dx1, epilogue %dx32 StagesC %d StagesD %d%s%s, "
                "smem %d B\n", v.name.c_str(), v.schedule.c_str(), v.bn, v.stages, v.cluster_m, v.epi_m, v.sc, v.sd,
                v.reuse ? " ReuseSmemC" : "", v.delay ? " DelayTmaStore" : "", v.smem);

  try {
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("device: %s, %d SMs, cc %d.%d\n", prop.name, sms, prop.major, prop.minor);
    const std::string smi_start = popen_all(kSmi);

    for (auto& v : vars) {
      v.max_clusters = prepare_variant(v, sms);
#if K2_WITH_PROBE
      v.probed = v.cluster_m == 1 && k2probe::has(v.bn, v.stages, v.schedule == "pingpong");
      if (v.probed) CK(k2probe::prepare(v.bn, v.stages, v.schedule == "pingpong"));
#endif
    }
    std::ostringstream js_overhead;
    bool first_overhead = true;

    cublasHandle_t h;
    CKB(cublasCreate(&h));

    double* d_acc;
    unsigned long long* d_cnt;
    CK(cudaMalloc(&d_acc, 2 * sizeof(double)));
    CK(cudaMalloc(&d_cnt, sizeof(unsigned long long)));

    std::ostringstream js_shapes;
    bool first_shape = true;
    std::string smi_busy;
    uint64_t seed = 0x5eed0000ull + (uint64_t)std::time(nullptr);
    bool all_ok = true;

    struct Row {
      std::string shape, var;
      double ours, cub, err0, err1;
    };
    std::vector<Row> table;

    for (const Shape& sh : parse_shapes(shapes_arg)) {
      const size_t M = sh.M, N = sh.N, K = sh.K;
      if (K % 8 || N % 8) throw std::runtime_error("K and N must be multiples of 8 (TMA strides)");
      bf16 *A, *B, *Cm, *D, *Dc;
      float* R;
      CK(cudaMalloc(&A, M * K * 2));
      CK(cudaMalloc(&B, N * K * 2));
      CK(cudaMalloc(&Cm, M * N * 2));
      CK(cudaMalloc(&D, M * N * 2));
      CK(cudaMalloc(&Dc, M * N * 2));
      CK(cudaMalloc(&R, M * N * 4));
      const double flops = 2.0 * M * N * K;

      auto fill = [&](bf16* p, size_t n) {
        k_fill_random<<<4 * sms, 256>>>(p, n, seed);
        seed += 0x1234567ull;
        CK(cudaGetLastError());
      };
      auto poison = [&](bf16* p, size_t n) {
        k_fill_u16<<<4 * sms, 256>>>(reinterpret_cast<uint16_t*>(p), n, 0xFFFFu);  // bf16 NaN
        CK(cudaGetLastError());
      };
      // fp32 reference via cuBLAS: row-major D (M x N) = column-major D^T (N x M) = B_rm(NxK) . A_rm(MxK)^T
      auto cublas_ref = [&](float alpha, float beta) {
        if (beta != 0.f) {
          k_bf16_to_f32<<<4 * sms, 256>>>(Cm, R, M * N);
          CK(cudaGetLastError());
        }
        CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B, CUDA_R_16BF, (int)K, A,
                         CUDA_R_16BF, (int)K, &beta, R, CUDA_R_32F, (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      auto cublas_bf16 = [&](float alpha, float beta) {
        CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B, CUDA_R_16BF, (int)K, A,
                         CUDA_R_16BF, (int)K, &beta, Dc, CUDA_R_16BF, (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      auto rel_err = [&](const bf16* Dp, unsigned long long* nonfinite) {
        CK(cudaMemset(d_acc, 0, 2 * sizeof(double)));
        CK(cudaMemset(d_cnt, 0, sizeof(unsigned long long)));
        k_err<<<4 * sms, 256>>>(Dp, R, M * N, d_acc, d_cnt);
        CK(cudaGetLastError());
        double hacc[2];
        CK(cudaMemcpy(hacc, d_acc, sizeof hacc, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(nonfinite, d_cnt, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        return std::sqrt(hacc[0] / hacc[1]);
      };
      // CPU float64 check of sampled elements of a bf16 result against the inputs (validates the cuBLAS
      // reference call too).  Returns max |d - exact| / (|exact| + sqrt(K)*2^-8 scale) style relative error.
      auto spot = [&](const bf16* Dp, float alpha, float beta) {
        const int S = 64;
        std::mt19937_64 rng(seed);
        std::vector<uint16_t> arow(K), brow(K);
        double worst = 0;
        for (int i = 0; i < S; ++i) {
          size_t m = rng() % M, n = rng() % N;
          if (i == 0) { m = M - 1; n = N - 1; }
          CK(cudaMemcpy(arow.data(), A + m * K, K * 2, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(brow.data(), B + n * K, K * 2, cudaMemcpyDeviceToHost));
          uint16_t cval = 0, dval = 0;
          CK(cudaMemcpy(&cval, Cm + m * N + n, 2, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(&dval, Dp + m * N + n, 2, cudaMemcpyDeviceToHost));
          double s = 0;
          for (size_t k = 0; k < K; ++k) s += double(bf2f(arow[k])) * double(bf2f(brow[k]));
          double exact = alpha * s + (beta != 0.f ? beta * double(bf2f(cval)) : 0.0);
          double scale = std::sqrt(double(K) / 9.0);  // rms of a sum of K products of U(-1,1) values
          double e = std::fabs(double(bf2f(dval)) - exact) / scale;
          if (!(e == e)) e = INFINITY;
          worst = std::max(worst, e);
        }
        return worst;
      };

      char shname[64];
      std::snprintf(shname, sizeof shname, "%zux%zux%zu", M, N, K);
      std::printf("\n== shape %s (M x N x K) ==\n", shname);

      // ---------------- correctness ----------------
      fill(A, M * K);
      fill(B, N * K);
      fill(Cm, M * N);
      const CUtensorMap tA = make_map(A, M, K, k2::BM, k2::BK, CU_TENSOR_MAP_SWIZZLE_128B);

      std::ostringstream js_vars;
      bool first_var = true;
      // cuBLAS bf16 spot check (once per shape, beta = 0) and timing
      double cub_err = 0, cub_spot = 0;
      {
        poison(Dc, M * N);
        cublas_ref(1.f, 0.f);
        cublas_bf16(1.f, 0.f);
        CK(cudaDeviceSynchronize());
        unsigned long long nf = 0;
        cub_err = rel_err(Dc, &nf);
        cub_spot = spot(Dc, 1.f, 0.f);
        std::printf("cuBLAS bf16-out vs fp32 ref: rel err %.3e (non-finite %llu), spot %.3e\n", cub_err, nf, cub_spot);
      }

      for (const Variant& v : vars) {
        // B box: the whole BN x 64 tile, or (2x1 cluster) this CTA's half of it, multicast to both CTAs
        const CUtensorMap tB = make_map(B, N, K, v.bn / v.cluster_m, k2::BK, CU_TENSOR_MAP_SWIZZLE_128B);
        const CUtensorMap tC = make_map(Cm, M, N, v.epi_m, k2::EPI_N, CU_TENSOR_MAP_SWIZZLE_64B);
        const CUtensorMap tD = make_map(D, M, N, v.epi_m, k2::EPI_N, CU_TENSOR_MAP_SWIZZLE_64B);
        const int mblk = int((M + k2::BM - 1) / k2::BM), nblk = int((N + v.bn - 1) / v.bn);
        const int tiles = mblk * nblk;
        const int cluster_tiles = ((mblk + v.cluster_m - 1) / v.cluster_m) * nblk;
        // persistent grid: one CTA per SM (1x1), or as many clusters as fit at once, at most one per cluster tile
        const int grid = v.cluster_m == 1 ? std::min(sms, tiles) : v.cluster_m * std::min(v.max_clusters, cluster_tiles);
        auto ours = [&](float alpha, float beta) {
          k2::Params p{(int)M, (int)N, (int)K, alpha, beta};
          v.apply(p);
          v.launch(tA, tB, tC, tD, p, grid, 0);
        };
        // check 1: beta = 0 (C is never read), fresh inputs drawn above
        double errs[2];
        unsigned long long nfs[2];
        double spots[2];
        const float alphas[2] = {1.0f, 0.75f}, betas[2] = {0.0f, 0.5f};
        for (int c = 0; c < 2; ++c) {
          if (c == 1) {  // fresh inputs for the beta != 0 check
            fill(A, M * K);
            fill(B, N * K);
            fill(Cm, M * N);
          }
          poison(D, M * N);
          ours(alphas[c], betas[c]);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
          cublas_ref(alphas[c], betas[c]);
          CK(cudaDeviceSynchronize());
          errs[c] = rel_err(D, &nfs[c]);
          spots[c] = spot(D, alphas[c], betas[c]);
        }
        // repeatability: same inputs again, result must be bitwise identical
        std::vector<uint16_t> h1(std::min<size_t>(M * N, 1 << 22)), h2(h1.size());
        CK(cudaMemcpy(h1.data(), D, h1.size() * 2, cudaMemcpyDeviceToHost));
        poison(D, M * N);
        ours(alphas[1], betas[1]);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h2.data(), D, h2.size() * 2, cudaMemcpyDeviceToHost));
        const bool repeat_ok = std::memcmp(h1.data(), h2.data(), h1.size() * 2) == 0;
        const bool ok = errs[0] < 1e-2 && errs[1] < 1e-2 && nfs[0] == 0 && nfs[1] == 0 && repeat_ok &&
                        spots[0] < 0.05 && spots[1] < 0.05;
        all_ok = all_ok && ok;
        std::printf("[%s] rel err beta=0: %.3e (non-finite %llu, spot %.3e) | alpha=.75 beta=.5: %.3e (non-finite %llu, "
                    "spot %.3e) | repeat %s -> %s\n",
                    v.name.c_str(), errs[0], nfs[0], spots[0], errs[1], nfs[1], spots[1], repeat_ok ? "same" : "DIFFERS",
                    ok ? "OK" : "FAIL");
        std::fflush(stdout);

        // ---------------- timing (alpha = 1, beta = 0), ours / cuBLAS / ours again ----------------
        double t_ours = NAN, t_cub = NAN, o10 = NAN, o90 = NAN, c10 = NAN, c90 = NAN;
        double tb_ours = NAN, tb_cub = NAN;  // --bench-beta: medians with C loaded (cuBLAS: C = its own D, in place)
        if (ok && !skip_bench) {
          auto ab = time_interleaved([&] { ours(1.f, 0.f); }, [&] { cublas_bf16(1.f, 0.f); }, warm, reps);
          t_ours = median(ab.first);
          t_cub = median(ab.second);
          o10 = pct(ab.first, 0.1), o90 = pct(ab.first, 0.9), c10 = pct(ab.second, 0.1), c90 = pct(ab.second, 0.9);
          if (bench_beta != 0.f) {
            auto bb = time_interleaved([&] { ours(1.f, bench_beta); }, [&] { cublas_bf16(1.f, bench_beta); }, warm, reps);
            tb_ours = median(bb.first);
            tb_cub = median(bb.second);
            std::printf("[%s] beta=%g: ours %.3f ms (%.1f TFLOP/s) | cuBLAS %.3f ms (%.1f TFLOP/s) | ratio %.3f\n",
                        v.name.c_str(), bench_beta, tb_ours, flops / (tb_ours * 1e-3) / 1e12, tb_cub,
                        flops / (tb_cub * 1e-3) / 1e12, tb_cub / tb_ours);
          }
          if (M * N * K >= 8192ull * 8192 * 8192 && smi_busy.empty()) {
            // nvidia-smi while our kernel runs back to back
            for (int i = 0; i < 200; ++i) ours(1.f, 0.f);
            CK(cudaGetLastError());
            smi_busy = popen_all(kSmi);
            CK(cudaDeviceSynchronize());
          }
        }
        const double tf_ours = flops / (t_ours * 1e-3) / 1e12;
        const double tf_cub = flops / (t_cub * 1e-3) / 1e12;
        std::printf("[%s] grid %d, %d tiles: ours %.3f ms (%.1f TFLOP/s, p10-p90 %.3f-%.3f ms) | cuBLAS %.3f ms "
                    "(%.1f TFLOP/s, p10-p90 %.3f-%.3f ms) | ratio %.3f\n",
                    v.name.c_str(), grid, tiles, t_ours, tf_ours, o10, o90, t_cub, tf_cub, c10, c90, tf_ours / tf_cub);
        std::fflush(stdout);
        table.push_back({shname, v.name, tf_ours, tf_cub, errs[0], errs[1]});

        js_vars << (first_var ? "" : ",") << "\n      {\"variant\": " << jstr(v.name)
                << ", \"schedule\": " << jstr(v.schedule)
                << ", \"tile\": [" << k2::BM << ", " << v.bn << ", " << k2::BK << "]"
                << (v.schedule == "pingpong" ? ", \"tile_per\": \"consumer warpgroup (2 tiles in flight per CTA)\""
                                             : ", \"tile_per\": \"CTA (2 consumer warpgroups x 64 rows)\"")
                << ", \"cluster\": [" << v.cluster_m << ", 1, 1]"
                << ", \"multicast\": " << (v.cluster_m > 1 ? "\"B (half tile per CTA, .multicast::cluster to both)\"" : "null")
                << ", \"epilogue\": {\"epi_tile\": [" << v.epi_m << ", " << k2::EPI_N << "], \"stages_c\": " << v.sc
                << ", \"stages_d\": " << v.sd << ", \"reuse_smem_c\": " << (v.reuse ? "true" : "false")
                << ", \"delay_tma_store\": " << (v.delay ? "true" : "false") << "}"
                << (v.schedule == "pingpong" ? ", \"order_depth\": " + std::to_string(v.order_depth) : std::string())
                << ", \"raster_group\": " << v.raster
                << ",\n       \"tile_m\": " << k2::BM << ", \"tile_n\": " << v.bn << ", \"tile_k\": " << k2::BK
                << ", \"stages\": " << v.stages << ", \"epilogue_tile\": [" << v.epi_m << ", " << k2::EPI_N
                << "], \"stages_c\": " << v.sc << ", \"stages_d\": " << v.sd
                << ", \"smem_bytes\": " << v.smem << ", \"grid\": " << grid << ", \"tiles\": " << tiles
                << ",\n       \"ms_ours_median\": " << jnum(t_ours) << ", \"ms_ours_p10_p90\": [" << jnum(o10) << ", "
                << jnum(o90) << "], \"ms_cublas_median\": " << jnum(t_cub) << ", \"ms_cublas_p10_p90\": ["
                << jnum(c10) << ", " << jnum(c90) << "]"
                << ", \"tflops_ours\": " << jnum(tf_ours) << ", \"tflops_cublas\": " << jnum(tf_cub)
                << ", \"ratio_ours_over_cublas\": " << jnum(tf_ours / tf_cub)
                << (bench_beta != 0.f
                        ? ",\n       \"bench_beta\": " + jnum(bench_beta) + ", \"ms_ours_median_beta\": " + jnum(tb_ours) +
                              ", \"ms_cublas_median_beta\": " + jnum(tb_cub) + ", \"tflops_ours_beta\": " +
                              jnum(flops / (tb_ours * 1e-3) / 1e12) + ", \"tflops_cublas_beta\": " +
                              jnum(flops / (tb_cub * 1e-3) / 1e12) + ", \"ratio_ours_over_cublas_beta\": " + jnum(tb_cub / tb_ours)
                        : std::string())
                << ",\n       \"rel_err_beta0\": " << jnum(errs[0]) << ", \"rel_err_alpha0.75_beta0.5\": "
                << jnum(errs[1]) << ", \"nonfinite\": [" << nfs[0] << ", " << nfs[1] << "]"
                << ", \"spot_err_f64\": [" << jnum(spots[0]) << ", " << jnum(spots[1]) << "]"
                << ", \"repeat_bitwise_same\": " << (repeat_ok ? "true" : "false")
                << ", \"ok\": " << (ok ? "true" : "false") << "}";
        first_var = false;

#if K2_WITH_PROBE
        // ---------------- probe: trace capture and overhead ----------------
        const int k_blocks = int((K + k2::BK - 1) / k2::BK);
        const bool pp = v.schedule == "pingpong";
        const int epi_m = pp ? 64 : k2::EPI_M;                     // Cfg::EPI_M_
        const int epi_threads = pp ? 128 : k2::CONSUMER_THREADS;  // Cfg::EPI_THREADS: one epilogue's threads
        const int subtiles = (k2::BM / epi_m) * (v.bn / k2::EPI_N);
        const int tiles_cta_max = (tiles + grid - 1) / grid;
        const uint32_t slots = uint32_t(std::max(0, std::min(trace_ctas, grid - trace_first)));
        // records per warp: per tile at most 8 per k-block (consumers), 16 per subtile (store warp with C),
        // 8 markers / tile ends; plus tails and EXIT
        auto capacity_for = [&](int tile_limit) {
          const int t = tile_limit ? std::min(tile_limit, tiles_cta_max) : tiles_cta_max;
          return uint32_t(t * (k_blocks * 8 + subtiles * 16 + 8) + 64);
        };
        auto probe_launch = [&](float alpha, float beta) {
          k2::Params p{(int)M, (int)N, (int)K, alpha, beta};
          v.apply(p);
          k2probe::launch(v.bn, v.stages, v.schedule == "pingpong", tA, tB, tC, tD, p, grid, 0);
        };

        // The 128x256x64_s4 variant alone keeps the plain names (k2_trace_<shape>.json) that the tools read.
        const std::string vsuffix = vars.size() > 1 || v.bn != 256 || v.stages != 4 ? "_" + v.name : "";
        if (!trace_prefix.empty() && ok && slots > 0 && v.probed) {
          for (float tb : trace_betas) {
            const float ta = 1.0f;
            char bsfx[32] = "";
            if (tb != 0.f) std::snprintf(bsfx, sizeof bsfx, "_beta%g", tb);
            const std::string stem = trace_prefix + "_" + shname + vsuffix + bsfx;
            const uint32_t cap = capacity_for(trace_tiles);
            fill(A, M * K);
            fill(B, N * K);
            fill(Cm, M * N);
            const auto kbs = static_cast<uint32_t>(trace_kb_sample);
            CK(k2probe::configure(0, slots, trace_first, k2::NUM_THREADS / 32, cap, trace_tiles, kbs));
            CK(k2probe::select(0, 0));
            for (int i = 0; i < 3; ++i) probe_launch(ta, tb);  // warm-up (recording, overwritten below)
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(k2probe::configure(0, slots, trace_first, k2::NUM_THREADS / 32, cap, trace_tiles, kbs));
            CK(k2probe::select(0, 0));
            poison(D, M * N);
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            CK(cudaEventRecord(e0));
            probe_launch(ta, tb);
            CK(cudaEventRecord(e1));
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
            std::vector<unsigned char> raw;
            CK(k2probe::read(0, raw));
            cublas_ref(ta, tb);
            CK(cudaDeviceSynchronize());
            unsigned long long nf = 0;
            const double err = rel_err(D, &nf);
            const bool tok = err < 1e-2 && nf == 0;
            all_ok = all_ok && tok;
            write_file(stem + ".bin", raw.data(), raw.size());
            const RawSummary rs = summarize_raw(raw);
            const std::string smi_now = popen_all(kSmi);
            // the description traces/collect.py needs (docs/trace-format.md, "raw capture")
            std::ostringstream m;
            const int bn = v.bn;
            m << "{\n  \"format\": \"smpipe-hwtrace-raw\", \"version\": 1,\n  \"kernel\": \"k2_gemm\", \"variant\": "
              << jstr(v.name) << ",\n  \"gpu\": " << jstr(prop.name) << ", \"sm_count\": " << sms
              << ", \"nvidia_smi\": " << jstr(smi_now) << ",\n  \"date\": " << jstr(utc_now())
              << ",\n  \"command\": " << jstr(cmdline) << ",\n  \"kernel_ms\": " << jnum(ms)
              << ", \"rel_err\": " << jnum(err) << ", \"nonfinite\": " << nf << ", \"check_ok\": "
              << (tok ? "true" : "false") << ",\n  \"params\": {\"M\": " << M << ", \"N\": " << N << ", \"K\": " << K
              << ", \"alpha\": " << jnum(ta) << ", \"beta\": " << jnum(tb) << ", \"dtype\": \"bf16\", \"accumulator\": \"f32\""
              << ", \"layout\": \"TN (A MxK, B NxK, C/D MxN row-major)\""
              << ", \"tile\": [" << k2::BM << ", " << bn << ", " << k2::BK << "], \"stages\": " << v.stages
              << ", \"schedule\": " << jstr(v.schedule)
              << ", \"epilogue_tile\": [" << epi_m << ", " << k2::EPI_N << "], \"subtiles\": " << subtiles
              << ", \"stages_c\": " << v.sc << ", \"stages_d\": " << v.sd
              << ", \"k_blocks\": " << k_blocks << ", \"tiles\": " << tiles << ", \"grid\": [" << grid
              << ", 1, 1], \"cluster\": [1, 1, 1], \"threads\": " << k2::NUM_THREADS << ", \"warps\": "
              << k2::NUM_THREADS / 32 << ", \"smem_bytes\": " << v.smem << ", \"group_m\": " << v.raster
              << ", \"scheduler\": \"persistent: CTA b takes tiles b, b+grid, ...; tile -> (m block, n block) in groups "
                 "of group_m m-blocks, m fastest\""
              << ", \"wgmma\": {\"shape\": [64, " << bn << ", 16], \"dtype\": \"bf16\", \"per_event\": "
              << k2::BK / 16 * (pp ? 2 : 1) << ", \"a\": \"sA\", \"b\": \"sB\"}"
              << ", \"uses_c\": " << (tb != 0.f ? "true" : "false") << "},\n"
              << "  \"barriers\": [\n"
              << "    {\"id\": 0, \"name\": \"full\", \"kind\": \"mbarrier\", \"size\": " << v.stages << ", \"count\": 1},\n"
              << "    {\"id\": 1, \"name\": \"empty\", \"kind\": \"mbarrier\", \"size\": " << v.stages
              << ", \"count\": " << epi_threads << "},\n"
              << "    {\"id\": 2, \"name\": \"c_full\", \"kind\": \"mbarrier\", \"size\": " << v.sc
              << ", \"count\": 1},\n"
              << "    {\"id\": 3, \"name\": \"c_empty\", \"kind\": \"mbarrier\", \"size\": " << v.sc
              << ", \"count\": " << epi_threads << "},\n"
              << "    {\"id\": 4, \"name\": \"load_order\", \"kind\": \"mbarrier\", \"size\": null, \"count\": 1},\n"
              // pingpong: warpgroup g's epilogue syncs named barrier 1 + g (two barriers under one id here)
              << "    {\"id\": 5, \"name\": \"epi\", \"kind\": \"named\", \"named_id\": 1, \"size\": null, \"count\": "
              << epi_threads << "}"
              // pingpong: the OrderedSequenceBarrier, index 2 * stage + group (stage 0 mainloop, 1 epilogue)
              << (pp ? ",\n    {\"id\": 6, \"name\": \"order\", \"kind\": \"mbarrier\", \"size\": 4, \"count\": 128}" : "")
              << "\n  ],\n"
              << "  \"tensors\": [\n"
              << "    {\"id\": 1, \"name\": \"A\", \"dtype\": \"bf16\", \"shape\": [" << M << ", " << K
              << "], \"box\": [" << k2::BM << ", " << k2::BK << "], \"swizzle\": 128, \"l2_promotion\": 256, \"smem\": \"sA\", \"smem_size\": " << v.stages << "},\n"
              << "    {\"id\": 2, \"name\": \"B\", \"dtype\": \"bf16\", \"shape\": [" << N << ", " << K
              << "], \"box\": [" << bn << ", " << k2::BK << "], \"swizzle\": 128, \"l2_promotion\": 256, \"smem\": \"sB\", \"smem_size\": " << v.stages << "},\n"
              << "    {\"id\": 3, \"name\": \"C\", \"dtype\": \"bf16\", \"shape\": [" << M << ", " << N
              << "], \"box\": [" << epi_m << ", " << k2::EPI_N << "], \"swizzle\": 64, \"l2_promotion\": 256, \"smem\": \"sC\", \"smem_size\": " << v.sc << "},\n"
              << "    {\"id\": 4, \"name\": \"D\", \"dtype\": \"bf16\", \"shape\": [" << M << ", " << N
              << "], \"box\": [" << epi_m << ", " << k2::EPI_N << "], \"swizzle\": 64, \"l2_promotion\": 256, \"smem\": \"sD\", \"smem_size\": " << v.sd << "}\n  ],\n"
              << "  \"smem\": [{\"name\": \"sA\", \"size\": " << v.stages << ", \"bytes\": " << k2::BM * k2::BK * 2
              << "}, {\"name\": \"sB\", \"size\": " << v.stages << ", \"bytes\": " << bn * k2::BK * 2
              << "}, {\"name\": \"sC\", \"size\": " << v.sc << ", \"bytes\": " << epi_m * k2::EPI_N * 2
              << "}, {\"name\": \"sD\", \"size\": " << v.sd << ", \"bytes\": " << epi_m * k2::EPI_N * 2 << "}],\n"
              << "  \"warps\": [";
            for (int w = 0; w < k2::NUM_THREADS / 32; ++w) {
              const char* role = w == 0 ? "producer" : w == 2 ? "epilogue_load" : w < 4 ? "none" : "consumer";
              const int lanes = (w == 0 || w == 2) ? 1 : 32;
              m << (w ? ", " : "") << "{\"warp\": " << w << ", \"role\": \"" << role << "\", \"lanes\": " << lanes << "}";
            }
            m << "],\n  \"probe\": {\"slots\": " << slots << ", \"cta_first\": " << trace_first << ", \"capacity\": " << cap
              << ", \"tile_limit\": " << trace_tiles << ", \"kb_sample\": " << trace_kb_sample << "}\n}\n";
            const std::string ms_ = m.str();
            write_file(stem + ".meta.json", ms_.data(), ms_.size());
            std::printf("[%s] trace beta=%g: %s.bin (%zu bytes), %d CTAs, %llu records, %llu dropped, %llu unwritten, SM clock "
                        "%.0f MHz, kernel %.3f ms, rel err %.3e -> %s\n",
                        v.name.c_str(), tb, stem.c_str(), raw.size(), rs.ctas, (unsigned long long)rs.records,
                        (unsigned long long)rs.dropped, (unsigned long long)rs.unwritten, rs.mhz.empty() ? 0.0 : median(rs.mhz), ms, err,
                        tok ? "OK" : "FAIL");
            std::fflush(stdout);
          }
        }
        if (!overhead_path.empty() && ok && slots > 0 && v.probed) {
          fill(A, M * K);
          fill(B, N * K);
          const auto kbs = static_cast<uint32_t>(trace_kb_sample);
          CK(k2probe::configure(0, slots, trace_first, k2::NUM_THREADS / 32, capacity_for(0), 0, kbs));
          const bool window = trace_tiles > 0 && trace_tiles < tiles_cta_max;
          if (window) CK(k2probe::configure(1, slots, trace_first, k2::NUM_THREADS / 32, capacity_for(trace_tiles), trace_tiles, kbs));
          std::vector<Timed> fs;
          std::vector<std::string> names;
          fs.push_back({nullptr, [&] { ours(1.f, 0.f); }});
          names.push_back("probe_off");
          fs.push_back({[&] { CK(k2probe::select(0, 0)); }, [&] { probe_launch(1.f, 0.f); }});
          names.push_back("probe_on_recording_all_tiles");
          if (window) {
            fs.push_back({[&] { CK(k2probe::select(1, 0)); }, [&] { probe_launch(1.f, 0.f); }});
            names.push_back("probe_on_recording_tile_window");
          }
          fs.push_back({[&] { CK(k2probe::select(-1, 0)); }, [&] { probe_launch(1.f, 0.f); }});
          names.push_back("probe_on_recording_nothing");
          const std::string smi0 = popen_all(kSmi);
          auto ts = time_round_robin(fs, warm, reps);
          const std::string smi1 = popen_all(kSmi);
          std::vector<unsigned char> raw;
          CK(k2probe::read(0, raw));
          const RawSummary rs = summarize_raw(raw);
          // correctness of the probe-on kernel's output (the last launch of the round)
          cublas_ref(1.f, 0.f);
          CK(cudaDeviceSynchronize());
          unsigned long long onf = 0;
          const double oerr = rel_err(D, &onf);
          all_ok = all_ok && oerr < 1e-2 && onf == 0;
          const double base_ms = median(ts[0]);
          std::printf("[%s] probe overhead, median of %d interleaved runs (SM clock from the probe %.0f MHz, %llu records, "
                      "%llu dropped, %llu unwritten; rel err after %.3e):\n", v.name.c_str(), reps,
                      rs.mhz.empty() ? 0.0 : median(rs.mhz), (unsigned long long)rs.records,
                      (unsigned long long)rs.dropped, (unsigned long long)rs.unwritten, oerr);
          js_overhead << (first_overhead ? "" : ",") << "\n    {\"M\": " << M << ", \"N\": " << N << ", \"K\": " << K
                      << ", \"variant\": " << jstr(v.name) << ", \"grid\": " << grid << ", \"tiles\": " << tiles
                      << ", \"recorded_ctas\": " << slots << ", \"cta_first\": " << trace_first
                      << ", \"tile_window\": " << (window ? trace_tiles : 0)
                      << ", \"records_all_tiles\": " << rs.records << ", \"dropped_all_tiles\": " << rs.dropped
                      << ", \"unwritten_all_tiles\": " << rs.unwritten
                      << ", \"rel_err_after_timing\": " << jnum(oerr)
                      << ", \"sm_clock_mhz_probe\": " << jnum(rs.mhz.empty() ? NAN : median(rs.mhz))
                      << ",\n     \"nvidia_smi_before\": " << jstr(smi0) << ", \"nvidia_smi_after\": " << jstr(smi1)
                      << ",\n     \"runs\": {";
          for (size_t j = 0; j < fs.size(); ++j) {
            const double md = median(ts[j]);
            std::printf("    %-32s %.4f ms (p10-p90 %.4f-%.4f)  %+.2f %%\n", names[j].c_str(), md, pct(ts[j], 0.1),
                        pct(ts[j], 0.9), (md / base_ms - 1) * 100);
            js_overhead << (j ? "," : "") << "\n       " << jstr(names[j]) << ": {\"ms_median\": " << jnum(md)
                        << ", \"ms_p10_p90\": [" << jnum(pct(ts[j], 0.1)) << ", " << jnum(pct(ts[j], 0.9))
                        << "], \"ms_min\": " << jnum(pct(ts[j], 0.0)) << ", \"tflops\": " << jnum(flops / (md * 1e-3) / 1e12)
                        << ", \"overhead_pct_vs_probe_off\": " << jnum((md / base_ms - 1) * 100) << "}";
          }
          js_overhead << "}}";
          first_overhead = false;
          std::fflush(stdout);
        }
#endif
      }
      js_shapes << (first_shape ? "" : ",") << "\n    {\"M\": " << M << ", \"N\": " << N << ", \"K\": " << K
                << ", \"gflop\": " << jnum(flops / 1e9) << ", \"cublas_rel_err_bf16_out\": " << jnum(cub_err)
                << ", \"cublas_spot_err_f64\": " << jnum(cub_spot) << ", \"variants\": [" << js_vars.str()
                << "\n    ]}";
      first_shape = false;
      CK(cudaFree(A));
      CK(cudaFree(B));
      CK(cudaFree(Cm));
      CK(cudaFree(D));
      CK(cudaFree(Dc));
      CK(cudaFree(R));
    }
    const std::string smi_end = popen_all(kSmi);
    CKB(cublasDestroy(h));
#if K2_WITH_PROBE
    k2probe::release();
    if (!overhead_path.empty()) {
      std::ostringstream jo;
      jo << "{\n  \"schema\": \"smpipe.k2_probe_overhead.v1\",\n  \"date_utc\": " << jstr(utc_now())
         << ",\n  \"command_line\": " << jstr(cmdline) << ",\n  \"gpu\": {\"name\": " << jstr(prop.name)
         << ", \"sm_count\": " << sms << ", \"cc\": " << jstr(std::to_string(prop.major) + "." + std::to_string(prop.minor))
         << "},\n  \"nvidia_smi\": {\"query\": "
         << jstr("name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
                 "temperature.gpu,clocks_throttle_reasons.active")
         << ", \"at_start\": " << jstr(smi_start) << ", \"at_end\": " << jstr(smi_end) << "}"
         << ",\n  \"method\": " << jstr("one process, all kernel builds linked in (k2::probe_off: SMPIPE_PROBE=0; "
                                         "k2::probe_on: SMPIPE_PROBE=1), "
                                         "alpha=1 beta=0, " + std::to_string(warm) +
                                         " warm-up rounds, then " + std::to_string(reps) +
                                         " rounds; each round launches every configuration once, each launch between its "
                                         "own CUDA events (configurations interleaved: same clock/power state); medians. "
                                         "The probe configuration is switched by a stream-ordered copy outside the events. "
                                         "sm_clock_mhz_probe = clock64 ticks / globaltimer ns of the recorded CTAs in the "
                                         "last all-tiles launch.")
         << ",\n  \"shapes\": [" << js_overhead.str() << "\n  ]\n}\n";
      const std::string s = jo.str();
      write_file(overhead_path, s.data(), s.size());
      std::printf("wrote %s\n", overhead_path.c_str());
    }
#endif
    if (skip_bench) {
      std::printf("%s\n", all_ok ? "all checks passed" : "SOME CHECKS FAILED");
      return all_ok ? 0 : 1;
    }

    std::ostringstream js;
    js << "{\n  \"schema\": \"smpipe.k2_gemm.v1\",\n  \"date_utc\": " << jstr(utc_now())
       << ",\n  \"command_line\": " << jstr(cmdline) << ",\n  \"gpu\": {\"name\": " << jstr(prop.name)
       << ", \"sm_count\": " << sms << ", \"cc\": " << jstr(std::to_string(prop.major) + "." + std::to_string(prop.minor))
       << "},\n  \"nvidia_smi\": {\"query\": "
       << jstr("name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
               "temperature.gpu,clocks_throttle_reasons.active")
       << ", \"idle_at_start\": " << jstr(smi_start) << ", \"while_k2_runs_8192\": " << jstr(smi_busy)
       << ", \"at_end\": " << jstr(smi_end) << "},\n  \"kernel\": "
       << jstr("k2 warp-specialized persistent GEMM, sm_90a, TMA + wgmma m64nBNk16 (128B swizzle), "
               "1 producer WG + 2 consumer WGs, K_PIPE_MMAS=1, TMA-store epilogue; per variant: schedule (cooperative: "
               "both consumer WGs on one 128xBN tile split along M, epilogue subtiles 128x32; pingpong: each consumer WG "
               "on its own 128x128 tile, OrderedSequenceBarrier ordering, subtiles 64x32, store tail per tile), cluster "
               "(2x1 along M: B tile shared, each CTA loads half with .multicast::cluster), epilogue knobs")
       << ",\n  \"layout\": \"A MxK row-major, B NxK row-major (TN), C/D MxN row-major, bf16; fp32 accumulate\""
       << ",\n  \"timing\": " << jstr("CUDA events around each launch, " + std::to_string(warm) + " warm-up, median of " +
                                     std::to_string(reps) + " rounds, each round one launch of ours then one of cuBLAS back to back "
                                     "(interleaved: same clock/power state); alpha=1 beta=0; cuBLAS = cublasGemmEx bf16 in/out, "
                                     "CUBLAS_COMPUTE_32F, default algo")
       << ",\n  \"reference\": \"cublasGemmEx bf16 inputs, fp32 compute and fp32 output; rel err = ||D-ref||_F/||ref||_F; "
          "spot = max |D-exact|/sqrt(K/9) over 64 sampled elements vs a CPU float64 sum\""
       << ",\n  \"all_ok\": " << (all_ok ? "true" : "false") << ",\n  \"shapes\": [" << js_shapes.str() << "\n  ]\n}\n";
    FILE* f = std::fopen(out_path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + out_path);
    std::fputs(js.str().c_str(), f);
    std::fclose(f);

    std::printf("\n%-16s %-46s %8s %8s %7s %10s %10s\n", "shape", "variant", "TFLOP/s", "cuBLAS", "ratio",
                "err b=0", "err b=.5");
    for (auto& r : table)
      std::printf("%-16s %-46s %8.1f %8.1f %7.3f %10.2e %10.2e\n", r.shape.c_str(), r.var.c_str(), r.ours, r.cub,
                  r.ours / r.cub, r.err0, r.err1);
    std::printf("wrote %s (%s)\n", out_path.c_str(), all_ok ? "all checks passed" : "SOME CHECKS FAILED");
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
