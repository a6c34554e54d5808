// The cycle at which each CTA of a simulated GEMM issues the first A load of each of its tiles: the model's
// side of validation/calibration/trace_lags.py (how far apart the CTAs start their j-th tile; the GPU's side
// comes from a K2 hardware trace of every CTA). Not a test; a calibration tool.
//
//   smpipe_cta_starts [--jitter PCT] [--gpu MACHINE] MODEL K_BLOCKS_PER_TILE CLOCK_MHZ [NAME=VALUE ...]
//
// Prints CSV lines `cta,sm,tile,cycle` (tile: the place in the CTA's sequence) for every CTA, at the given SM
// clock, without the race checker (the same timing); --jitter as smpipe run's (every latency +-PCT %, seed
// 1).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "api/load.hpp"
#include "models/gpu/gpu.hpp"
#include "models/observe/observer.hpp"

namespace {

using namespace smpipe;

// Counts each CTA's A loads (ops whose text starts with "tma.load A") and keeps every K_BLOCKS-th one's
// cycle.
class TileStarts : public models::Observer {
 public:
  TileStarts(const isa::Program& p, std::int64_t every) : program_(p), every_(every) {}
  bool wants(std::int64_t) const override { return true; }
  void cta_started(const models::CtaStart& c) override { sm_[c.cta] = c.sm; }
  void op_started(std::int64_t cta, int, int role, std::uint32_t op, std::int64_t cycle) override {
    const isa::OpDesc& d = program_.roles[static_cast<std::size_t>(role)].ops[op];
    if (d.kind != isa::OpKind::kTmaLoad || d.text.rfind("tma.load A", 0) != 0) return;
    std::int64_t& n = count_[cta];
    if (n % every_ == 0) fmt::print("{},{},{},{}\n", cta, sm_[cta], n / every_, cycle);
    ++n;
  }

 private:
  const isa::Program& program_;
  std::int64_t every_;
  std::map<std::int64_t, std::int64_t> count_;
  std::map<std::int64_t, int> sm_;
};

}  // namespace

int main(int argc, char** argv) {
  int jitter = 0;
  std::string gpu;
  while (argc > 2 && (std::string(argv[1]) == "--jitter" || std::string(argv[1]) == "--gpu")) {
    if (std::string(argv[1]) == "--jitter")
      jitter = std::atoi(argv[2]);
    else
      gpu = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc < 4 || jitter < 0 || jitter > 100) {
    fmt::print(stderr,
               "usage: smpipe_cta_starts [--jitter PCT] [--gpu MACHINE] MODEL K_BLOCKS_PER_TILE CLOCK_MHZ "
               "[NAME=VALUE ...]\n");
    return 2;
  }
  try {
    isa::ParamOverrides params;
    for (int i = 4; i < argc; ++i) {
      std::string a = argv[i];
      auto eq = a.find('=');
      if (eq == std::string::npos) throw isa::InputError("expected NAME=VALUE, got '" + a + "'");
      params[a.substr(0, eq)] = std::stoll(a.substr(eq + 1));
    }
    api::Loaded l = api::load_program(argv[1], params, gpu, "", std::atof(argv[3]));
    TileStarts starts(l.program, std::max<std::int64_t>(1, std::atoll(argv[2])));
    models::RunOptions options;
    options.hazards = false;
    options.jitter_pct = jitter;
    options.observers.push_back(&starts);
    fmt::print("cta,sm,tile,cycle\n");
    models::RunResult r = models::simulate(l.program, l.machine, options);
    return r.outcome == models::Outcome::kFinished ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "smpipe_cta_starts: {}\n", e.what());
    return 2;
  }
}
