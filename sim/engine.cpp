#include "sim/engine.hpp"

#include <algorithm>

#include "sim/check.hpp"

namespace smpipe::sim {

Engine::Engine(Handler& handler)
    : handler_(&handler), wheel_(kWheelSize), occupied_(kWheelSize / 64, 0) {}

bool Engine::later(const Event& a, const Event& b) {
  if (a.at != b.at) return a.at > b.at;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.sequence > b.sequence;
}

void Engine::put_in_wheel(const Event& e) {
  std::size_t slot = static_cast<std::size_t>(e.at.v & kWheelMask);
  wheel_[slot].queue[static_cast<int>(e.priority)].push_back(e);
  occupied_[slot >> 6] |= std::uint64_t{1} << (slot & 63);
  ++in_wheel_;
}

void Engine::schedule(Cycle at, Priority priority, std::uint32_t kind, std::uint32_t target,
                      std::uint64_t payload) {
  SMPIPE_CHECK(at >= now_, "an event may never be scheduled in the past");
  Event e{at, priority, next_sequence_++, kind, target, payload};
  if (at.v - now_.v < kWheelSize) {
    put_in_wheel(e);
    last_valid_ = true;
    last_priority_ = priority;
    last_at_ = at;
    last_sequence_ = e.sequence;
    last_slot_ = static_cast<std::size_t>(at.v & kWheelMask);
    last_index_ = wheel_[last_slot_].queue[static_cast<int>(priority)].size() - 1;
  } else {
    far_.push_back(e);
    std::push_heap(far_.begin(), far_.end(), later);
    last_valid_ = false;
  }
  ++count_;
}

void Engine::requeue_front(const Event& e) {
  SMPIPE_CHECK(e.at == now_, "only an event of the current cycle can be put back");
  Slot& slot = wheel_[static_cast<std::size_t>(now_.v & kWheelMask)];
  int p = static_cast<int>(e.priority);
  SMPIPE_CHECK(slot.head[p] > 0, "requeue_front needs the place of the event just taken");
  slot.queue[p][--slot.head[p]] = e;
  last_valid_ = false;  // (it may have taken the place of the event scheduled last)
  ++in_wheel_;
  ++count_;
}

std::int64_t Engine::next_wheel_cycle() const {
  if (in_wheel_ == 0) return -1;
  // The wheel holds cycles [now, now + size): scan slots from now's slot, wrapping once.
  std::size_t start = static_cast<std::size_t>(now_.v & kWheelMask);
  std::size_t words = occupied_.size();
  for (std::size_t i = 0; i <= words; ++i) {
    std::size_t w = ((start >> 6) + i) % words;
    std::uint64_t bits = occupied_[w];
    if (i == 0) bits &= ~std::uint64_t{0} << (start & 63);
    if (i == words) bits = occupied_[start >> 6] & ~(~std::uint64_t{0} << (start & 63));
    if (bits == 0) continue;
    std::size_t slot = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(bits));
    std::int64_t delta = (static_cast<std::int64_t>(slot) - static_cast<std::int64_t>(start)) & kWheelMask;
    return now_.v + delta;
  }
  return -1;
}

void Engine::migrate() {
  while (!far_.empty() && far_.front().at.v - now_.v < kWheelSize) {
    std::pop_heap(far_.begin(), far_.end(), later);
    put_in_wheel(far_.back());
    far_.pop_back();
  }
}

Engine::StopReason Engine::run(Cycle limit) {
  stop_requested_ = false;
  while (count_ > 0) {
    if (stop_requested_) return StopReason::kStopped;
    std::int64_t next = next_wheel_cycle();
    if (!far_.empty() && (next < 0 || far_.front().at.v < next)) next = far_.front().at.v;
    if (next > limit.v) return StopReason::kCycleLimit;
    if (next != now_.v) {
      if (processed_ >= next_progress_) {  // one compare per cycle when nobody asked
        next_progress_ = processed_ + progress_every_;
        handler_->progress(now_);
      }
      now_ = Cycle(next);
      migrate();
    }
    Slot& slot = wheel_[static_cast<std::size_t>(now_.v & kWheelMask)];
    // Drain this cycle; events scheduled meanwhile for this cycle (any priority) join in key order.
    for (;;) {
      int p = 0;
      while (p < kPriorities && slot.head[p] == slot.queue[p].size()) ++p;
      if (p == kPriorities) break;
      Event event = slot.queue[p][slot.head[p]++];
      if (event.sequence == last_sequence_) last_valid_ = false;  // taken: nothing may join it now
      --in_wheel_;
      --count_;
      ++processed_;
      handler_->handle(event);
      if (stop_requested_) break;
    }
    bool empty = true;
    for (int p = 0; p < kPriorities; ++p) empty = empty && slot.head[p] == slot.queue[p].size();
    if (empty) {
      for (int p = 0; p < kPriorities; ++p) {
        // Keep small buffers for reuse; give large ones back so memory follows the live events.
        if (slot.queue[p].capacity() > kKeptCapacity) {
          std::vector<Event>().swap(slot.queue[p]);
        } else {
          slot.queue[p].clear();
        }
        slot.head[p] = 0;
      }
      std::size_t index = static_cast<std::size_t>(now_.v & kWheelMask);
      occupied_[index >> 6] &= ~(std::uint64_t{1} << (index & 63));
    }
  }
  return stop_requested_ ? StopReason::kStopped : StopReason::kQueueEmpty;
}

}  // namespace smpipe::sim
