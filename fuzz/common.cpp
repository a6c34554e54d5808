#include "fuzz/common.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <streambuf>

#include "fuzz/targets.hpp"
#include "isa/ast.hpp"
#include "models/observe/report.hpp"
#include "sim/trace_writer.hpp"

namespace smpipe::fuzz {

namespace {

template <class Options>
void set_max_ops(Options& o) {
  if constexpr (requires { o.max_ops; }) o.max_ops = kMaxOps;
}

}  // namespace

void fail(std::string_view target, const std::string& what) {
  std::fprintf(stderr, "\n%.*s: FAILURE: %s\n", static_cast<int>(target.size()), target.data(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

const models::Machine& builtin_machine(const std::string& name) {
  static std::map<std::string, models::Machine> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  try {
    return cache.emplace(name, models::load_machine(name)).first->second;
  } catch (const std::exception& e) {
    fail("fuzz setup", "cannot load built-in machine '" + name + "' (set SMPIPE_MACHINES to models/machines): " + e.what());
  }
}

const models::Machine& builtin_machine_or_default(const std::string& name) {
  if (name == "h100-sxm" || name == "h200" || name == "b200") return builtin_machine(name);
  return builtin_machine("h100-sxm");
}

models::RunOptions small_run_options() {
  models::RunOptions o;
  o.max_cycles = kMaxCycles;
  o.max_instructions_without_time = kMaxInstructionsWithoutTime;
  set_max_ops(o);
  return o;
}

models::RunResult run_program(std::string_view, const isa::Program& program, const models::Machine& machine,
                              std::uint64_t variant) {
  models::check_fits(program, machine);
  models::RunOptions opt = small_run_options();
  // One input in eight runs jittered (as `smpipe check` does), with a seed from the input.
  if ((variant & 7) == 0) {
    opt.jitter_pct = 10;
    opt.seed = variant >> 3;
  }
  sim::TraceWriter trace(machine.clock_mhz, 2);
  opt.trace = &trace;
  models::RunResult r = models::simulate(program, machine, opt);
  NullBuf nb;
  std::ostream null(&nb);
  null << models::format_summary(r, program) << models::format_problem(r) << models::to_json(r, program).dump(2);
  trace.write(null);
  return r;
}

void run_pipe_text(std::string_view target, const std::string& text) {
  guarded(target, [&] {
    auto source = std::make_shared<isa::SourceFile>("fuzz.pipe", text);
    isa::File file = isa::parse(source);
    const models::Machine& machine = builtin_machine_or_default(file.gpu ? file.gpu->first : "");
    auto predefined = models::predefined_constants(machine);
    std::vector<std::string> kernels{""};  // the only kernel (or the error that there are several)
    if (file.kernels.size() > 1) {
      kernels.clear();
      for (std::size_t i = 0; i < file.kernels.size() && i < 4; ++i) kernels.push_back(file.kernels[i].name);
    }
    std::uint64_t variant = input_hash(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    for (const auto& k : kernels) {
      guarded(target, [&] {
        isa::Program program = isa::compile(file, {}, k, predefined);
        NullBuf nb;
        std::ostream null(&nb);
        null << program.dump();
        run_program(target, program, machine, variant);
      });
    }
  });
}

std::uint64_t input_hash(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> t{{"fuzz_pipe", fuzz_one_pipe},
                                     {"fuzz_pipe_tokens", fuzz_one_pipe_tokens},
                                     {"fuzz_hwtrace", fuzz_one_hwtrace},
                                     {"fuzz_machine", fuzz_one_machine}};
  return t;
}

}  // namespace smpipe::fuzz
