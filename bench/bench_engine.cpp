// Speed benchmark (not a test): simulated pipeline ops per second of wall time on a synthetic large
// warp-specialized pipeline, and peak memory at two sizes to show that memory follows live state, not
// the number of ops executed. Usage: smpipe_bench [CTAS] [ITERATIONS]
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <string>

#include "isa/ast.hpp"
#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"

using namespace smpipe;

namespace {

// 12 warps per CTA: one TMA producer, three helper warps that exchange a named barrier with each other,
// and two consumer warpgroups running wgmma on a 4-stage full/empty pipeline.
const char* kPipeline = R"(
param CTAS = 132
param ITERS = 1000
param STAGES = 4
kernel synthetic grid=(CTAS,1,1) warps=12 {
  mbarrier full[STAGES]  count=1
  mbarrier empty[STAGES] count=256
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(8192, 8192)
  warp 0 producer {
    elect {
      for k in 0..ITERS {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
        tma.load A box=(128, 64) at=(128, k * 64) dst=sB[s] bar=full[s]
        compute cycles=4
      }
    }
  }
  warps 1..4 helpers {
    for k in 0..ITERS {
      compute cycles=20
      bar.sync 8 threads=96
      ld.shared bytes=512                # its own data (no buffer named: the TMA fills sA unsynchronised)
      compute cycles=20
      bar.arrive 9 threads=96
      bar.sync 9 threads=96
    }
  }
  warpgroups 1..3 consumer {
    for k in 0..ITERS {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
    }
  }
}
)";

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Figures {
  double seconds;
  std::int64_t ops, events, cycles;
  long rss_kb;
};

Figures run(std::int64_t ctas, std::int64_t iters) {
  auto src = std::make_shared<isa::SourceFile>("synthetic.pipe", kPipeline);
  isa::Program p = isa::compile(isa::parse(src), {{"CTAS", ctas}, {"ITERS", iters}});
  models::Machine m = models::load_machine("h100-sxm");
  models::RunOptions o;
  o.max_cycles = std::int64_t{1} << 60;
  auto t0 = std::chrono::steady_clock::now();
  models::RunResult r = models::simulate(p, m, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.outcome != models::Outcome::kFinished) {
    fmt::print("synthetic pipeline did not finish: {}\n", r.diagnosis ? r.diagnosis->title + ": " + r.diagnosis->message : "");
    std::exit(1);
  }
  return Figures{s, r.stats.ops, r.stats.events, r.cycles, peak_rss_kb()};
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t ctas = argc > 1 ? std::stoll(argv[1]) : 132;
  std::int64_t iters = argc > 2 ? std::stoll(argv[2]) : 1700;  // ~10,000 ops per consumer warp
  Figures small = run(ctas, iters / 10);
  Figures big = run(ctas, iters);
  auto line = [&](const char* name, const Figures& f, std::int64_t it) {
    fmt::print("{:<6} {:>4} CTAs x 12 warps x {:>5} iterations: {:>11} ops {:>11} events {:>12} cycles  {:7.3f} s  "
               "{:6.2f} M ops/s  {:6.2f} M events/s  peak RSS {:.1f} MB\n",
               name, ctas, it, f.ops, f.events, f.cycles, f.seconds, f.ops / f.seconds / 1e6, f.events / f.seconds / 1e6,
               f.rss_kb / 1024.0);
  };
  line("small", small, iters / 10);
  line("large", big, iters);
  fmt::print("ops per warp (large): {:.0f}; memory grew {:.1f} MB for {:.1f}x the ops\n",
             static_cast<double>(big.ops) / (ctas * 12.0), (big.rss_kb - small.rss_kb) / 1024.0,
             static_cast<double>(big.ops) / small.ops);
  return 0;
}
