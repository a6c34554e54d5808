// Loading a program on its machine, shared by the C++ API (api/smpipe.cpp) and the command line (cli/load.cpp):
// a file or built-in model name, the machine the program or the caller names, the params bound.
#pragma once

#include <string>
#include <vector>

#include "isa/program.hpp"
#include "models/gpu/gpu.hpp"
#include "models/machine.hpp"

namespace smpipe::api {

struct Loaded {
  isa::Program program;
  models::Machine machine;
};

// FILE or a built-in model name -> a path. Throws isa::InputError.
std::string resolve_file(const std::string& f);
// The machine a program's `gpu "..."` line names: a built-in name, or a .json file's bare name, looked up
// beside the program. Throws isa::InputError for anything else (a path).
std::string program_machine(const std::string& gpu, const std::string& program_path);
// The program `file` with `overrides` bound, on machine `gpu` (a name or .json file; "": the program's
// `gpu` line, else h100-sxm), at `clock_mhz` (0: the machine's). Throws isa::InputError.
Loaded load_program(const std::string& file, const isa::ParamOverrides& overrides, const std::string& gpu,
                    const std::string& kernel, double clock_mhz);
// The SM clock modes (the command line's --clock, Options::clock): "sustained" (also ""), "sustained-constant",
// "boost".
bool is_clock_mode(const std::string& mode);
// Sets l.machine's SM clock by `mode` (is_clock_mode) when no clock in MHz was given: "boost" keeps the machine
// file's clock; "sustained-constant" takes its clock under load with constant data; "sustained" (and "") the clock
// under load with random data (models::sustained_clock_mhz), which takes a first run at the machine's load clock
// with `first`'s seed and limits, without jitter (the clock depends on the program and machine alone), without
// the race checker (it does not change the timing) and without first's trace and observers, over at most
// kLoadProbeOps ops, to measure the tensor pipe's share of the GPU (no first run where the clock cannot depend on
// it: the B200's clocks under load are its nominal clock). Says which clock in l.machine.clock_basis.
void set_clock(Loaded& l, const std::string& mode, models::RunOptions first);
// Ops of that first run: its share of the tensor pipe at 1 M ops is within 0.05 of the whole run's on the
// built-in models (the difference: the ramp-up, a last partial wave; at most 7 MHz, 0.4 % of the time), at a
// small part of a large run's cost.
inline constexpr std::int64_t kLoadProbeOps = 1'000'000;
// The .pipe files of the built-in models' folder (models and the files they import): paths under it without
// .pipe, sorted.
std::vector<std::string> builtin_model_names();

}  // namespace smpipe::api
