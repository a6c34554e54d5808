// Turning a run into words and data: the summary, the deadlock / diagnosis report, and --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "isa/program.hpp"
#include "models/observe/result.hpp"

namespace smpipe::models {

std::string format_summary(const RunResult& result, const isa::Program& program);
// Empty for a finished run; otherwise the deadlock, watchdog or diagnosis report.
std::string format_problem(const RunResult& result);
// --json of run and replay: an object whose "schema" is kRunSchema (docs/json.md lists every key).
inline constexpr const char* kRunSchema = "smpipe-run/1";
nlohmann::json to_json(const RunResult& result, const isa::Program& program);
// A title or a cause as a machine-readable code: lower case, words joined by '_' ("named barrier arrival
// twice" -> "named_barrier_arrival_twice", "wgmma.wait" -> "wgmma_wait").
std::string code_of(const std::string& text);

}  // namespace smpipe::models
