// Helpers shared by the tests: compile a .pipe text, run it, run the CLI and capture its output.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "isa/ast.hpp"
#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"
#include "models/observe/report.hpp"

namespace smpipe::test {

inline isa::Program compile_text(const std::string& text, const isa::ParamOverrides& params = {},
                                 const std::string& name = "test.pipe", const std::string& machine = "h100-sxm") {
  auto src = std::make_shared<isa::SourceFile>(name, text);
  // Programs keep a pointer to their source: keep every source alive for the test binary's lifetime.
  static std::vector<std::shared_ptr<isa::SourceFile>> keep;
  keep.push_back(src);
  return isa::compile(isa::parse(src), params, "", models::predefined_constants(models::load_machine(machine)));
}

// The arrival count of mbarrier declaration `name` of a program (a pipeline's barriers: "mainloop.empty").
inline std::int64_t barrier_count(const isa::Program& p, const std::string& name) {
  for (const auto& b : p.mbarriers)
    if (b.name == name) return b.count.value_or(-1);
  throw std::logic_error("no mbarrier " + name);
}

// The message of the InputError that compiling `text` throws ("" if none).
inline std::string compile_error(const std::string& text) {
  try {
    compile_text(text);
  } catch (const isa::InputError& e) {
    return e.what();
  }
  return "";
}

inline models::RunResult run_text(const std::string& text, const std::string& machine = "h100-sxm",
                                  models::RunOptions options = {}) {
  isa::Program p = compile_text(text, {}, "test.pipe", machine);
  models::Machine m = models::load_machine(machine);
  return models::simulate(p, m, options);
}

inline std::string problem(const models::RunResult& r) { return models::format_problem(r); }
// A deadlock's likely causes, one per line.
inline std::string causes(const models::RunResult& r) {
  std::string s;
  for (const auto& c : r.deadlock.causes) s += c + "\n";
  return s;
}

struct CliResult {
  int code;
  std::string out, err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "smpipe");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int code = cli::main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

inline std::string examples_dir() { return models::kernels_dir() + "/examples"; }

}  // namespace smpipe::test
