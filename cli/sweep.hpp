// `smpipe sweep`: one program over a grid of parameter values (and machines), every point on all cores,
// results as a table, CSV and JSON, and a ranking (docs/cli.md).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/load.hpp"

namespace smpipe::cli {

struct SweepArgs {
  RunArgs run;                      // file, fixed -D values, seed, jitter, max-cycles, clock
  std::vector<std::string> axes;    // NAME=V1,V2,... or NAME=A..B or NAME=A..B:STEP (half-open, like the language)
  std::vector<std::string> gpus;    // machines (one axis); none: the file's or the default
  std::vector<std::string> group;   // params whose values define a group ranked on its own (e.g. M, N, K)
  std::string csv, json, html;      // result files (html: a chart of the configs per group)
  int jobs = 0;
  int top = 5;
};

// The values of one axis. Throws isa::InputError on a malformed one.
std::pair<std::string, std::vector<std::int64_t>> parse_axis(const std::string& text);

int cmd_sweep(const SweepArgs& a, std::ostream& out, std::ostream& err);

}  // namespace smpipe::cli
