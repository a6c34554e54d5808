// Chrome trace-event output (opens in ui.perfetto.dev and chrome://tracing): a process per CTA, a
// thread track per warp, tracks per mbarrier for phase completions, async slices for in-flight TMA and
// MMA work, flow arrows issue -> barrier completion -> woken waiter, and counters for stage occupancy.
// Events are rendered as they come and written in that order: the same run gives the same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace smpipe::sim {

// A string as a JSON string literal (quotes and escapes).
std::string json_quote(const std::string& s);

class TraceWriter {
 public:
  // At most `max_bytes` of events are kept (what a long run records beyond is counted, not kept).
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{512} << 20;
  TraceWriter(double clock_mhz, std::int64_t max_ctas, std::size_t max_bytes = kDefaultMaxBytes)
      : clock_mhz_(clock_mhz), max_ctas_(max_ctas), max_bytes_(max_bytes) {}

  bool wants(std::int64_t cta) const { return cta < max_ctas_; }

  // Streams the events to `sink` as they come instead of keeping them (the file's head goes out now; write()
  // then gives only its end), so that a long run's trace costs no memory. `keep_cta0`: events of CTA 0 kept
  // as well (events()), at most this many (an HTML report's timeline).
  using Sink = std::function<void(std::string_view)>;
  void stream_to(Sink sink, std::size_t keep_cta0 = 0);
  // Keeps only what happens in cycles [from, to): slices and async spans that overlap it, arrows with both
  // ends in it, counters in it; names of tracks and the stop's instant always.
  void set_window(std::int64_t from, std::int64_t to) {
    from_ = from;
    to_ = to;
  }

  void name_process(std::int64_t pid, const std::string& name);
  void name_thread(std::int64_t pid, std::int64_t tid, const std::string& name);
  // A slice on a warp (or barrier) track, with optional pre-rendered JSON args object ("{...}").
  void slice(std::int64_t pid, std::int64_t tid, const std::string& name, const char* category, std::int64_t start,
             std::int64_t duration, const std::string& args = "");
  void async_slice(std::int64_t pid, const std::string& name, const char* category, std::uint64_t id, std::int64_t start,
                   std::int64_t end);
  // An arrow from (pid, tid) at `from` to (to_pid, to_tid) at `to`: both ends at once.
  void flow(std::int64_t pid, std::int64_t tid, std::int64_t from, std::int64_t to_pid, std::int64_t to_tid, std::int64_t to,
            std::uint64_t id);
  void counter(std::int64_t pid, const std::string& name, std::int64_t at, std::int64_t value);
  // A global instant event (shown across every track), such as the end of a run that stopped.
  void instant(const std::string& name, std::int64_t at);

  std::size_t size() const { return written_; }  // events written (streamed or kept)
  // The events kept, each one JSON object, in the order written: all of them, or when streaming CTA 0's first
  // `keep_cta0`.
  const std::vector<std::string>& events() const { return events_; }
  std::uint64_t dropped() const { return dropped_; }  // events left out past the size limit
  std::uint64_t cta0_not_kept() const { return cta0_not_kept_; }  // streaming: events of CTA 0 beyond keep_cta0
  // The whole file, or when streaming what is left of it (its end).
  void write(std::ostream& out) const;

 private:
  // Time in tenths of a nanosecond (the precision printed), rounded once per cycle count: a slice's end is
  // the rounded end, so slices that touch in cycles touch in the file too, never overlap by a rounding step.
  std::int64_t tenths_ns(std::int64_t cycle) const;
  std::string ts(std::int64_t cycle) const;
  void add(std::string event, std::int64_t pid, bool keep = false);
  bool in_window(std::int64_t start, std::int64_t end) const { return start < to_ && end > from_; }

  double clock_mhz_;
  std::int64_t max_ctas_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t dropped_ = 0;
  std::vector<std::string> events_;
  std::size_t written_ = 0;
  Sink sink_;
  std::size_t keep_cta0_ = 0;
  std::uint64_t cta0_not_kept_ = 0;
  std::int64_t from_ = std::numeric_limits<std::int64_t>::min(), to_ = std::numeric_limits<std::int64_t>::max();
};

}  // namespace smpipe::sim
