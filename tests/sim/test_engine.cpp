#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/rng.hpp"

using namespace smpipe::sim;

namespace {
struct Recorder : Handler {
  Engine* engine = nullptr;
  std::vector<std::pair<std::int64_t, std::uint32_t>> seen;
  void handle(const Event& e) override { seen.emplace_back(e.at.v, e.target); }
};
}  // namespace

TEST_CASE("events run in (cycle, priority, insertion) order", "[sim]") {
  Recorder r;
  Engine e(r);
  e.schedule(Cycle(5), Priority::kWarpStep, 0, 1);
  e.schedule(Cycle(5), Priority::kCompletion, 0, 2);  // same cycle, earlier priority
  e.schedule(Cycle(3), Priority::kLaunch, 0, 3);
  e.schedule(Cycle(5), Priority::kWarpStep, 0, 4);    // FIFO after target 1
  e.schedule(Cycle(5), Priority::kWake, 0, 5);
  REQUIRE(e.run(Cycle(100)) == Engine::StopReason::kQueueEmpty);
  std::vector<std::uint32_t> order;
  for (auto& [_, t] : r.seen) order.push_back(t);
  CHECK(order == std::vector<std::uint32_t>{3, 2, 5, 1, 4});
  CHECK(e.now() == Cycle(5));
  CHECK(e.events_processed() == 5);
}

TEST_CASE("the cycle limit stops before later events, and they stay queued", "[sim]") {
  Recorder r;
  Engine e(r);
  e.schedule(Cycle(10), Priority::kWarpStep, 0, 1);
  e.schedule(Cycle(11), Priority::kWarpStep, 0, 2);
  CHECK(e.run(Cycle(10)) == Engine::StopReason::kCycleLimit);  // 10 runs (limit inclusive), 11 does not
  CHECK(r.seen.size() == 1);
  CHECK(e.pending() == 1);
}

TEST_CASE("the RNG is deterministic and stays in range", "[sim]") {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    auto x = a.uniform(-5, 5);
    CHECK(x == b.uniform(-5, 5));
    CHECK(x >= -5);
    CHECK(x <= 5);
    differs = differs || x != c.uniform(-5, 5);
  }
  CHECK(differs);
  CHECK(Rng(7).uniform(3, 3) == 3);
}

TEST_CASE("the timing wheel gives the same order as one (cycle, priority, sequence) heap", "[sim]") {
  // Random schedules mixing near events (in the wheel), far events (beyond it: the overflow heap) and
  // same-cycle events of lower priority scheduled while a cycle is being processed.
  struct Reference : Handler {
    Engine* engine = nullptr;
    Rng rng{3};
    std::vector<std::tuple<std::int64_t, int, std::uint32_t>> seen;
    std::uint32_t next_id = 1000;
    void handle(const Event& e) override {
      seen.emplace_back(e.at.v, static_cast<int>(e.priority), e.target);
      if (next_id < 6000) {
        int fan = static_cast<int>(rng.uniform(0, 2));
        for (int i = 0; i < fan; ++i) {
          std::int64_t delay = rng.uniform(0, 3) == 0 ? rng.uniform(4000, 20000) : rng.uniform(0, 50);
          auto prio = static_cast<Priority>(rng.uniform(0, 3));
          engine->schedule(Cycle(e.at.v + delay), prio, 0, next_id++);
        }
      }
    }
  };
  Reference r;
  Engine e(r);
  r.engine = &e;
  for (std::uint32_t i = 0; i < 200; ++i) e.schedule(Cycle(r.rng.uniform(0, 30000)), static_cast<Priority>(i % 4), 0, i);
  REQUIRE(e.run(Cycle::max()) == Engine::StopReason::kQueueEmpty);
  REQUIRE(r.seen.size() > 1000);
  // Non-decreasing (cycle, priority) except where an event was scheduled for the current cycle at a
  // lower priority than the one running (then it runs next), and never earlier than the current cycle.
  for (std::size_t i = 1; i < r.seen.size(); ++i) CHECK(std::get<0>(r.seen[i]) >= std::get<0>(r.seen[i - 1]));
  // Same-cycle, same-priority events run in scheduling order; ids grow with the scheduling order.
  for (std::size_t i = 1; i < r.seen.size(); ++i) {
    auto [c0, p0, t0] = r.seen[i - 1];
    auto [c1, p1, t1] = r.seen[i];
    if (c0 == c1 && p0 == p1) CHECK(t0 < t1);
  }
}

