// Picks the fastest stage count of CUTLASS's sm90 cooperative GEMM for one problem on an H100, and shows what
// smpipe says about a pipeline that cannot work: the C++ API (docs/api.md) in a few lines.
//   pick_stages [M N K]
#include <smpipe/smpipe.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  std::int64_t m = argc > 3 ? std::atoll(argv[1]) : 2048, n = argc > 3 ? std::atoll(argv[2]) : 2048,
               k = argc > 3 ? std::atoll(argv[3]) : 2048;
  try {
    std::printf("models from %s\n", smpipe::models_dir().c_str());
    smpipe::Simulation sim("sm90/gemm_tma_ws_cooperative", {.gpu = "h100-sxm"});
    sim.set("M", m).set("N", n).set("K", k).set("TILE_N", 256);
    std::int64_t best_stages = 0;
    double best_us = 0;
    for (std::int64_t stages = 2; stages <= 4; ++stages) {
      smpipe::Result r = sim.set("STAGES", stages).run();
      std::printf("STAGES=%lld: %.3f us, %.1f TFLOP/s\n", static_cast<long long>(stages), r.time_us, r.tflops);
      if (r.outcome == smpipe::Outcome::kFinished && (best_stages == 0 || r.time_us < best_us)) {
        best_stages = stages;
        best_us = r.time_us;
      }
    }
    std::printf("fastest: STAGES=%lld (%.3f us)\n", static_cast<long long>(best_stages), best_us);

    // A consumer count CUTLASS would not give the empty barriers: the run deadlocks, and says why.
    smpipe::Result bad = smpipe::Simulation("sm90/gemm_tma_ws_pingpong").set("M", 256).set("N", 256).set("K", 256)
                             .set("EMPTY_COUNT", 256).run();
    std::printf("EMPTY_COUNT=256: exit %d\n%s", bad.exit_code, bad.problem.substr(0, bad.problem.find('\n') + 1).c_str());
  } catch (const smpipe::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
