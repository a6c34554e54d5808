// Report files beside the summary: a self-contained HTML page (--html) and the summary's tables as CSV
// files (--csv DIR). Both are made from the run's JSON (docs/json.md), so they say what --json says.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/trace_writer.hpp"

namespace smpipe::cli {

// The object embedded in an HTML report names its format in "schema" (docs/json.md).
inline constexpr const char* kHtmlSchema = "smpipe-html/1";
// Events of the timeline an HTML report shows at most (beyond, the timeline is cut and says so).
inline constexpr std::size_t kHtmlTimelineEvents = 60000;

// The HTML page (cli/html/report.html) with `data` embedded; `<` is escaped so that no text in it can end
// the script it stands in.
std::string html_page(const nlohmann::json& data);
// The data of a run's report: its JSON, and the events of CTA 0 from `trace` (null: no timeline).
nlohmann::json html_run_data(const nlohmann::json& run, const sim::TraceWriter* trace, const std::string& title);

// The summary's tables as CSV, by file name: roles.csv, waits.csv, regions.csv, mbarriers.csv,
// mbarrier_waits.csv, units.csv.
const std::vector<std::string>& csv_table_names();
// The text of table `name` of a run's JSON.
std::string csv_table(const nlohmann::json& run, const std::string& name);
// The comparison's tables (compare --csv), by file name: ctas.csv, roles.csv, role_waits.csv, intervals.csv,
// event_errors.csv; and the text of one, from the comparison's JSON (smpipe-compare/1).
const std::vector<std::string>& compare_csv_table_names();
std::string compare_csv_table(const nlohmann::json& comparison, const std::string& name);
// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

}  // namespace smpipe::cli
