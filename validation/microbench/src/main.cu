// smpipe Hopper microbenchmark driver: runs every benchmark group and writes one JSON result file.
//
//   smpipe_microbench [--out FILE] [--quick] [--only GROUP[,GROUP...]]
//
// Groups (in run order): mbarrier, tma, wgmma, sync, memory, launch, atomics, hierarchy, store, combine, smpairs, blockedge,
// smlat, clusteredge,
// segments,
// smemport, issue, l1, multicast, gpc, epilogue.
// "store" (TMA store bandwidth / latency, hier_store_*) belongs to the hierarchy measurements: --only hierarchy
// runs it too, --only store runs it alone. "combine" (l2_combine_*: L2 request combining vs the time between
// two readers of the same boxes; meant to run under Nsight Compute) runs with every full run or alone; so does
// "smpairs" (l2_smpairs_*: the same combining by SM id: which SMs' requests combine), "blockedge" (l2_edge_*: CTA
// pairs inside and across aligned blocks of 16 in launch order), "smlat" (l2_smlat_*: each SM's ring latency and
// rate, every SM loading), "clusteredge" (l2_cedge_*: the blockedge pairs in a grid of clusters), "clusterstart"
// (hier_launch_cluster*_fit_*: the launch cost by cluster size, a wave of as many clusters as fit), "dirtystart"
// (dirtystart_*: a streaming TMA read after a memset left that many MiB of dirty lines in the L2), and "segments"
// (hbm_segments_*: HBM bandwidth when boxes read short segments of long rows), and "smemport" (smem_port_*:
// wgmma operand reads and TMA writes sharing an SM's shared memory), and "issue" (issue_*: warps sharing the SM's
// instruction issue, alone and beside a warpgroup's wgmmas), and "l1" (l1_*: what a global-memory warp instruction
// costs the SM's L1TEX unit against the 128-byte lines it touches), and "multicast" (mcast_*: TMA multicast to
// clusters of 2 and 4 against unicast loads, every SM loading, and one cluster alone), and "gpc" (gpc_*: how many
// clusters of each size fit, and SMs of one GPC loading together against SMs spread over the GPU).
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <thread>

#include "common.cuh"

namespace mb {

// Runs a shell command and returns its stdout without the trailing newline (declared in common.cuh).
std::string popen_line(const std::string& cmd) {
  std::string r;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, f)) r += buf;
  pclose(f);
  while (!r.empty() && (r.back() == '\n' || r.back() == '\r')) r.pop_back();
  return r;
}

