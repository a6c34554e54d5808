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

static constexpr const char* kHead =
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"smpipe\",\"time\":\"microseconds at the machine clock\"},"
    "\"traceEvents\":[\n";

void TraceWriter::stream_to(Sink sink, std::size_t keep_cta0) {
  sink_ = std::move(sink);
  keep_cta0_ = keep_cta0;
  sink_(kHead);
}

void TraceWriter::add(std::string event, std::int64_t pid, bool keep) {
  // Once one event is left out, every later one is too (a smaller one that still fits could be the end of an
  // arrow whose start was cut), except what must stay (`keep`: why the run stopped).
  if ((dropped_ > 0 || bytes_ + event.size() > max_bytes_) && !keep) {
    ++dropped_;
    return;
  }
  bytes_ += event.size() + 2;
  if (!sink_) {
    events_.push_back(std::move(event));
  } else {
    sink_(written_ > 0 ? ",\n" : "");
    sink_(event);
    if (pid == 0) {
      if (events_.size() < keep_cta0_) events_.push_back(std::move(event));
      else ++cta0_not_kept_;
    }
  }
  ++written_;
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
  add(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", pid, quote(name)), pid);
  add(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid), pid);
}

void TraceWriter::name_thread(std::int64_t pid, std::int64_t tid, const std::string& name) {
  add(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", pid, tid, quote(name)), pid);
  add(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid, tid, tid), pid);
}

void TraceWriter::slice(std::int64_t pid, std::int64_t tid, const std::string& name, const char* category,
                        std::int64_t start, std::int64_t duration, const std::string& args) {
  if (!in_window(start, start + std::max<std::int64_t>(duration, 1))) return;
  add(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})", quote(name),
                                category, pid, tid, ts(start),
                                micros(tenths_ns(start + std::max<std::int64_t>(duration, 1)) - tenths_ns(start)),
                                args.empty() ? "" : ",\"args\":" + args),
      pid);
}

void TraceWriter::async_slice(std::int64_t pid, const std::string& name, const char* category, std::uint64_t id,
                              std::int64_t start, std::int64_t end) {
  if (!in_window(start, std::max(end, start + 1))) return;
  add(fmt::format(R"({{"ph":"b","name":{},"cat":"{}","pid":{},"id":"0x{:x}","ts":{}}})", quote(name), category, pid, id, ts(start)),
      pid);
  add(fmt::format(R"({{"ph":"e","name":{},"cat":"{}","pid":{},"id":"0x{:x}","ts":{}}})", quote(name), category, pid, id, ts(end)),
      pid);
}

void TraceWriter::flow(std::int64_t pid, std::int64_t tid, std::int64_t from, std::int64_t to_pid, std::int64_t to_tid,
                       std::int64_t to, std::uint64_t id) {
  if (!in_window(from, from + 1) || !in_window(to, to + 1)) return;
  add(fmt::format(R"({{"ph":"s","name":"flow","cat":"flow","pid":{},"tid":{},"id":{},"ts":{}}})", pid, tid, id, ts(from)), pid);
  add(fmt::format(R"({{"ph":"f","name":"flow","cat":"flow","pid":{},"tid":{},"id":{},"ts":{},"bp":"e"}})", to_pid, to_tid, id, ts(to)),
      to_pid);
}

void TraceWriter::counter(std::int64_t pid, const std::string& name, std::int64_t at, std::int64_t value) {
  if (!in_window(at, at + 1)) return;
  add(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"stages":{}}}}})", quote(name), pid, ts(at), value), pid);
}

void TraceWriter::instant(const std::string& name, std::int64_t at) {
  add(fmt::format(R"({{"ph":"i","s":"g","name":{},"pid":0,"tid":0,"ts":{}}})", quote(name), ts(at)), 0, true);
}

void TraceWriter::write(std::ostream& out) const {
  if (!sink_) {
    out << kHead;
    for (std::size_t i = 0; i < events_.size(); ++i) out << events_[i] << (i + 1 < events_.size() ? ",\n" : "");
  }
  if (written_ > 0 || dropped_) out << (dropped_ && written_ > 0 ? ",\n" : "\n");
  if (dropped_)  // the cut, as an instant event at the start of the first process, so a viewer shows it
    out << fmt::format(R"x({{"ph":"i","s":"g","name":"trace cut: {} later events left out (over {} MB)","pid":0,"tid":0,"ts":0}})x",
                       dropped_, max_bytes_ >> 20)
        << "\n";
  out << "]}\n";
}

}  // namespace smpipe::sim