namespace {
// A batch of wake-ups (kind 1, payload = warps still to wake, low digit first) handled as Simulator::wake_list
// does: each warp may schedule a completion for this cycle (kind 2) or a wake-up (kind 3); a due completion
// sends the rest of the batch back to the head of its queue.
struct Batcher : Handler {
  Engine* engine = nullptr;
  std::vector<std::uint32_t> seen;
  void handle(const Event& e) override {
    if (e.kind != 1) {
      seen.push_back(e.target);
      return;
    }
    for (std::uint64_t rest = e.payload;;) {
      std::uint32_t warp = static_cast<std::uint32_t>(rest % 10);
      rest /= 10;
      seen.push_back(warp);
      if (warp == 2) engine->schedule(engine->now(), Priority::kCompletion, 2, 20);  // runs before warps 3, 4
      if (warp == 3) engine->schedule(engine->now(), Priority::kWake, 3, 30);        // after the batch
      if (rest == 0) return;
      if (engine->due_before(Priority::kWake)) {
        Event r = e;
        r.payload = rest;
        engine->requeue_front(r);
        return;
      }
      engine->count_event();
    }
  }
};
}  // namespace

TEST_CASE("a batch of wake-ups runs in the order separate events would, and counts as many events", "[sim]") {
  Batcher b;
  Engine e(b);
  b.engine = &e;
  e.schedule(Cycle(4), Priority::kWake, 0, 9);         // queued before the batch
  e.schedule(Cycle(4), Priority::kWake, 1, 0, 4321);  // warps 1, 2, 3, 4
  e.schedule(Cycle(4), Priority::kWake, 0, 8);         // after it
  REQUIRE(e.run(Cycle(100)) == Engine::StopReason::kQueueEmpty);
  // Warp 2's completion (20) runs before warps 3 and 4; warp 3's wake-up (30) after everything queued.
  CHECK(b.seen == std::vector<std::uint32_t>{9, 1, 2, 20, 3, 4, 8, 30});
  // 9, 8, the four warps, 20 and 30: what separate events give.
  CHECK(e.events_processed() == 8);
  CHECK(e.pending() == 0);
}

TEST_CASE("due_before sees only earlier priorities of the current cycle", "[sim]") {
  struct Probe : Handler {
    Engine* engine = nullptr;
    std::vector<bool> due;
    void handle(const Event& ev) override {
      if (ev.target == 1) {
        engine->schedule(engine->now() + Cycle(1), Priority::kCompletion, 0, 9);  // next cycle: not due
        due.push_back(engine->due_before(Priority::kWake));
        engine->schedule(engine->now(), Priority::kWarpStep, 0, 9);  // later priority: not due
        due.push_back(engine->due_before(Priority::kWake));
        engine->schedule(engine->now(), Priority::kCompletion, 0, 9);
        due.push_back(engine->due_before(Priority::kWake));
      }
    }
  } p;
  Engine e(p);
  p.engine = &e;
  e.schedule(Cycle(2), Priority::kWake, 0, 1);
  e.run(Cycle(100));
  CHECK(p.due == std::vector<bool>{false, false, true});
}

TEST_CASE("last_pending offers the event scheduled last only while nothing can come between it and a new one", "[sim]") {
  Recorder r;
  Engine e(r);
  e.schedule(Cycle(3), Priority::kWarpStep, 0, 1);
  Event* last = e.last_pending(Cycle(3), Priority::kWarpStep);
  REQUIRE(last != nullptr);
  CHECK(last->target == 1);
  CHECK(e.last_pending(Cycle(4), Priority::kWarpStep) == nullptr);  // another cycle
  CHECK(e.last_pending(Cycle(3), Priority::kWake) == nullptr);      // another priority
  e.schedule(Cycle(5), Priority::kWarpStep, 0, 2);                  // something scheduled since
  CHECK(e.last_pending(Cycle(3), Priority::kWarpStep) == nullptr);
  REQUIRE(e.last_pending(Cycle(5), Priority::kWarpStep) != nullptr);
  e.schedule(Cycle(100000), Priority::kWarpStep, 0, 3);             // beyond the wheel: in the heap, not offered
  CHECK(e.last_pending(Cycle(100000), Priority::kWarpStep) == nullptr);

  // Taken by the run: no longer offered, even from the handler of that very event.
  struct Taker : Handler {
    Engine* engine = nullptr;
    bool offered = true;
    void handle(const Event& ev) override {
      if (ev.target == 7) offered = engine->last_pending(engine->now(), Priority::kWarpStep) != nullptr;
    }
  } t;
  Engine f(t);
  t.engine = &f;
  f.schedule(Cycle(2), Priority::kWarpStep, 0, 7);
  f.run(Cycle(100));
  CHECK_FALSE(t.offered);
}
