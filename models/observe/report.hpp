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
nlohmann::json to_json(const RunResult& result, const isa::Program& program);

}  // namespace smpipe::models
