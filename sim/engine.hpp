// The discrete-event engine: a priority queue of events ordered by (cycle, priority, insertion sequence).
// The order is total and depends only on what was scheduled and when, never on pointer values, so the
// same inputs give the same run. Events are small plain records dispatched to one Handler; models decide
// what `kind`, `target` and `payload` mean.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cycle.hpp"

namespace smpipe::sim {

// Order of events that fall on the same cycle. Lower runs first.
enum class Priority : std::uint8_t {
  // State changes made by units (a TMA's complete_tx, an MMA group finishing, a remote arrive landing)
  // come first, so that every warp looking at a barrier in this cycle sees them.
  kCompletion = 0,
  // Waiters woken by a completion resume after all completions of the cycle.
  kWake = 1,
  // Warps issue their next op after the state of the cycle is settled.
  kWarpStep = 2,
  // CTA launches come last: an SM's resources freed by CTAs exiting in this cycle are then reusable.
  kLaunch = 3,
};

struct Event {
  Cycle at;
  Priority priority = Priority::kWarpStep;
  std::uint64_t sequence = 0;  // assigned by the engine: FIFO among equal (cycle, priority)
  std::uint32_t kind = 0;
  std::uint32_t target = 0;
  std::uint64_t payload = 0;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void handle(const Event& event) = 0;
};

class Engine {
 public:
  explicit Engine(Handler& handler) : handler_(&handler) {}

  Cycle now() const { return now_; }

  // Schedules an event at `at` (never in the past: that is a bug of the caller).
  void schedule(Cycle at, Priority priority, std::uint32_t kind, std::uint32_t target,
                std::uint64_t payload = 0);

  enum class StopReason : std::uint8_t { kQueueEmpty, kCycleLimit, kStopped };

  // Runs until the queue is empty, the next event lies beyond `limit`, or stop() is called.
  StopReason run(Cycle limit);
  void stop() { stop_requested_ = true; }

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return heap_.size(); }
  std::size_t peak_pending() const { return peak_; }

 private:
  static bool later(const Event& a, const Event& b);

  Handler* handler_;
  std::vector<Event> heap_;
  Cycle now_{0};
  std::uint64_t next_sequence_ = 0;
  std::uint64_t processed_ = 0;
  std::size_t peak_ = 0;
  bool stop_requested_ = false;
};

}  // namespace smpipe::sim