namespace {

// Thread 0 of each CTA spins on %globaltimer for dur_ns and records the clock64 and globaltimer deltas.
__global__ void k_clock(unsigned long long* out, unsigned long long dur_ns) {
  if (threadIdx.x != 0) return;
  unsigned long long g0 = gtime(), c0 = clk(), g;
  do {
    g = gtime();
  } while (g - g0 < dur_ns);
  unsigned long long c1 = clk(), g1 = gtime();
  out[blockIdx.x * 2] = c1 - c0;
  out[blockIdx.x * 2 + 1] = g1 - g0;
}

const char* kSmiQuery =
    "nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
    "clocks.applications.graphics,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active "
    "--format=csv,noheader -i ";

JObj smi_obj(const std::string& line) {
  JObj o;
  o.str("query", "name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
                 "clocks.applications.graphics,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active");
  o.str("csv", line.empty() ? "(nvidia-smi not available)" : line);
  return o;
}

// Measured SM clock in MHz: {one CTA, median over all SMs with every SM spinning}.
std::pair<double, double> measure_clock(Ctx& c, unsigned long long dur_ns) {
  DevBuf<unsigned long long> out(2 * c.sm_count);
  k_clock<<<1, 32>>>(out.p, dur_ns);
  CK_LAUNCH();
  auto h = out.get();
  double one = double(h[0]) / double(h[1]) * 1000.0;
  k_clock<<<c.sm_count, 32>>>(out.p, dur_ns);
  CK_LAUNCH();
  h = out.get();
  std::vector<double> f;
  for (int b = 0; b < c.sm_count; ++b) f.push_back(double(h[2 * b]) / double(h[2 * b + 1]) * 1000.0);
  return {one, compute_stats(f).median};
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace
}  // namespace mb

int main(int argc, char** argv) {
  using namespace mb;
  std::string out_path = "microbench.json", only;
  bool quick = false;
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out_path = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [--out FILE] [--quick] [--only mbarrier,tma,wgmma,sync,memory,launch,atomics,hierarchy,store,combine,smpairs,blockedge,smlat,clusteredge,clusterstart,dirtystart,wbmix,segments,astream,burst,think,pipe,loadlat,smemport,issue,l1,multicast,gpc,epilogue,oob,sharing] (pipe_more, pipe_straight, pipe_timeline, pipe_sleep, multicast_gemm, loadlat_smooth: parts of a group alone)\n", argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 1;
    }
  }

  Results res;
  res.path = out_path;
  Ctx c;
  c.res = &res;
  c.quick = quick;
  c.filter = only;
  try {
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&c.prop, 0));
    c.sm_count = c.prop.multiProcessorCount;
    if (c.prop.major != 9) {
      std::fprintf(stderr, "this driver needs a compute capability 9.x GPU (found %d.%d)\n", c.prop.major, c.prop.minor);
      return 1;
    }
    CK(cudaMalloc(&c.d_err, ERR_SLOTS * sizeof(unsigned)));
    c.reset_err();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "setup failed: %s\n", e.what());
    return 1;
  }

  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string pci = std::to_string(c.prop.pciBusID);
  std::string smi_idle = popen_line(std::string(kSmiQuery) + "0 2>/dev/null");

  // Bring the clocks up, then measure them.
  double clk_one = 0, clk_all = 0;
  std::string smi_busy;
  try {
    DevBuf<unsigned long long> tmp(2 * c.sm_count);
    k_clock<<<c.sm_count, 32>>>(tmp.p, 300ull * 1000 * 1000);  // 0.3 s warm-up on every SM
    CK_LAUNCH();
    auto cl = measure_clock(c, 50ull * 1000 * 1000);
    clk_one = cl.first;
    clk_all = cl.second;
    // nvidia-smi while every SM is busy (kernel runs 1.5 s in the background)
    k_clock<<<c.sm_count, 32>>>(tmp.p, 1500ull * 1000 * 1000);
    CK(cudaGetLastError());
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    smi_busy = popen_line(std::string(kSmiQuery) + "0 2>/dev/null");
    CK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clock measurement failed: %s\n", e.what());
    return 1;
  }
  c.clk_ghz = clk_one / 1000.0;

  JObj gpu;
  gpu.str("name", c.prop.name)
      .str("compute_capability", std::to_string(c.prop.major) + "." + std::to_string(c.prop.minor))
      .num("sm_count", c.sm_count)
      .num("l2_bytes", c.prop.l2CacheSize)
      .num("smem_per_sm_bytes", double(c.prop.sharedMemPerMultiprocessor))
      .num("smem_per_block_optin_bytes", double(c.prop.sharedMemPerBlockOptin))
      .num("global_mem_bytes", double(c.prop.totalGlobalMem))
      .num("pci_bus_id", c.prop.pciBusID)
      .num("cuda_driver_api_version", drv)
      .num("cuda_runtime_version", rt);
  std::string drv_str = popen_line("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null");
  gpu.str("driver_version", drv_str.empty() ? std::to_string(drv) : drv_str);
  JObj clocks;
  clocks.num("sm_clock_mhz_measured_one_cta", clk_one)
      .num("sm_clock_mhz_measured_all_sms_busy", clk_all)
      .str("method",
           "clock64 delta / %globaltimer delta over a 50 ms busy-wait on %globaltimer (one CTA; then one CTA per SM, "
           "median), after a 0.3 s all-SM warm-up; repeated at the end of the run")
      .raw("nvidia_smi_idle_at_start", smi_obj(smi_idle).render(4))
      .raw("nvidia_smi_all_sms_busy", smi_obj(smi_busy).render(4));
  res.header.str("schema", "smpipe-microbench/1")
      .str("date_utc", utc_now())
      .str("command_line", cmdline)
      .str("host", host)
      .str("build", "nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__) + "." +
                        std::to_string(__CUDACC_VER_BUILD__) + ", -gencode arch=compute_90a,code=sm_90a, -O3")
      .boolean("quick", quick)
      .raw("gpu", gpu.render(2))
      .raw("clocks", clocks.render(2));
  res.notes.push_back(
      "Latencies are clock64 deltas in SM cycles read by the timing thread; they include one clock read "
      "(a few cycles; see clock64_read_overhead). Convert with the measured SM clock.");
  res.write();

  std::printf("GPU %s, %d SMs, driver %s, SM clock %.0f MHz (one CTA) / %.0f MHz (all SMs busy)\n", c.prop.name,
              c.sm_count, drv_str.c_str(), clk_one, clk_all);
  std::printf("nvidia-smi idle: %s\nnvidia-smi busy: %s\n", smi_idle.c_str(), smi_busy.c_str());

  struct Group {
    const char* name;
    std::function<void(Ctx&)> fn;
  } groups[] = {
      {"mbarrier", bench_mbarrier}, {"tma", bench_tma},       {"wgmma", bench_wgmma},
      {"sync", bench_sync},         {"memory", bench_memory}, {"launch", bench_launch},
      {"atomics", bench_atomics},   {"hierarchy", bench_hierarchy}, {"store", bench_hier_store},
      {"combine", bench_l2_combine}, {"smpairs", bench_l2_smpairs}, {"blockedge", bench_l2_block_edge}, {"smlat", bench_l2_sm_latency}, {"clusteredge", bench_l2_cluster_edge}, {"clusterstart", bench_cluster_start}, {"dirtystart", bench_dirty_start}, {"wbmix", bench_store_mix},
      {"segments", bench_hbm_segments}, {"astream", bench_hbm_astream}, {"burst", bench_hbm_burst}, {"think", bench_think}, {"pipe", bench_pipe}, {"loadlat", bench_loadlat}, {"smemport", bench_smem_port},
      {"issue", bench_issue},       {"l1", bench_l1},             {"multicast", bench_multicast}, {"gpc", bench_gpc}, {"epilogue", bench_epilogue}, {"oob", bench_tma_oob}, {"sharing", bench_tma_sharing},
  };
  bool dead = false;
  for (auto& g : groups) {
    const bool store_via_hierarchy = std::strcmp(g.name, "store") == 0 && only.find("hierarchy") != std::string::npos;
    if (!only.empty() && only.find(g.name) == std::string::npos && !store_via_hierarchy) continue;
    if (dead) {
      res.fail(std::string("group:") + g.name, "skipped: CUDA context unusable after an earlier error");
      continue;
    }
    std::printf("== %s\n", g.name);
    std::fflush(stdout);
    auto t0 = std::chrono::steady_clock::now();
    try {
      g.fn(c);
    } catch (const std::exception& e) {
      res.fail(std::string("group:") + g.name, std::string("aborted: ") + e.what());
      cudaError_t s = cudaDeviceSynchronize();
      if (s != cudaSuccess) {
        dead = true;
        res.notes.push_back(std::string("CUDA context lost in group ") + g.name + ": " + cudaGetErrorString(s));
      } else {
        cudaGetLastError();
      }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("   (%s took %.1f s)\n", g.name, secs);
    res.write();
  }

  // clock at the end, clock-read overhead
  if (!dead) {
    try {
      auto cl = measure_clock(c, 50ull * 1000 * 1000);
      JObj clocks2 = clocks;
      clocks2.num("sm_clock_mhz_measured_one_cta_end", cl.first).num("sm_clock_mhz_measured_all_sms_busy_end", cl.second);
      for (auto& kv : res.header.kv)
        if (kv.first == "clocks") kv.second = clocks2.render(2);
    } catch (const std::exception& e) {
      res.fail("clock_end", e.what());
    }
  }
  res.write();
  std::printf("wrote %s (%zu measurements, %zu failures)\n", out_path.c_str(), res.meas.size(), res.failures.size());
  for (auto& f : res.failures) std::printf("  failure: %s: %s\n", f.first.c_str(), f.second.c_str());
  return dead ? 3 : 0;
}
