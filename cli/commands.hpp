// The smpipe command line (language.md "Command line"). Thin: parses arguments, calls the libraries,
// prints, and turns outcomes and errors into exit codes.
#pragma once

#include <ostream>

namespace smpipe::cli {

// 5: the run finished as its status says, but an output file (--trace, --csv ...) could not be written.
enum ExitCode : int { kOk = 0, kBadInput = 1, kDeadlock = 2, kUndefined = 3, kInternal = 4, kOutputError = 5 };
// check --json: an object whose "schema" is this (docs/json.md).
inline constexpr const char* kCheckSchema = "smpipe-check/1";
// sweep --json: a file whose "schema" is this (compare --json: traces::kCompareSchema).
inline constexpr const char* kSweepSchema = "smpipe-sweep/1";

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace smpipe::cli
