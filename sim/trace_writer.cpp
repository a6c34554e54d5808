#include "sim/trace_writer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace smpipe::sim {

// Bytes that are not valid UTF-8 become U+FFFD (a JSON string must be UTF-8).
std::string json_quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void TraceWriter::add(std::string event, bool keep) {
  // Once one event is left out, every later one is too (a smaller one that still fits could be the end of an
  // arrow whose start was cut), except what must stay (`keep`: why the run stopped).
  if ((dropped_ > 0 || bytes_ + event.size() > max_bytes_) && !keep) {
    ++dropped_;
    return;
  }
  bytes_ += event.size() + 2;
  events_.push_back(std::move(event));
}
static std::string quote(const std::string& s) { return json_quote(s); }

// Timestamps are microseconds at the machine clock, printed with four decimals from an integer count of tenths
// of a nanosecond (deterministic, and exact: no second rounding).
std::int64_t TraceWriter::tenths_ns(std::int64_t cycle) const {
  return std::llround(static_cast<double>(cycle) * 1e4 / clock_mhz_);
}

static std::string micros(std::int64_t tenths) {
  return fmt::format("{}{}.{:04}", tenths < 0 ? "-" : "", std::abs(tenths) / 10000, std::abs(tenths) % 10000);
}

std::string TraceWriter::ts(std::int64_t cycle) const { return micros(tenths_ns(cycle)); }

void TraceWriter::name_process(std::int64_t pid, const std::string& name) {
  add(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", pid, quote(name)));
  add(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid));
}

void TraceWriter::name_thread(std::int64_t pid, std::int64_t tid, const std::string& name) {
  add(
      fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", pid, tid, quote(name)));
  add(
      fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid, tid, tid));
}

void TraceWriter::slice(std::int64_t pid, std::int64_t tid, const std::string& name, const char* category,
                        std::int64_t start, std::int64_t duration, const std::string& args) {
  add(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})", quote(name),
                                category, pid, tid, ts(start),
                                micros(tenths_ns(start + std::max<std::int64_t>(duration, 1)) - tenths_ns(start)),
                                args.empty() ? "" : ",\"args\":" + args));
}

void TraceWriter::async_slice(std::int64_t pid, const std::string& name, const char* category, std::uint64_t id,
                              std::int64_t start, std::int64_t end) {
  add(fmt::format(R"({{"ph":"b","name":{},"cat":"{}","pid":{},"id":"0x{:x}","ts":{}}})", quote(name), category,
                                pid, id, ts(start)));
  add(fmt::format(R"({{"ph":"e","name":{},"cat":"{}","pid":{},"id":"0x{:x}","ts":{}}})", quote(name), category,
                                pid, id, ts(end)));
}

void TraceWriter::flow(std::int64_t pid, std::int64_t tid, std::uint64_t id, std::int64_t at, bool start) {
  add(fmt::format(R"({{"ph":"{}","name":"flow","cat":"flow","pid":{},"tid":{},"id":{},"ts":{}{}}})",
                                start ? "s" : "f", pid, tid, id, ts(at), start ? "" : ",\"bp\":\"e\""));
}

void TraceWriter::counter(std::int64_t pid, const std::string& name, std::int64_t at, std::int64_t value) {
  add(
      fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"stages":{}}}}})", quote(name), pid, ts(at), value));
}

void TraceWriter::instant(const std::string& name, std::int64_t at) {
  add(fmt::format(R"({{"ph":"i","s":"g","name":{},"pid":0,"tid":0,"ts":{}}})", quote(name), ts(at)), true);
}

void TraceWriter::write(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"smpipe\",\"time\":\"microseconds at the machine clock\"},"
         "\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events_.size(); ++i) out << events_[i] << (i + 1 < events_.size() || dropped_ ? ",\n" : "\n");
  if (dropped_)  // the cut, as an instant event at the start of the first process, so a viewer shows it
    out << fmt::format(R"x({{"ph":"i","s":"g","name":"trace cut: {} later events left out (over {} MB)","pid":0,"tid":0,"ts":0}})x",
                       dropped_, max_bytes_ >> 20)
        << "\n";
  out << "]}\n";
}

}  // namespace smpipe::sim
