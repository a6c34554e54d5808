// The mbarrier state machine (semantics.md §1), each rule on both sides of its boundary.
#include <catch2/catch.hpp>

#include "models/sync/mbarrier.hpp"

using smpipe::models::MBarrier;
using R = MBarrier::Result;

TEST_CASE("init: count in 1..2^20-1, phase 0, pending = expected = count, tx 0", "[mbarrier]") {
  MBarrier b;
  CHECK(b.init(0) == R::kBadCount);
  CHECK_FALSE(b.valid());
  CHECK(b.init(MBarrier::kMaxCount + 1) == R::kBadCount);
  CHECK(b.init(MBarrier::kMaxCount) == R::kOk);
  CHECK(b.pending() == MBarrier::kMaxCount);
  MBarrier c;
  REQUIRE(c.init(3) == R::kOk);
  CHECK(c.phase() == 0);
  CHECK(c.pending() == 3);
  CHECK(c.expected() == 3);
  CHECK(c.tx() == 0);
}

TEST_CASE("double init is undefined, inval then init is fine, use before init is undefined", "[mbarrier]") {
  MBarrier b;
  CHECK(b.arrive(1) == R::kNotInitialised);
  CHECK(b.expect_tx(1) == R::kNotInitialised);
  CHECK(b.complete_tx(1) == R::kNotInitialised);
  REQUIRE(b.init(2) == R::kOk);
  CHECK(b.init(2) == R::kAlreadyValid);
  CHECK(b.inval() == R::kOk);
  CHECK(b.arrive(1) == R::kNotInitialised);
  CHECK(b.init(2) == R::kOk);
}

TEST_CASE("a phase completes exactly when the count-th arrival lands (N-1: no, N: yes)", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(4) == R::kOk);
  CHECK(b.arrive(3) == R::kOk);
  CHECK(b.phase() == 0);
  CHECK(b.pending() == 1);
  CHECK(b.arrive(1) == R::kPhaseCompleted);
  CHECK(b.phase() == 1);
  CHECK(b.pending() == 4);  // reloaded with expected
  CHECK(b.arrivals_last_phase() == 4);
}

TEST_CASE("arrivals beyond pending are an overflow and are not applied", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(2) == R::kOk);
  CHECK(b.expect_tx(16) == R::kOk);  // keeps the phase open after both arrivals
  CHECK(b.arrive(2) == R::kOk);
  CHECK(b.pending() == 0);
  CHECK(b.arrive(1) == R::kArrivalOverflow);
  CHECK(b.pending() == 0);
  CHECK(b.arrive(0) == R::kBadCount);
}

TEST_CASE("the phase needs pending == 0 AND tx == 0", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(1) == R::kOk);
  CHECK(b.expect_tx(100) == R::kOk);
  CHECK(b.arrive(1) == R::kOk);  // pending 0 but tx 100
  CHECK(b.phase() == 0);
  CHECK(b.complete_tx(99) == R::kOk);
  CHECK(b.phase() == 0);
  CHECK(b.complete_tx(1) == R::kPhaseCompleted);
  CHECK(b.phase() == 1);
}

TEST_CASE("tx may go negative (complete before expect) within -(2^20-1)..2^20-1", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(1) == R::kOk);
  CHECK(b.complete_tx(64) == R::kOk);
  CHECK(b.tx() == -64);
  CHECK(b.expect_tx(64) == R::kOk);  // back to 0 with pending 1: not complete
  CHECK(b.phase() == 0);
  CHECK(b.arrive(1) == R::kPhaseCompleted);
  MBarrier c;
  REQUIRE(c.init(1) == R::kOk);
  CHECK(c.expect_tx(MBarrier::kMaxTx) == R::kOk);
  CHECK(c.expect_tx(1) == R::kTxOutOfRange);
  MBarrier d;
  REQUIRE(d.init(1) == R::kOk);
  CHECK(d.complete_tx(MBarrier::kMaxTx) == R::kOk);
  CHECK(d.complete_tx(1) == R::kTxOutOfRange);
}

TEST_CASE("parity: done = (phase & 1) != P", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(1) == R::kOk);
  CHECK_FALSE(b.test_parity(0));  // phase 0 not complete
  CHECK(b.test_parity(1));        // "the immediately preceding phase": producers start with parity 1
  REQUIRE(b.arrive(1) == R::kPhaseCompleted);
  CHECK(b.test_parity(0));
  CHECK_FALSE(b.test_parity(1));
}

TEST_CASE("arrive.drop lowers expected for later phases, dropping to 0 is an error", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(3) == R::kOk);
  CHECK(b.arrive_drop(1) == R::kOk);
  CHECK(b.expected() == 2);
  CHECK(b.arrive(2) == R::kPhaseCompleted);
  CHECK(b.pending() == 2);
  CHECK(b.arrive_drop(2) == R::kDropToZero);
  CHECK(b.arrive_drop(1) == R::kOk);
  CHECK(b.expected() == 1);
}

TEST_CASE("arrive.noComplete may not complete the phase", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(2) == R::kOk);
  CHECK(b.arrive_no_complete(1) == R::kOk);
  CHECK(b.arrive_no_complete(1) == R::kNoCompleteWouldComplete);
  CHECK(b.expect_tx(8) == R::kOk);
  CHECK(b.arrive_no_complete(1) == R::kOk);  // tx pending: the phase does not complete
}

TEST_CASE("raise_pending (cp.async.mbarrier.arrive without .noinc) keeps the net count", "[mbarrier]") {
  MBarrier b;
  REQUIRE(b.init(1) == R::kOk);
  CHECK(b.raise_pending(32) == R::kOk);
  CHECK(b.pending() == 33);
  CHECK(b.arrive(32) == R::kOk);
  CHECK(b.arrive(1) == R::kPhaseCompleted);
}
