// What the fuzz targets share: the guard that tells expected rejections from failures, the built-in
// machines loaded once, the small run limits, and one simulation with every report the CLI can print.
#pragma once

#include <cstdint>
#include <exception>
#include <streambuf>
#include <string>
#include <string_view>
#include <typeinfo>

#include "isa/program.hpp"
#include "isa/source.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"

namespace smpipe::fuzz {

// A stream buffer that drops what it is given: the reports are produced for their code paths, not read.
class NullBuf : public std::streambuf {
 protected:
  int overflow(int c) override { return c == traits_type::eof() ? 0 : c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// Prints `what` and aborts: the fuzzer (or the regression test) reports the input.
[[noreturn]] void fail(std::string_view target, const std::string& what);

// Runs `body`; an isa::InputError is the expected rejection of bad input; anything else fails.
template <class Body>
void guarded(std::string_view target, Body&& body) {
  try {
    body();
  } catch (const isa::InputError&) {
    // bad input, reported as the CLI would: fine
  } catch (const std::exception& e) {
    fail(target, std::string("an exception other than isa::InputError escaped: ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    fail(target, "a non-std::exception escaped");
  }
}

// A built-in machine (h100-sxm, h200, b200), loaded once. Aborts when it cannot be loaded (SMPIPE_MACHINES).
const models::Machine& builtin_machine(const std::string& name);
// `name` when it names a built-in machine (never a path: the fuzzer must not read files), else h100-sxm.
const models::Machine& builtin_machine_or_default(const std::string& name);

// RunOptions with the fuzz limits (targets.hpp); RunOptions::max_ops too where the simulator has one.
models::RunOptions small_run_options();

// check_fits, simulate (with a Chrome trace of the first CTAs) and every report of the result: the summary,
// the problem, the JSON, the trace file (written to nowhere). Throws what they throw.
models::RunResult run_program(std::string_view target, const isa::Program& program, const models::Machine& machine,
                              std::uint64_t variant);

// parse -> compile each kernel (at most 4) -> run_program, on the machine the file names (built-in only).
void run_pipe_text(std::string_view target, const std::string& text);

// FNV-1a of the input: picks deterministic variations (jitter on or off, ...).
std::uint64_t input_hash(const std::uint8_t* data, std::size_t size);

}  // namespace smpipe::fuzz
