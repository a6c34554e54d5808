// smpipe's C++ API: load a .pipe program (or a built-in model) on a machine, set its params, run it, and read
// the result, as `smpipe run` does. Installed as <smpipe/smpipe.hpp>; link the CMake target smpipe::smpipe
// (find_package(smpipe)). docs/api.md documents it; api/example/ uses it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace smpipe {

// Bad input: a program that does not parse or compile, an unknown param, model or machine. what() is the
// message `smpipe` prints for it (FILE:LINE:COL: error: ..., with the source line).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Outcome { kFinished, kDeadlock, kWatchdog, kUndefinedBehaviour, kHazard };

struct Result {
  Outcome outcome = Outcome::kFinished;
  int exit_code = 0;         // what `smpipe run` exits with: 0 finished, 2 deadlock or watchdog, 3 undefined behaviour or hazard
  std::int64_t cycles = 0;   // SM cycles until the last warp exited (or the run stopped)
  double time_us = 0;        // the cycles at the clock, plus the launch cost for a finished run
  double tflops = 0;         // the MMAs' FLOP over time_us
  double clock_mhz = 0;      // the SM clock the run assumed
  std::string clock_basis;   // how that clock was chosen ("sustained under load, random data, ..."; "": set in MHz)
  std::string bottleneck;    // the summary's bottleneck sentence ("" when none stands out)
  std::string summary;       // the summary `smpipe run` prints
  std::string problem;       // the diagnosis or deadlock report ("" for a clean finish)
  std::string json;          // the run as `smpipe run --json` prints it (schema smpipe-run/1, docs/json.md)
};

// How to run: the same as the command line's options of the same names.
struct Options {
  std::string gpu;                      // a built-in machine (h100-sxm, h200, b200) or a .json file; "": the program's, else h100-sxm
  std::string kernel;                   // which kernel of a file with several
  std::uint64_t seed = 1;
  int jitter_pct = 0;                   // vary every latency by +-PCT %
  std::int64_t max_cycles = 100'000'000;
  std::int64_t max_ops = 0;             // 0: the default (2^28)
  double clock_mhz = 0;                 // the SM clock in MHz (0: by `clock`)
  // Without clock_mhz: "sustained" (""): the clock the GPU holds under sustained load with random data (a first,
  // shorter run measures the tensor pipe's load); "sustained-constant": with zero or constant data; "boost": the
  // machine file's nominal clock.
  std::string clock;
  // The L2 at launch: warm (holding the program's tensors when they fit in it, as a previous launch of the kernel
  // leaves them) or, false, cold (empty).
  bool warm_l2 = true;
  // With warm_l2 false: bytes of another kernel's stores the L2 holds dirty at launch, written back to HBM as the run
  // evicts them (after a kernel that left that much dirty; at most the machine's l2_dirty_left_share of the L2; 0: none;
  // as --l2 dirty:BYTES).
  std::int64_t l2_dirty_bytes = 0;
  // Or, with warm_l2 false, the program's tensors of these names held dirty at launch, as the kernel that wrote them
  // leaves them (their last blocks, at most l2_dirty_left_share of the L2; as --l2 dirty:A,B). Not with l2_dirty_bytes.
  std::vector<std::string> l2_dirty_tensors;
};

namespace detail {
// The share/smpipe folder of the installed package a program is built against: find_package(smpipe) defines
// SMPIPE_INSTALLED_DATA_DIR for the programs that link smpipe::smpipe, so they find its models and machines.
#ifdef SMPIPE_INSTALLED_DATA_DIR
inline const char* installed_data_dir() { return SMPIPE_INSTALLED_DATA_DIR; }
#else
inline const char* installed_data_dir() { return ""; }
#endif
void use_installed_data(const char* dir);
std::vector<std::string> builtin_models();
std::vector<std::string> builtin_machines();
std::string models_dir();
std::string machines_dir();
}  // namespace detail

class Simulation {
 public:
  // `program`: a .pipe file, or a built-in model's name (`examples/mainloop`, `sm90/gemm_tma_ws_cooperative`;
  // see builtin_models()). Nothing is read until params() or run().
  explicit Simulation(std::string program, Options options = {})
      : Simulation(std::move(program), std::move(options), detail::installed_data_dir()) {}
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;

  // Sets a param, like `-D NAME=VALUE` (a param the program does not declare is an Error at run()).
  Simulation& set(const std::string& param, std::int64_t value);
  Simulation& options(const Options& o);

  // Every param and const of the program with the values set so far, as compiled. Throws Error.
  std::map<std::string, std::int64_t> params() const;
  // Compiles and simulates. Same inputs, same result, byte for byte. Throws Error on bad input (options out of
  // their ranges included).
  Result run() const;

 private:
  Simulation(std::string program, Options options, const char* installed_data_dir);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string version();
// The built-in models (names for Simulation) and machines (names for Options::gpu), and their folders.
inline std::vector<std::string> builtin_models() {
  detail::use_installed_data(detail::installed_data_dir());
  return detail::builtin_models();
}
inline std::vector<std::string> builtin_machines() {
  detail::use_installed_data(detail::installed_data_dir());
  return detail::builtin_machines();
}
inline std::string models_dir() {
  detail::use_installed_data(detail::installed_data_dir());
  return detail::models_dir();
}
inline std::string machines_dir() {
  detail::use_installed_data(detail::installed_data_dir());
  return detail::machines_dir();
}

}  // namespace smpipe
