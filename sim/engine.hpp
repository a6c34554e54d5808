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
  // Called between cycles about every `progress_every` events (Engine::report_progress), for a progress line.
  virtual void progress(Cycle /*now*/) {}
};

// The queue is a timing wheel of kWheelSize one-cycle slots (each a FIFO per priority) for events in
// [now, now + kWheelSize), plus a heap for later events that moves them into the wheel, in key order,
// as their cycle comes within reach. Both give the same total order as one heap keyed by
// (cycle, priority, sequence): within a slot, FIFO per priority is sequence order, and an event moved
// in from the heap was always scheduled before any event put directly into that slot.
class Engine {
 public:
  explicit Engine(Handler& handler);

  Cycle now() const { return now_; }

  // Schedules an event at `at` (never in the past: that is a bug of the caller).
  void schedule(Cycle at, Priority priority, std::uint32_t kind, std::uint32_t target,
                std::uint64_t payload = 0);

  enum class StopReason : std::uint8_t { kQueueEmpty, kCycleLimit, kStopped };

  // Runs until the queue is empty, the next event lies beyond `limit`, or stop() is called.
  StopReason run(Cycle limit);
  void stop() { stop_requested_ = true; }
  // Ask for Handler::progress about every `events` events (0: never, the default).
  void report_progress(std::uint64_t events) { progress_every_ = events, next_progress_ = events ? events : ~std::uint64_t{0}; }

  // For a handler that does the work of several events in one (a batch of same-cycle wake-ups): counts
  // one more event processed, so the count is what the separate events would give.
  void count_event() { ++processed_; }
  // Whether an event of a priority that runs before `p` is due at the current cycle (scheduled by the
  // event being handled): a batch stops there and puts the rest of its work back with requeue_front.
  bool due_before(Priority p) const {
    const Slot& slot = wheel_[static_cast<std::size_t>(now_.v & kWheelMask)];
    for (int q = 0; q < static_cast<int>(p); ++q)
      if (slot.head[q] != slot.queue[q].size()) return true;
    return false;
  }
  // During the handling of an event of priority `e.priority` at the current cycle: puts `e` back at the
  // head of that priority's queue, where the event just taken was, so it keeps that place in the order.
  void requeue_front(const Event& e);

  // The event scheduled last, while it still waits in the wheel at (`at`, `p`), else nullptr. An event
  // scheduled now at (`at`, `p`) would run right after it, with nothing between them, so a handler may
  // instead add the new work to it (a list of warps, run one after the other; each one counted with
  // count_event when it runs). The pointer is valid until the next schedule, run or requeue.
  Event* last_pending(Cycle at, Priority p) {
    return last_valid_ && last_at_ == at && last_priority_ == p ? &wheel_[last_slot_].queue[static_cast<int>(p)][last_index_]
                                                                : nullptr;
  }

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return count_; }

 private:
  static constexpr std::int64_t kWheelBits = 9;
  static constexpr std::int64_t kWheelSize = std::int64_t{1} << kWheelBits;
  static constexpr std::int64_t kWheelMask = kWheelSize - 1;
  static constexpr int kPriorities = 4;
  static constexpr std::size_t kKeptCapacity = 64;  // events a drained slot keeps room for

  struct Slot {
    std::vector<Event> queue[kPriorities];
    std::uint32_t head[kPriorities] = {};
  };

  static bool later(const Event& a, const Event& b);
  void put_in_wheel(const Event& e);
  std::int64_t next_wheel_cycle() const;  // -1 if the wheel is empty
  void migrate();                         // heap events within reach of now_ -> wheel

  Handler* handler_;
  std::vector<Slot> wheel_;
  std::vector<std::uint64_t> occupied_;  // bitmap of non-empty slots
  std::uint64_t progress_every_ = 0, next_progress_ = ~std::uint64_t{0};
  std::size_t in_wheel_ = 0;
  std::vector<Event> far_;  // heap of events at now_ + kWheelSize or later
  std::size_t count_ = 0;
  Cycle now_{0};
  std::uint64_t next_sequence_ = 0;
  std::uint64_t processed_ = 0;
  // The event scheduled last, while it waits in the wheel (last_valid_): its key and place there.
  bool last_valid_ = false;
  Priority last_priority_ = Priority::kCompletion;
  Cycle last_at_{0};
  std::uint64_t last_sequence_ = 0;
  std::size_t last_slot_ = 0, last_index_ = 0;
  bool stop_requested_ = false;
};

}  // namespace smpipe::sim
