// Loading a program on its machine, shared by the C++ API (api/smpipe.cpp) and the command line (cli/load.cpp):
// a file or built-in model name, the machine the program or the caller names, the params bound.
#pragma once

#include <string>
#include <vector>

#include "isa/program.hpp"
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
// The .pipe files of the built-in models' folder (models and the files they import): paths under it without
// .pipe, sorted.
std::vector<std::string> builtin_model_names();

}  // namespace smpipe::api
