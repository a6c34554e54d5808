#include "sim/engine.hpp"

#include <algorithm>
#include <cassert>

namespace smpipe::sim {

bool Engine::later(const Event& a, const Event& b) {
  if (a.at != b.at) return a.at > b.at;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.sequence > b.sequence;
}

void Engine::schedule(Cycle at, Priority priority, std::uint32_t kind, std::uint32_t target,
                      std::uint64_t payload) {
  assert(at >= now_ && "an event may never be scheduled in the past");
  heap_.push_back(Event{at, priority, next_sequence_++, kind, target, payload});
  std::push_heap(heap_.begin(), heap_.end(), later);
  peak_ = std::max(peak_, heap_.size());
}

Engine::StopReason Engine::run(Cycle limit) {
  stop_requested_ = false;
  while (!heap_.empty()) {
    if (stop_requested_) return StopReason::kStopped;
    if (heap_.front().at > limit) return StopReason::kCycleLimit;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Event event = heap_.back();
    heap_.pop_back();
    now_ = event.at;
    ++processed_;
    handler_->handle(event);
  }
  return stop_requested_ ? StopReason::kStopped : StopReason::kQueueEmpty;
}

}  // namespace smpipe::sim
