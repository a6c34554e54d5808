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
