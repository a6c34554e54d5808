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
