// Semantics of the primitives as the simulator runs them (semantics.md), each with both sides.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "models/sync/mbarrier_unit.hpp"

using namespace smpipe;
using models::Outcome;
using test::causes;
using test::problem;
using test::run_text;

namespace {
std::string title(const models::RunResult& r) { return r.diagnosis ? r.diagnosis->title : ""; }
}  // namespace

TEST_CASE("a wait resumes only once the phase completed, after the wake latency", "[semantics][mbarrier]") {
  const char* text = R"(
kernel k warps=2 {
  mbarrier b count=32
  warp 0 s { compute cycles=1000
             arrive b }
  warp 1 w { wait b parity=0 }
}
)";
  auto m = models::load_machine("h100-sxm");
  auto r = run_text(text);
  REQUIRE(r.outcome == Outcome::kFinished);
  // the arrive lands at cycle 1000 (after the compute); the waiter resumes a wake latency later
  CHECK(r.cycles == 1000 + std::max(m.mbarrier_wake_cycles, m.mbarrier_arrive_cycles));
}

TEST_CASE("count N: N-1 arrivals leave the waiter blocked, N release it", "[semantics][mbarrier]") {
  auto prog = [](int arrivals) {
    return fmt::format("kernel k warps=2 {{\n mbarrier b count=3\n warp 0 s {{ elect {{ arrive b count={} }} }}\n"
                       " warp 1 w {{ wait b parity=0 }}\n}}\n",
                       arrivals);
  };
  CHECK(run_text(prog(2)).outcome == Outcome::kDeadlock);
  CHECK(run_text(prog(3)).outcome == Outcome::kFinished);
  auto over = run_text(prog(4));  // 4 arrivals on 3 pending drive pending below 0
  CHECK(over.outcome == Outcome::kUndefined);
  CHECK(title(over) == "arrival overflow");
}

TEST_CASE("arrival overflow is diagnosed at the arrive that overflows", "[semantics][mbarrier]") {
  auto prog = [](int extra) {
    return fmt::format("kernel k warps=1 {{\n mbarrier b count=2\n warp 0 s {{ elect {{\n expect_tx b tx=16\n"
                       " arrive b count={} }}\n wait b parity=0 }}\n}}\n",
                       2 + extra);
  };
  CHECK(run_text(prog(0)).outcome == Outcome::kDeadlock);  // tx 16 never delivered: no overflow
  auto r = run_text(prog(1));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(title(r) == "arrival overflow");
  CHECK(r.diagnosis->loc.line == 5);
  CHECK_THAT(r.diagnosis->message, Catch::Contains("3 arrivals on a barrier initialised with count 2"));
  CHECK_THAT(r.diagnosis->message, !Catch::Contains("cannot complete"));  // arrivals were still pending: a count problem
  // All the arrivals came, the bytes cannot: no copy completes bytes on b, so the phase never completes and the next
  // arrival overflows. The report says the tx-count is stuck and no copy reaches b ...
  auto stuck = [](const char* copy) {
    return run_text(fmt::format("kernel k warps=1 {{\n mbarrier b count=1\n mbarrier o count=1\n smem s bytes=1K\n"
                                " tensor T dtype=bf16 shape=(64, 64)\n warp 0 w {{ elect {{\n arrive.expect_tx b tx=1K\n {}\n"
                                " arrive b }} }}\n}}\n",
                                copy));
  };
  auto none = stuck("");
  REQUIRE(none.outcome == Outcome::kUndefined);
  CHECK(title(none) == "arrival overflow");
  CHECK_THAT(none.diagnosis->message, Catch::Contains("The phase has all its arrivals but cannot complete: its tx-count is stuck "
                                                      "at 1024") &&
                                          Catch::Contains("no copy of any role completes bytes on this CTA's b"));
  // ... and not where a copy does complete bytes on b (here still in flight when the second arrive overflows), nor where
  // a thread's complete_tx of another warp could still bring them.
  auto flying = stuck("tma.load T box=(8, 64) at=(0, 0) dst=s bar=b");
  REQUIRE(flying.outcome == Outcome::kUndefined);
  CHECK(title(flying) == "arrival overflow");
  CHECK_THAT(flying.diagnosis->message, !Catch::Contains("cannot complete"));
  auto thread = run_text("kernel k warps=2 {\n mbarrier b count=1\n warp 0 w { elect {\n arrive.expect_tx b tx=1K\n arrive b } }\n"
                         " warp 1 t { sleep cycles=1000\n elect { complete_tx b tx=1K } }\n}\n");
  REQUIRE(thread.outcome == Outcome::kUndefined);
  CHECK(title(thread) == "arrival overflow");
  CHECK_THAT(thread.diagnosis->message, !Catch::Contains("cannot complete"));
  // A thread's complete_tx on its own CTA's barrier lands at once: a deadlock on the bytes it did not bring is a stuck
  // tx-count, not bytes on their way.
  auto own = run_text("kernel k warps=1 {\n mbarrier b count=1\n warp 0 w { elect {\n arrive.expect_tx b tx=64\n"
                      " complete_tx b tx=16 }\n wait b parity=0 }\n}\n");
  REQUIRE(own.outcome == Outcome::kDeadlock);
  std::string own_causes;
  for (const auto& c : own.deadlock.causes) own_causes += c + "\n";
  CHECK_THAT(own_causes, Catch::Contains("tx-count is stuck at 48") && !Catch::Contains("on their way"));
}

TEST_CASE("an arrival overflow by the same op twice in one phase names the ring's stage index", "[semantics][mbarrier]") {
  // A ring of 3 stages indexed by `k & 2` (a mask that needs a power-of-two count) maps k = 0 and 1 to stage 0: the
  // producer's second wait on empty[0] passes at once (parity 1 on a fresh barrier) and its second arrive on full[0]
  // overflows the phase its first opened. The report names the repeated op and that wait; `k % 3` runs.
  auto prog = [](const char* index) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full[3] count=1
  mbarrier empty[3] count=1
  smem sA[3] bytes=4K
  tensor T dtype=bf16 shape=(1024, 1024)
  warp 0 p {{
    elect {{
      for k in 0..6 {{
        let s = {0}
        wait empty[s] parity=((k / 3) & 1) ^ 1
        arrive.expect_tx full[s] tx=4K
        tma.load T box=(32, 64) at=(32 * k, 0) dst=sA[s] bar=full[s]
      }}
    }}
  }}
  warp 1 c {{
    for k in 0..6 {{
      let s = {0}
      wait full[s] parity=(k / 3) & 1
      ld.shared bytes=128 src=sA[s]
      elect {{ arrive empty[s] }}
    }}
  }}
}}
)",
                       index);
  };
  CHECK(run_text(prog("k % 3")).outcome == Outcome::kFinished);
  auto r = run_text(prog("k & 2"));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(title(r) == "arrival overflow");
  CHECK_THAT(r.diagnosis->message,
             Catch::Contains("Warp 0's previous 'arrive.expect_tx full[s] tx=4K' (line 12) already arrived in this phase") &&
                 Catch::Contains("two iterations picked the same stage") &&
                 Catch::Contains("its wait 'wait empty[s] parity=((k / 3) & 1) ^ 1' (line 11) returned at once on empty[0]"));
  // Two arrivals of different ops in one phase (count 2 exceeded by a third op) are not called a repeated stage.
  auto other = run_text("kernel k warps=1 {\n mbarrier b count=2\n warp 0 s { elect {\n arrive b\n arrive b count=2 }\n }\n}\n");
  REQUIRE(other.outcome == Outcome::kUndefined);
  CHECK(title(other) == "arrival overflow");
  CHECK_THAT(other.diagnosis->message, !Catch::Contains("already arrived in this phase"));
}

TEST_CASE("an arrive outside elect that overflows says it ran in 32 lanes", "[semantics][mbarrier]") {
  // One thread's arrive.expect_tx put outside `elect` arrives 32 times (an overflow on a count-1 barrier) and, with a
  // large tx, expects 32x the bytes (outside the tx-count's range): both reports say so; inside `elect` it is fine.
  auto prog = [](const char* tx, bool elect) {
    return fmt::format("kernel k warps=1 {{\n mbarrier b count=1\n smem s bytes=32K\n warp 0 p {{\n {}arrive.expect_tx b tx={}{}\n"
                       " }}\n}}\n",
                       elect ? "elect { " : "", tx, elect ? " }" : "");
  };
  CHECK(run_text(prog("16K", true)).outcome == Outcome::kFinished);
  auto over = run_text(prog("16K", false));
  REQUIRE(over.outcome == Outcome::kUndefined);
  CHECK(title(over) == "arrival overflow");
  CHECK_THAT(over.diagnosis->message, Catch::Contains("runs in all 32 lanes of the warp, outside `elect`: 32 x 1"));
  auto range = run_text(prog("32K", false));
  REQUIRE(range.outcome == Outcome::kUndefined);
  CHECK(title(range) == "tx-count out of range");
  CHECK_THAT(range.diagnosis->message, Catch::Contains("expect_tx(1048576)") && Catch::Contains("32 x 32768"));
}

TEST_CASE("multicast TMA delivers complete_tx to every CTA in the mask", "[semantics][tma]") {
  auto prog = [](const char* mask) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  smem buf bytes=4K
  warp 0 p {{
    elect {{
      arrive.expect_tx full tx=4K
      if cluster_rank == 0 {{ tma.load bytes=4K dst=buf bar=full multicast={} }}
    }}
    wait full parity=0
  }}
}}
)",
                       mask);
  };
  CHECK(run_text(prog("0x3")).outcome == Outcome::kFinished);
  auto only_self = run_text(prog("0x1"));
  CHECK(only_self.outcome == Outcome::kDeadlock);  // rank 1 never gets its bytes
  CHECK_THAT(problem(only_self), Catch::Contains("CTA 1 warp 0"));
  auto bad = run_text(prog("0x4"));
  CHECK(title(bad) == "bad multicast mask");
}

TEST_CASE("remote arrive reaches the peer, waits on a peer barrier are illegal", "[semantics][cluster]") {
  const char* ok = R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {
  mbarrier b count=1
  warp 0 p {
    elect { arrive b cta=(cluster_rank + 1) % 2 }
    wait b parity=0
  }
}
)";
  CHECK(run_text(ok).outcome == Outcome::kFinished);
  const char* bad_rank = "kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {\n mbarrier b count=1\n warp 0 p { elect { arrive b cta=2 } }\n}\n";
  CHECK(title(run_text(bad_rank)) == "bad cluster rank");
}

TEST_CASE("phase overrun: two completions before the waiter observes the first", "[semantics][mbarrier]") {
  auto prog = [](int gap) {
    return fmt::format("kernel k warps=2 {{\n mbarrier b count=32\n warp 0 s {{ compute cycles=100\n arrive b\n"
                       " compute cycles={}\n arrive b }}\n warp 1 w {{ wait b parity=0 }}\n}}\n",
                       gap);
  };
  auto m = models::load_machine("h100-sxm");
  // The second arrive lands mbarrier_arrive_cycles + gap after the first; the waiter needs wake cycles.
  auto late = run_text(prog(static_cast<int>(m.mbarrier_wake_cycles)));
  CHECK(late.outcome == Outcome::kFinished);
  auto early = run_text(prog(0));
  REQUIRE(early.outcome == Outcome::kUndefined);
  CHECK(title(early) == "phase overrun");
  CHECK_THAT(early.diagnosis->message, Catch::Contains("waited for phase 0 of b"));
}

TEST_CASE("named barriers: a use with another count must be ordered after the previous use", "[semantics][named]") {
  // Warpgroup 0 uses bar 1 with 128 threads, warpgroup 1 later with 128 too or with 64 threads (warps 4 and 5). Apart in
  // time, the uses never meet in this run; unordered, another schedule lets them meet with different counts. `order`:
  // warpgroup 1 first waits for warpgroup 0's arrival on an mbarrier after its use, which orders it.
  auto prog = [](int threads, bool order) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier done count=128
  warpgroup 0 a {{ bar.sync 1 threads=128
                   arrive done }}
  warpgroup 1 b {{ sleep cycles=5000
                   {}
                   if warp < 4 + {} / 32 {{ bar.sync 1 threads={} }} }}
}}
)",
                       order ? "wait done parity=0" : "", threads, threads);
  };
  // The same count: legal, the uses may follow each other; but two groups share the id unordered, so on another schedule
  // their arrivals meet in one use: a warning (not with the order, nor for the warpgroup's own repeated uses).
  auto shared = [](const models::RunResult& r) {
    std::string all;
    for (const auto& w : r.warnings) all += w + "\n";
    return all;
  };
  auto same = run_text(prog(128, false));
  CHECK(same.outcome == Outcome::kFinished);
  CHECK_THAT(shared(same), Catch::Contains("bar 1 is shared by two groups of warps with one count (threads=128): CTA 0 warp 4 "
                                           "arrived at") &&
                               Catch::Contains("completed by warps 0, 1, 2, 3), and nothing ordered its arrival after that use"));
  auto ordered = run_text(prog(128, true));
  CHECK(ordered.outcome == Outcome::kFinished);
  CHECK_THAT(shared(ordered), !Catch::Contains("is shared by two groups"));
  auto again = run_text("kernel k warps=8 {\n warpgroup 0 a { for i in 0..3 { bar.sync 1 threads=128 } }\n"
                        " warpgroup 1 b { compute cycles=10 } }\n");
  CHECK(again.outcome == Outcome::kFinished);
  CHECK_THAT(shared(again), !Catch::Contains("is shared by two groups"));
  CHECK(run_text(prog(64, true)).outcome == Outcome::kFinished);
  auto r = run_text(prog(64, false));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(title(r) == "mismatched named-barrier counts");
  CHECK(r.diagnosis->loc.line == 8);
  CHECK_THAT(r.diagnosis->message, Catch::Contains("bar 1: warp 4 arrives with threads=64, but the previous use of bar 1 had "
                                                   "threads=128 (opened by warp 0 at"));
  CHECK_THAT(r.diagnosis->message, Catch::Contains("nothing orders this arrival after that use completed"));
}

TEST_CASE("named barriers: release at the count, mismatched counts, exited warps", "[semantics][named]") {
  const char* ok = "kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 threads=256 }\n warpgroup 1 b { bar.sync 1 threads=256 }\n}\n";
  CHECK(run_text(ok).outcome == Outcome::kFinished);
  const char* arrive_only = "kernel k warps=8 {\n mbarrier x count=128\n warpgroup 0 a { bar.sync 1 threads=256\n arrive x }\n"
                            " warpgroup 1 b { bar.arrive 1 threads=256\n wait x parity=0 }\n}\n";
  CHECK(run_text(arrive_only).outcome == Outcome::kFinished);
  const char* mismatch = "kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 threads=256 }\n warpgroup 1 b { compute cycles=5\n bar.sync 1 threads=128 }\n}\n";
  auto r = run_text(mismatch);
  CHECK(title(r) == "mismatched named-barrier counts");
  CHECK(r.diagnosis->warp == 4);
  // Waiting only on warps that exited: a barrier for all threads (no count) is released ...
  const char* exited = "kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 }\n warpgroup 1 b { compute cycles=5 }\n}\n";
  CHECK(run_text(exited).outcome == Outcome::kFinished);
  // ... one with a thread count is not: exited warps do not arrive (PTX bar: exit counts for all-thread barriers).
  const char* counted = "kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 threads=256 }\n warpgroup 1 b { compute cycles=5 }\n}\n";
  auto stuck = run_text(counted);
  CHECK(stuck.outcome == Outcome::kDeadlock);
  // ... but not while a live warp could still arrive.
  const char* live = "kernel k warps=8 {\n mbarrier x count=1\n warpgroup 0 a { bar.sync 1 threads=256 }\n warpgroup 1 b { wait x parity=0 }\n}\n";
  CHECK(run_text(live).outcome == Outcome::kDeadlock);
}

TEST_CASE("named barriers: a warp arrives once per use, a run-time count larger than the CTA is diagnosed", "[semantics][named]") {
  // Two arrivals of one warp in one use: the second is undefined behaviour, at that op.
  auto prog = [](const char* between) {
    return fmt::format("kernel k warps=8 {{\n warpgroup 0 a {{ compute cycles=100\n bar.sync 1 threads=256\n bar.sync 1 threads=256 }}\n"
                       " warpgroup 1 b {{ bar.arrive 1 threads=256\n {}\n bar.arrive 1 threads=256 }}\n}}\n",
                       between);
  };
  auto twice = run_text(prog(""));
  REQUIRE(twice.outcome == Outcome::kUndefined);
  CHECK(title(twice) == "named barrier arrival twice");
  CHECK(twice.diagnosis->warp == 4);
  CHECK_THAT(twice.diagnosis->message, Catch::Contains("warp 4 arrives a second time in the same use (128 of 256 threads arrived"));
  // The same two arrivals in consecutive uses (the first use completed in between) are fine.
  auto turns = run_text(prog("bar.sync 2 threads=256"));
  CHECK(turns.outcome == Outcome::kDeadlock);  // warpgroup 0 never arrives on bar 2: not a named-barrier misuse
  const char* ok = "kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 threads=256\n bar.arrive 2 threads=256\n bar.sync 1 threads=256 }\n"
                   " warpgroup 1 b { bar.arrive 1 threads=256\n bar.sync 2 threads=256\n bar.arrive 1 threads=256 }\n}\n";
  CHECK(run_text(ok).outcome == Outcome::kFinished);
  // threads= known only at run time: at most the CTA's threads (a constant is checked by the compiler).
  auto count = [](int threads) {
    return fmt::format("kernel k warps=8 {{\n warps 0..8 a {{ let n = {}\n bar.sync 1 threads=n }}\n}}\n", threads);
  };
  CHECK(run_text(count(256)).outcome == Outcome::kFinished);
  auto big = run_text(count(288));
  REQUIRE(big.outcome == Outcome::kUndefined);
  CHECK(title(big) == "named barrier thread count");
  CHECK_THAT(big.diagnosis->message, Catch::Contains("threads=288 but the CTA has 256 threads"));
}

TEST_CASE("named barriers: a barrier without a thread count names the exited warps and a live warp that never syncs on it",
          "[semantics][named]") {
  // __syncthreads inside the consumers' branch: bar 0 without threads= waits for every live thread, the producer's too,
  // which never executes it. Warps 1..3 have no role: exited at once, they count as arrived.
  auto r = run_text("kernel k warps=8 {\n mbarrier x count=1\n warp 0 p { wait x parity=0 }\n warpgroup 1 c { bar.sync 0 }\n}\n");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || (c.find("bar 0: 256 threads expected (every thread of the CTA: no thread count), 128 arrived (warps 4, 5, 6, "
                           "7) and 96 exited (warps 1, 2, 3: they count as arrived); warp 0 (p) waits on mbarrier x") !=
                        std::string::npos &&
                    c.find("its code has no op on bar 0") != std::string::npos);
  CHECK(said);
  // With a count of their own the consumers pass (the producer's hang is then its own).
  auto counted = run_text("kernel k warps=8 {\n mbarrier x count=1\n warp 0 p { wait x parity=0 }\n warpgroup 1 c { bar.sync 0 threads=128 }\n}\n");
  REQUIRE(counted.outcome == Outcome::kDeadlock);
  for (const auto& c : counted.deadlock.causes) CHECK(c.find("bar 0") == std::string::npos);
}

TEST_CASE("named barriers: a counted barrier that waits for warps which exited names them when their code syncs there",
          "[semantics][named]") {
  // Two warpgroups split the tiles (t = warpgroup, warpgroup + 2, ...) and meet on bar 1 every tile: with an odd count
  // warpgroup 1 runs one round fewer and exits, and warpgroup 0's last bar.sync waits for 128 threads that never come.
  auto prog = [](int tiles) {
    return fmt::format(R"(
kernel k warps=8 {{
  smem stage bytes=8K
  warpgroups 0..2 consumer {{
    for t in warpgroup..{} step 2 {{
      compute cycles=500
      st.shared bytes=1K dst=stage
      bar.sync 1 threads=256
    }}
  }}
}}
)",
                       tiles);
  };
  CHECK(run_text(prog(4)).outcome == Outcome::kFinished);
  auto r = run_text(prog(5));
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || c.find("Warp(s) 4, 5, 6, 7 (128 threads), whose code uses bar 1 too, have exited: an exited warp never "
                          "arrives, and with a thread count it does not count as arrived") != std::string::npos;
  CHECK(said);
  // Warps that exit without any op on the barrier are not named.
  auto other = run_text("kernel k warps=8 {\n warpgroup 0 a { bar.sync 1 threads=256 }\n warpgroup 1 b { compute cycles=5 }\n}\n");
  REQUIRE(other.outcome == Outcome::kDeadlock);
  for (const auto& c : other.deadlock.causes) CHECK(c.find("have exited") == std::string::npos);
}

TEST_CASE("named barriers: an id computed at run time picks the barrier when the op runs (PTX bar: a register operand)",
          "[semantics][named]") {
  // Each consumer warpgroup syncs with the producer on its own barrier, 1 + its warpgroup index (2 and 3).
  auto pair = [](int base) {
    return fmt::format("kernel k warps=12 {{\n warpgroup 0 p {{ bar.arrive 2 threads=256\n bar.arrive 3 threads=256 }}\n"
                       " warpgroups 1..3 c {{ bar.sync {} + warpgroup threads=256 }}\n}}\n",
                       base);
  };
  CHECK(run_text(pair(1)).outcome == Outcome::kFinished);
  CHECK(run_text(pair(2)).outcome == Outcome::kDeadlock);  // ids 3 and 4: nobody arrives on 4
  // The value is checked when the op runs, as a constant is by the compiler: 0..15.
  auto id = [](int base) { return fmt::format("kernel k warps=8 {{\n warpgroup 1 c {{ bar.sync {} + warpgroup threads=128 }}\n}}\n", base); };
  CHECK(run_text(id(14)).outcome == Outcome::kFinished);
  auto high = run_text(id(15));
  REQUIRE(high.outcome == Outcome::kUndefined);
  CHECK(title(high) == "value out of range");
  CHECK(high.diagnosis->warp == 4);
  CHECK(high.diagnosis->loc.line == 2);
  CHECK_THAT(high.diagnosis->message, Catch::Contains("16"));
  // A warp whose bar op takes its id at run time may use any barrier: a deadlock's cause counts it among the users.
  auto r = run_text("kernel k warps=8 {\n mbarrier x count=1\n warpgroup 0 a { bar.sync 5 threads=256 }\n"
                    " warpgroup 1 b { wait x parity=0\n bar.sync 4 + warpgroup threads=256 }\n}\n");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes) said = said || c.find("which also uses bar 5, waits on mbarrier") != std::string::npos;
  CHECK(said);
}

TEST_CASE("wgmma groups: wait N leaves at most N groups pending", "[semantics][wgmma]") {
  auto prog = [](int n) {
    return fmt::format(R"(
kernel k warps=4 {{
  smem a bytes=16K
  warpgroup 0 m {{
    wgmma.fence
    wgmma m64n256k16 dtype=bf16 a=a b=a
    wgmma.commit
    wgmma m64n256k16 dtype=bf16 a=a b=a
    wgmma.commit
    wgmma.wait {}
  }}
}}
)",
                       n);
  };
  auto m = models::load_machine("h100-sxm");
  std::int64_t flops = 2 * 64 * 256 * 16;
  std::int64_t occ = (flops + m.tensor_flops_per_cycle_16bit - 1) / m.tensor_flops_per_cycle_16bit;  // ~128 cycles
  auto w0 = run_text(prog(0)), w1 = run_text(prog(1)), w2 = run_text(prog(2));
  REQUIRE(w0.outcome == Outcome::kFinished);
  // wait 0: both groups done (two back-to-back occupancies + latency); wait 1: only the first; wait 2: none.
  CHECK(w0.cycles - w1.cycles == occ);
  CHECK(w1.cycles > w2.cycles);
  CHECK(w0.stats.flops == 2 * 2 * 64 * 256 * 16);
}

TEST_CASE("wgmma is warpgroup-collective", "[semantics][wgmma]") {
  const char* partial = "kernel k warps=4 {\n smem a bytes=1K\n warp 0 m { wgmma.fence }\n}\n";
  CHECK(title(run_text(partial)) == "wgmma outside a whole warpgroup");
  const char* exits = "kernel k warps=4 {\n warpgroup 0 m {\n if warp != 2 { wgmma.fence }\n }\n}\n";
  CHECK(title(run_text(exits)) == "warpgroup op without all its warps");
}

TEST_CASE("a warpgroup's first wgmma needs a wgmma.fence before it", "[semantics][wgmma]") {
  // PTX ISA, wgmma.fence: it must be executed before the first wgmma.mma_async of a warpgroup. Both sides: no fence at
  // all, and the fence only after the first wgmma, are undefined behaviour; one fence before it (and none before the
  // second, which registers the model does not track would need only when touched) is fine.
  auto prog = [](const char* body) {
    return fmt::format("kernel k warps=8 {{\n smem a bytes=16K\n warpgroup 1 m {{\n{}\n }}\n}}\n", body);
  };
  const char* mma = " wgmma m64n64k16 dtype=bf16 a=a b=a\n wgmma.commit\n wgmma.wait 0\n";
  auto none = run_text(prog(mma));
  REQUIRE(none.outcome == Outcome::kUndefined);
  CHECK(title(none) == "wgmma without wgmma.fence");
  CHECK_THAT(none.diagnosis->message, Catch::Contains("warpgroup 1") && Catch::Contains("line 4"));
  CHECK(none.diagnosis->loc.line == 4);
  auto late = run_text(prog((std::string(mma) + " wgmma.fence\n" + mma).c_str()));
  REQUIRE(late.outcome == Outcome::kUndefined);
  CHECK(title(late) == "wgmma without wgmma.fence");
  auto fenced = run_text(prog((std::string(" wgmma.fence\n") + mma + mma).c_str()));
  CHECK(fenced.outcome == Outcome::kFinished);
}

TEST_CASE("two warpgroups share the SM tensor pipe", "[semantics][wgmma]") {
  auto prog = [](int groups) {
    return fmt::format(R"(
kernel k warps=8 {{
  smem a bytes=16K
  warpgroups 0..{} m {{
    wgmma.fence
    wgmma m64n256k16 dtype=bf16 a=a b=a count=8
    wgmma.commit
    wgmma.wait 0
  }}
}}
)",
                       groups);
  };
  auto m = models::load_machine("h100-sxm");
  std::int64_t occ = (8 * 2 * 64 * 256 * 16 + m.tensor_flops_per_cycle_16bit - 1) / m.tensor_flops_per_cycle_16bit;
  auto one = run_text(prog(1)), two = run_text(prog(2));
  CHECK(two.cycles - one.cycles == occ);  // the second warpgroup's wgmmas queue behind the first's
}

TEST_CASE("cp.async groups: a wait covers the oldest group even with more than 64 committed", "[semantics][cp.async]") {
  // Group 0 holds a long copy; 65 empty groups follow. `cp.async.wait 63` leaves the newest 63 pending and must
  // wait for groups 0..2, so for the copy: as long as `cp.async.wait 0`. (The warp keeps 64 groups; the oldest
  // is folded into the next, never dropped.)
  auto prog = [](int empty_groups, int n) {
    return fmt::format("kernel k warps=1 {{\n smem a bytes=64K\n warp 0 w {{ cp.async bytes=65536 dst=a\n cp.async.commit\n"
                       " for i in 0..{} {{ cp.async.commit }}\n cp.async.wait {} }}\n}}\n",
                       empty_groups, n);
  };
  auto all = run_text(prog(65, 0));
  auto deep = run_text(prog(65, 63));
  REQUIRE(all.outcome == Outcome::kFinished);
  REQUIRE(deep.outcome == Outcome::kFinished);
  CHECK(deep.cycles == all.cycles);
  // The boundary: with E empty groups after it, the copy's group is among the newest 63 exactly when E <= 62 (the
  // wait then returns before the copy lands: the warp waited only for the SM's load/store path to take it).
  CHECK(run_text(prog(63, 63)).cycles == all.cycles);
  auto m = models::load_machine("h100-sxm");
  CHECK(run_text(prog(62, 63)).cycles <= all.cycles - m.cp_async_latency_cycles + 64 * m.op_issue_cycles);
}

TEST_CASE("cp.async groups: wait N and cp.async.arrive with and without noinc", "[semantics][cp.async]") {
  auto prog = [](int n) {
    return fmt::format("kernel k warps=1 {{\n smem s bytes=4K\n warp 0 a {{\n cp.async bytes=512 dst=s\n cp.async.commit\n"
                       " compute cycles=1000\n cp.async bytes=512 dst=s\n cp.async.commit\n cp.async.wait {}\n }}\n}}\n",
                       n);
  };
  auto w0 = run_text(prog(0)), w1 = run_text(prog(1));
  CHECK(w0.cycles > w1.cycles);  // wait 1 leaves the second group in flight
  const char* inc = "kernel k warps=1 {\n mbarrier b count=32\n smem s bytes=4K\n warp 0 a {\n cp.async bytes=512 dst=s\n"
                    " cp.async.arrive b\n arrive b\n wait b parity=0 }\n}\n";
  CHECK(run_text(inc).outcome == Outcome::kFinished);  // net count unchanged: the plain arrive completes
  const char* noinc_missing = "kernel k warps=1 {\n mbarrier b count=64\n smem s bytes=4K\n warp 0 a {\n cp.async bytes=512 dst=s\n"
                              " cp.async.arrive b noinc\n wait b parity=0 }\n}\n";
  CHECK(run_text(noinc_missing).outcome == Outcome::kDeadlock);  // 32 of 64
  const char* noinc = "kernel k warps=1 {\n mbarrier b count=32\n smem s bytes=4K\n warp 0 a {\n cp.async bytes=512 dst=s\n"
                      " cp.async.arrive b noinc\n wait b parity=0 }\n}\n";
  CHECK(run_text(noinc).outcome == Outcome::kFinished);
  // Without noinc and a count of the arrivals alone, the arrivals cancel out: the deadlock's cause says so (with the
  // count short by one, it is the usual missing-arrivals cause).
  const char* inc_only = "kernel k warps=1 {\n mbarrier b count=32\n smem s bytes=4K\n warp 0 a {\n cp.async bytes=512 dst=s\n"
                         " cp.async.arrive b\n wait b parity=0 }\n}\n";
  auto r = run_text(inc_only);
  REQUIRE(r.outcome == Outcome::kDeadlock);
  auto said = [](const models::RunResult& x) {
    bool found = false;
    for (const auto& c : x.deadlock.causes)
      found = found || c.find("32 arrival(s) came in phase 0, but 32 were added to its pending count on the way (count 32, 32 "
                              "still pending") != std::string::npos;
    return found;
  };
  CHECK(said(r));
  CHECK_FALSE(said(run_text(noinc_missing)));
  // arrive.drop lowers the count and the pending arrivals alike: no cp.async raised anything, and nothing says so.
  auto drop = run_text("kernel k warps=3 {\n mbarrier b count=3\n mbarrier never count=1\n"
                       " warp 0 leaver { elect { arrive.drop b }\n wait b parity=0 }\n"
                       " warp 1 worker { elect { arrive b }\n wait b parity=0 }\n"
                       " warp 2 late { wait never parity=0\n elect { arrive b } }\n}\n");
  REQUIRE(drop.outcome == Outcome::kDeadlock);
  for (const auto& c : drop.deadlock.causes) CHECK(c.find("added to its pending count") == std::string::npos);
}

TEST_CASE("bulk store groups: wait read returns before the writes complete", "[semantics][tma]") {
  auto prog = [](const char* flag) {
    return fmt::format("kernel k warps=1 {{\n smem s bytes=8K\n warp 0 a {{ elect {{\n tma.store bytes=8K src=s\n tma.commit\n"
                       " tma.wait 0 {}\n }} }}\n}}\n",
                       flag);
  };
  auto m = models::load_machine("h100-sxm");
  auto read = run_text(prog("read")), full = run_text(prog(""));
  CHECK(full.cycles - read.cycles == m.tma_store_latency_cycles);
}

TEST_CASE("TMEM: alloc blocks until columns are free, leak, dealloc checks, relinquish", "[semantics][tmem]") {
  const char* blocks = R"(
kernel k warps=2 {
  mbarrier go count=32
  warp 0 a { tmem.alloc cols=512 -> t
             compute cycles=500
             tmem.dealloc t cols=512 }
  warp 1 b { compute cycles=10
             tmem.alloc cols=256 -> t
             tmem.dealloc t cols=256 }
}
)";
  auto r = run_text(blocks, "b200");
  REQUIRE(r.outcome == Outcome::kFinished);
  CHECK(r.stats.roles[1].waiting.at("tmem.alloc") >= 480);
  const char* fits = "kernel k warps=2 {\n warp 0 a { tmem.alloc cols=256 -> t\n compute cycles=500\n tmem.dealloc t cols=256 }\n"
                     " warp 1 b { compute cycles=10\n tmem.alloc cols=256 -> t\n tmem.dealloc t cols=256 }\n}\n";
  auto f = run_text(fits, "b200");
  CHECK(f.stats.roles[1].waiting.count("tmem.alloc") == 0);
  const char* wrong = "kernel k warps=1 {\n warp 0 a { tmem.alloc cols=256 -> t\n tmem.dealloc t cols=128 }\n}\n";
  CHECK(title(run_text(wrong, "b200")) == "dealloc of unallocated TMEM");
  CHECK_THROWS_WITH(run_text(wrong, "h100-sxm"), Catch::Contains("needs tensor memory"));
}

TEST_CASE("TMEM: a deadlock on tmem.alloc names the CTA holding the columns and what it waits on", "[semantics][tmem][deadlock]") {
  // Two CTAs per SM (the grid is twice the B200's 148 SMs); each takes all 512 columns. The first on each SM
  // spins on a flag that only the second, which waits for its columns, would set.
  auto prog = [](int cols) {
    return fmt::format(R"(
kernel k grid=(296,1,1) warps=1 {{
  global flag[296]
  warp 0 w {{
    tmem.alloc cols={} -> acc
    if cta < 148 {{ spin flag[cta] eq=1 }}
    else {{ elect {{ st.release flag[cta - 148] val=1 }} }}
    tmem.dealloc acc cols={}
    tmem.relinquish
  }}
}}
)",
                       cols, cols);
  };
  CHECK(run_text(prog(256), "b200").outcome == Outcome::kFinished);
  auto r = run_text(prog(512), "b200");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || c.find("tmem.alloc of 512 columns on SM 0: 512 columns are held by CTAs that do not free them (512 columns "
                          "per SM): CTA 0 holds 512 (tmem.alloc at line 5), and its warp 0 waits at line 6 (`spin flag[cta] "
                          "eq=1`) for spins on flag[0]") != std::string::npos;
  CHECK(said);
}

TEST_CASE("TMEM: umma and tmem.ld and tmem.st access only columns the CTA holds", "[semantics][tmem]") {
  // 256 columns at 0. The umma's accumulator spans N = 128 columns from the column part (low 16 bits) of its
  // address; a 32x32b.x32 load or store 32 columns; the lane part (high 16 bits) is not a column.
  auto prog = [](const char* before, int umma_col, const char* access) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier done count=1
  smem sA bytes=16K
  warp 0 mma {{
    tmem.alloc cols=256 -> acc
    tmem.relinquish
    {}
    elect {{ umma m128n128k16 kind=f16 a=sA b=sA tmem=acc + {}
            umma.commit done }}
    wait done parity=0
    {}
    tmem.dealloc acc cols=256
  }}
}}
)",
                       before, umma_col, access);
  };
  const char* ld_last = "tmem.ld 32x32b.x32 tmem=acc + (32 << 16) + 224\n tmem.wait ld";
  auto ok = run_text(prog("", 128, ld_last), "b200");
  INFO(test::problem(ok));
  CHECK(ok.outcome == Outcome::kFinished);
  CHECK(run_text(prog("", 0, "tmem.st 32x32b.x32 tmem=acc + 224\n tmem.wait st"), "b200").outcome == Outcome::kFinished);
  // One column past the allocation: the umma's columns 129..256, a load's or a store's 225..256.
  auto umma_past = run_text(prog("", 129, ld_last), "b200");
  REQUIRE(umma_past.outcome == Outcome::kUndefined);
  CHECK(title(umma_past) == "access to unallocated TMEM");
  CHECK(umma_past.diagnosis->loc.line == 9);
  CHECK(umma_past.diagnosis->warp == 0);
  CHECK_THAT(umma_past.diagnosis->message, Catch::Contains("columns 129..256 of this CTA, and column 256 is not allocated"));
  CHECK_THAT(umma_past.diagnosis->message, Catch::Contains("holds columns 0..255 (allocated at line 6)"));
  for (const char* past : {"tmem.ld 32x32b.x32 tmem=acc + 225\n tmem.wait ld", "tmem.st 32x32b.x32 tmem=acc + 225\n tmem.wait st"}) {
    INFO(past);
    auto r = run_text(prog("", 0, past), "b200");
    REQUIRE(r.outcome == Outcome::kUndefined);
    CHECK(title(r) == "access to unallocated TMEM");
    CHECK(r.diagnosis->loc.line == 12);
    CHECK_THAT(r.diagnosis->message, Catch::Contains("column 256 is not allocated"));
  }
  // After the dealloc: the umma, or a load of columns that were allocated before.
  auto umma_freed = run_text(prog("tmem.dealloc acc cols=256", 0, ""), "b200");
  REQUIRE(umma_freed.outcome == Outcome::kUndefined);
  CHECK(title(umma_freed) == "access to unallocated TMEM");
  CHECK(umma_freed.diagnosis->loc.line == 9);
  CHECK_THAT(umma_freed.diagnosis->message, Catch::Contains("holds no tensor memory now"));
  auto ld_freed = run_text(R"(
kernel k warps=2 {
  mbarrier done count=32
  warp 0 a { tmem.alloc cols=32 -> t
             tmem.relinquish
             tmem.dealloc t cols=32
             arrive done }
  warp 1 b { wait done parity=0
             tmem.ld 32x32b.x32 tmem=0
             tmem.wait ld }
}
)",
                           "b200");
  REQUIRE(ld_freed.outcome == Outcome::kUndefined);
  CHECK(title(ld_freed) == "access to unallocated TMEM");
  CHECK(ld_freed.diagnosis->warp == 1);
  CHECK(ld_freed.diagnosis->loc.line == 9);
}

TEST_CASE("tmem.dealloc of columns an MMA or a tcgen05.ld may still touch is undefined behaviour", "[semantics][tcgen05]") {
  // The MMA's accumulator write lasts until its umma.commit's barrier phase is observed; a tcgen05.ld until its
  // tmem.wait ld. Freeing the columns before either would leave it touching columns the CTA no longer holds.
  auto prog = [](const char* between) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier done count=1
  smem sA bytes=16K
  warp 0 m {{
    tmem.alloc cols=256 -> acc
    tmem.relinquish
    elect {{ umma m128n256k16 kind=f16 a=sA b=sA tmem=acc count=4
            umma.commit done }}
    {}
    tmem.dealloc acc cols=256
    wait done parity=0
  }}
}}
)",
                       between);
  };
  auto early = run_text(prog(""), "b200");
  REQUIRE(early.outcome == Outcome::kUndefined);
  CHECK(title(early) == "dealloc of TMEM still in use");
  CHECK(early.diagnosis->loc.line == 11);
  CHECK_THAT(early.diagnosis->message, Catch::Contains("while 'umma m128n256k16") && Catch::Contains("may still write"));
  CHECK(run_text(prog("wait done parity=0\n tmem.ld 32x32b.x32 tmem=acc\n tmem.wait ld"), "b200").outcome == Outcome::kFinished);
  auto ld = run_text(prog("wait done parity=0\n tmem.ld 32x32b.x32 tmem=acc"), "b200");
  REQUIRE(ld.outcome == Outcome::kUndefined);
  CHECK(title(ld) == "dealloc of TMEM still in use");
  CHECK_THAT(ld.diagnosis->message, Catch::Contains("tmem.ld 32x32b.x32 tmem=acc") && Catch::Contains("may still read"));
}

TEST_CASE("CLC hands out unlaunched clusters, then -1", "[semantics][clc]") {
  // 200 KB of smem: one CTA per SM, so on the 148-SM B200 a grid of 150 leaves 2 CTAs unlaunched; the
  // first two try_cancel requests get them (CTA ids 148 and 149), every later one gets -1.
  auto prog = [](int ctas) {
    return fmt::format(R"(
kernel k grid=({},1,1) warps=1 {{
  mbarrier f count=1
  smem s bytes=200K
  warp 0 sched {{
    elect {{ arrive.expect_tx f tx=16
            clc.try_cancel bar=f }}
    wait f parity=0
    clc.query bar=f -> v
    if v >= 148 {{ compute cycles=5000 }}
  }}
}}
)",
                       ctas);
  };
  auto handed = run_text(prog(150), "b200");
  REQUIRE(handed.outcome == Outcome::kFinished);
  CHECK(handed.stats.ctas == 148);  // the two cancelled CTAs never launched
  CHECK(handed.cycles > 5000);
  auto none = run_text(prog(148), "b200");
  CHECK(none.stats.ctas == 148);
  CHECK(none.cycles < 5000);
  auto after = run_text(R"(
kernel k warps=1 {
  mbarrier f count=1
  warp 0 s {
    elect { arrive.expect_tx f tx=16
            clc.try_cancel bar=f }
    wait f parity=0
    clc.query bar=f -> v
    elect { clc.try_cancel bar=f }
  }
}
)", "b200");
  CHECK(title(after) == "try_cancel after an observed failure");
  // Per CTA: another warp's observation counts; a try_cancel issued before anyone observed it does not.
  auto other = [](int delay) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier f count=1
  mbarrier g count=1
  warp 0 s {{
    elect {{ arrive.expect_tx f tx=16
            clc.try_cancel bar=f }}
    sleep cycles={}
    elect {{ arrive.expect_tx g tx=16
            clc.try_cancel bar=g }}
    wait g parity=0
  }}
  warp 1 r {{
    wait f parity=0
    clc.query bar=f -> v
  }}
}}
)",
                       delay);
  };
  auto by_other = run_text(other(20000), "b200");
  CHECK(title(by_other) == "try_cancel after an observed failure");
  CHECK(run_text(other(1), "b200").outcome == Outcome::kFinished);
  auto early = run_text("kernel k warps=1 {\n warp 0 s { clc.query -> v }\n}\n", "b200");
  CHECK(title(early) == "query before a response");
}

TEST_CASE("the race checker wants fence.proxy.async between st.shared and an async-proxy read", "[semantics][hazard]") {
  auto prog = [](const char* fence) {
    return fmt::format("kernel k warps=4 {{\n smem s bytes=16K\n warpgroup 0 a {{\n st.shared bytes=1K dst=s\n {}\n"
                       " wgmma.fence\n wgmma m64n64k16 dtype=bf16 a=s b=s\n wgmma.commit\n wgmma.wait 0\n }}\n}}\n",
                       fence);
  };
  CHECK(run_text(prog("fence.proxy.async")).outcome == Outcome::kFinished);
  auto r = run_text(prog(""));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(r.diagnosis->hazard);
}

TEST_CASE("a reader not ordered after an st.shared races with it: reported as the race, whatever the fence and the timing",
          "[semantics][hazard]") {
  // Warp 1 writes and fences; warp 0's TMA store reads the buffer with nothing ordering the two (found by a red-team
  // run: the report used to depend on whether the fence had run yet).
  auto unordered = [](int delay) {
    return run_text(fmt::format("kernel k warps=2 {{\n smem sD bytes=8K\n tensor D dtype=bf16 shape=(1024, 1024)\n"
                                " warp 0 s {{ sleep cycles={}\n elect {{ tma.store D box=(64, 64) at=(0, 0) src=sD\n tma.commit\n"
                                " tma.wait 0 }} }}\n warp 1 w {{ st.shared bytes=8K dst=sD\n fence.proxy.async }}\n}}\n",
                                delay));
  };
  for (int delay : {1, 500}) {
    INFO("the store " << delay << " cycles in");
    auto r = unordered(delay);
    REQUIRE(r.outcome == Outcome::kUndefined);
    CHECK(r.diagnosis->title == "read before the write is complete (RAW)");
  }
  // Ordered (a barrier between them) but not fenced: the missing fence.
  auto synced = run_text("kernel k warps=2 {\n smem sD bytes=8K\n tensor D dtype=bf16 shape=(1024, 1024)\n"
                         " warp 0 s { bar.sync 1 threads=64\n elect { tma.store D box=(64, 64) at=(0, 0) src=sD\n tma.commit\n"
                         " tma.wait 0 } }\n warp 1 w { st.shared bytes=8K dst=sD\n bar.sync 1 threads=64 }\n}\n");
  REQUIRE(synced.outcome == Outcome::kUndefined);
  CHECK(synced.diagnosis->title == "missing fence.proxy.async");
  CHECK_THAT(synced.diagnosis->message, Catch::Contains("warp 1 wrote with st.shared (its st.shared at line 8)"));
}

TEST_CASE("jitter changes timing but not order rules, same seed, same result", "[semantics][determinism]") {
  auto src = isa::load_source(test::examples_dir() + "/mainloop.pipe");
  isa::Program p = isa::compile(isa::parse(src), {});
  auto m = models::load_machine("h100-sxm");
  models::RunOptions a, b, c;
  a.jitter_pct = b.jitter_pct = c.jitter_pct = 30;
  a.seed = b.seed = 5;
  c.seed = 6;
  auto ra = models::simulate(p, m, a), rb = models::simulate(p, m, b), rc = models::simulate(p, m, c);
  CHECK(ra.outcome == Outcome::kFinished);
  CHECK(rc.outcome == Outcome::kFinished);
  CHECK(ra.cycles == rb.cycles);
  CHECK(ra.stats.ops == rc.stats.ops);  // the same work ...
  CHECK(ra.cycles != rc.cycles);        // ... at other times
}

TEST_CASE("watchdogs: max cycles, and loops that take no time", "[semantics][watchdog]") {
  models::RunOptions o;
  o.max_cycles = 5000;
  auto spin = run_text("kernel k warps=1 {\n mbarrier b count=1\n warp 0 a { let d = 0\n while !d { test_wait b parity=0 -> d } }\n}\n",
                       "h100-sxm", o);
  CHECK(spin.outcome == Outcome::kWatchdog);
  CHECK(spin.cycles <= 5000);
  auto loop = run_text("kernel k warps=1 {\n warp 0 a { while 1 { } }\n}\n");
  CHECK(loop.outcome == Outcome::kWatchdog);
  CHECK_THAT(loop.watchdog_reason, Catch::Contains("without any op taking time"));
  // The count is of instructions run between ops that take time, checked where a loop goes round: a loop of
  // zero-time work below the limit finishes, one above it is stopped.
  models::RunOptions small;
  small.max_instructions_without_time = 1000;
  auto count = [&](int n) {
    return run_text(fmt::format("kernel k warps=1 {{\n warp 0 a {{ let s = 0\n for i in 0..{} {{ let s = s + i }}\n compute 1 }}\n}}\n", n),
                    "h100-sxm", small);
  };
  CHECK(count(50).outcome == Outcome::kFinished);
  auto stopped = count(5000);
  CHECK(stopped.outcome == Outcome::kWatchdog);
  CHECK_THAT(stopped.watchdog_reason, Catch::Contains("without any op taking time"));
}

TEST_CASE("CTAs that do not fit are an input error naming the bytes", "[semantics][resources]") {
  CHECK_THROWS_WITH(run_text("kernel k warps=4 {\n smem s[8] bytes=32K\n}\n"),
                    Catch::Contains("needs 262144 bytes of shared memory per CTA (s 8x32768)"));
  CHECK_NOTHROW(run_text("kernel k warps=4 {\n smem s[7] bytes=32K\n}\n"));
}

TEST_CASE("waves: CTAs beyond what fits launch as earlier ones exit", "[semantics][resources]") {
  // 3 CTAs of 100 KB per SM do not fit (228 KB): 2 per SM; 264 CTAs fill the H100 in one wave, 265 need two.
  auto prog = [](int ctas) {
    return fmt::format("kernel k grid=({},1,1) warps=1 {{\n smem s bytes=100K\n warp 0 a {{ compute cycles=1000 }}\n}}\n", ctas);
  };
  auto one = run_text(prog(264)), two = run_text(prog(265));
  CHECK(one.cycles == 1000);
  CHECK(two.cycles > 2000);
}

TEST_CASE("waves of clusters: a cluster runs in one GPC, so as many clusters fit at once as the H200 measured", "[semantics][resources]") {
  // One CTA per SM (200 KB of smem), clusters of C: the H200's cudaOccupancyMaxActiveClusters for each C
  // (validation/results/h200/gpc.json) is how many run in the first wave: that many clusters finish in one wave of
  // 1000 cycles, one more needs a second. Without GPCs, 132 / C would fit (33 clusters of 4, not 30).
  std::ifstream f(std::string(SMPIPE_SOURCE_DIR) + "/validation/results/h200/gpc.json");
  REQUIRE(f.good());
  auto run = nlohmann::json::parse(f);
  int checked = 0;
  for (const auto& m : run["measurements"]) {
    const std::string name = m["name"];
    if (name.rfind("gpc_max_active_clusters_c", 0) != 0) continue;
    const int c = m["params"]["cluster_size"], fit = static_cast<int>(m["median"].get<double>());
    auto prog = [&](int clusters) {
      return fmt::format("kernel k grid=({},1,1) cluster=({},1,1) warps=1 {{\n smem s bytes=200K\n warp 0 a {{ compute cycles=1000 }}\n}}\n",
                         clusters * c, c);
    };
    for (const char* gpu : {"h200", "h100-sxm"}) {
      INFO(gpu << ": clusters of " << c << ", " << fit << " fit");
      auto one = run_text(prog(fit), gpu), two = run_text(prog(fit + 1), gpu);
      CHECK(one.cycles == 1000);
      CHECK(two.cycles > 2000);
    }
    ++checked;
  }
  CHECK(checked == 8);
  // A cluster larger than every GPC is refused before the run (a machine of eleven GPCs of 12 SMs): 12 runs, 13 not.
  auto m = models::load_machine("h200");
  m.gpc_sms.assign(11, 12);
  auto cluster = [&](int c) {
    isa::Program p = test::compile_text(fmt::format("kernel k grid=({},1,1) cluster=({},1,1) warps=1 {{\n warp 0 a {{ compute cycles=1 }}\n}}\n", c, c),
                                        {}, "test.pipe", "h200");
    return models::simulate(p, m, {});
  };
  CHECK(cluster(12).outcome == models::Outcome::kFinished);
  CHECK_THROWS_WITH(cluster(13), Catch::Contains("cluster of 13 CTAs does not fit in a GPC of h200") && Catch::Contains("the largest has 12"));
}

TEST_CASE("a completion becomes visible to test_wait after the wake-up latency", "[semantics][mbarrier]") {
  auto m = models::load_machine("h100-sxm");
  auto prog = [&](std::int64_t delay) {
    // The warp completes the phase itself, waits `delay` cycles, then polls once: the poll's answer
    // decides whether the second arrive (a marker) happens.
    return fmt::format("kernel k warps=1 {{\n mbarrier b count=32\n mbarrier seen count=32\n warp 0 a {{\n arrive b\n"
                       " sleep cycles={}\n test_wait b parity=0 -> v\n if v {{ arrive seen }}\n }}\n}}\n",
                       delay);
  };
  // arrive at 0 (completes at 0, visible at wake); the poll runs after arrive cost + delay.
  std::int64_t edge = m.mbarrier_wake_cycles - m.mbarrier_arrive_cycles;
  auto before = run_text(prog(edge - 1)), at = run_text(prog(edge));
  CHECK(before.stats.barriers[1].phases == 0);  // not visible yet: the marker never arrived
  CHECK(at.stats.barriers[1].phases == 1);      // visible: the marker arrived
}

TEST_CASE("fence.mbarrier_init + cluster.sync make an in-kernel init visible to peers, without either, a peer's "
          "signal is a hazard", "[semantics][mbarrier][cluster]") {
  auto prog = [](const char* after_init, const char* sync) {
    return fmt::format(R"(
kernel k grid=(2, 1, 1) cluster=(2, 1, 1) warps=1 {{
  mbarrier b
  warp 0 main {{
    elect {{ mbarrier.init b count=1
            {} }}
    {}
    if cluster_rank == 1 {{ elect {{ arrive b cta=0 }} }}
    if cluster_rank == 0 {{ wait b parity=0 }}
  }}
}}
)",
                       after_init, sync);
  };
  auto fenced_synced = run_text(prog("fence.mbarrier_init", "cluster.sync"));
  CHECK(fenced_synced.outcome == Outcome::kFinished);
  auto unfenced = run_text(prog("", "cluster.sync"));
  REQUIRE(unfenced.outcome == Outcome::kUndefined);
  CHECK(unfenced.diagnosis->title == "barrier init not visible to the cluster");
  CHECK(unfenced.diagnosis->hazard);
  CHECK_THAT(unfenced.diagnosis->message, Catch::Contains("did not fence (fence.mbarrier_init)"));
  // Fenced, but the peer signals without a cluster barrier in between (it only waits some time).
  auto no_sync = run_text(prog("fence.mbarrier_init", "compute cycles=5000"));
  REQUIRE(no_sync.outcome == Outcome::kUndefined);
  CHECK_THAT(no_sync.diagnosis->message, Catch::Contains("no cluster.sync followed the fence"));
  // A barrier declared with a count is initialised before the kernel starts: nothing to fence.
  auto declared = run_text(R"(
kernel k grid=(2, 1, 1) cluster=(2, 1, 1) warps=1 {
  mbarrier b count=1
  warp 0 main { if cluster_rank == 1 { elect { arrive b cta=0 } }
                if cluster_rank == 0 { wait b parity=0 } }
}
)");
  CHECK(declared.outcome == Outcome::kFinished);
  // Signals from the CTA itself need no cluster visibility.
  auto local = run_text(R"(
kernel k grid=(2, 1, 1) cluster=(2, 1, 1) warps=1 {
  mbarrier b
  warp 0 main { elect { mbarrier.init b count=1
                        arrive b }
                wait b parity=0 }
}
)");
  CHECK(local.outcome == Outcome::kFinished);
}

TEST_CASE("expect_tx that brings a negative tx-count back to 0 with no arrival pending completes the phase", "[semantics][mbarrier]") {
  // complete_tx lands first (tx -16), the arrival comes (pending 0), then the expect_tx: both are 0.
  auto prog = [](int expect) {
    return fmt::format("kernel k warps=2 {{\n mbarrier b count=1\n warp 0 p {{ elect {{ complete_tx b tx=16\n arrive b\n"
                       " expect_tx b tx={} }} }}\n warp 1 w {{ wait b parity=0 }}\n}}\n",
                       expect);
  };
  CHECK(run_text(prog(16)).outcome == Outcome::kFinished);
  CHECK(run_text(prog(32)).outcome == Outcome::kDeadlock);  // tx 16 still expected
}

TEST_CASE("a parity operand counts by its low bit", "[semantics][mbarrier]") {
  auto prog = [](int parity) {
    return fmt::format("kernel k warps=1 {{\n mbarrier b count=1\n warp 0 p {{ elect {{ arrive b }}\n wait b parity={} }}\n}}\n",
                       parity);
  };
  CHECK(run_text(prog(0)).outcome == Outcome::kFinished);  // phase 0 completed
  CHECK(run_text(prog(2)).outcome == Outcome::kFinished);  // 2 is parity 0
  CHECK(run_text(prog(3)).outcome == Outcome::kDeadlock);  // 3 is parity 1: waits for phase 1
}

TEST_CASE("one thread's remote signals land in program order under jitter", "[semantics][mbarrier][cluster]") {
  // Rank 0 expects 16 bytes on rank 1's barrier, then arrives on it; rank 1 delivers the bytes late. Were
  // the arrive to overtake the expect_tx, the phase would complete without the bytes (caught below).
  const char* text = R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {
  mbarrier b count=1
  mbarrier never count=1
  warp 0 w {
    if cluster_rank == 0 {
      elect { expect_tx b tx=16 cta=1
              arrive b cta=1 }
    } else {
      sleep cycles=2000
      test_wait b parity=0 -> early
      if early { wait never parity=0 }
      elect { complete_tx b tx=16 }
      wait b parity=0
    }
    cluster.sync
  }
}
)";
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    models::RunOptions o;
    o.seed = seed;
    o.jitter_pct = 50;
    auto r = run_text(text, "h100-sxm", o);
    INFO("seed " << seed);
    CHECK(r.outcome == Outcome::kFinished);
  }
}

TEST_CASE("phase overrun is found also for a wait that saw the completion before it was visible", "[semantics][mbarrier]") {
  auto m = models::load_machine("h100-sxm");
  // Warp 1 waits after phase 0 completed but before the completion is visible (mbarrier_wake_cycles);
  // phase 1 completes before it resumes when the second arrive comes early.
  auto prog = [](std::int64_t gap) {
    return fmt::format("kernel k warps=2 {{\n mbarrier b count=1\n warp 0 p {{ elect {{ arrive b }}\n sleep cycles={}\n"
                       " elect {{ arrive b }} }}\n warp 1 w {{ sleep cycles=5\n wait b parity=0 }}\n}}\n",
                       gap);
  };
  auto early = run_text(prog(20));
  REQUIRE(early.outcome == Outcome::kUndefined);
  CHECK(title(early) == "phase overrun");
  CHECK(run_text(prog(m.mbarrier_wake_cycles * 4)).outcome == Outcome::kFinished);
}

TEST_CASE("a phase must be observed by a successful wait before an arrive of the next phase", "[semantics][mbarrier]") {
  auto prog = [](const char* between) {
    return fmt::format("kernel k warps=2 {{\n mbarrier b count=1\n warp 0 p {{ elect {{ arrive b }}\n {}\n elect {{ arrive b }} }}\n"
                       " warp 1 w {{ sleep cycles=5000\n wait b parity=1 }}\n}}\n",
                       between);
  };
  // The producer runs a phase ahead: nothing observed phase 0 when it arrives for phase 1.
  auto ahead = run_text(prog("sleep cycles=10"));
  REQUIRE(ahead.outcome == Outcome::kUndefined);
  CHECK(title(ahead) == "arrive before the previous phase was observed");
  CHECK_THAT(ahead.diagnosis->message, Catch::Contains("completion of phase 0") && !Catch::Contains("below the arrivals"));
  CHECK(run_text(prog("wait b parity=0")).outcome == Outcome::kFinished);        // it observes phase 0 itself
  CHECK(run_text(prog("test_wait b parity=0 -> x\n sleep cycles=200\n test_wait b parity=0 -> y")).outcome == Outcome::kFinished);
}

TEST_CASE("an arrive before the previous phase was observed names a count below the arrivals per round",
          "[semantics][mbarrier][clc]") {
  // Three warps read each CLC response and release its slot on clc_empty; the scheduler waits on it each round. With
  // count 64 two warps' arrivals complete a phase, the phases run ahead of the rounds, and an arrive lands in a phase
  // after one nobody observed: the report adds that the phase completed without a warp whose code arrives there too.
  // With 96 the rounds hold.
  auto prog = [](int count) {
    return fmt::format(R"(
kernel k grid=(400,1,1) warps=3 {{
  smem big bytes=200K
  mbarrier clc_full count=1
  mbarrier clc_empty count={}
  warp 0 scheduler {{
    let i = 0
    let next = 0
    while next >= 0 {{
      wait clc_empty parity=(i & 1) ^ 1
      elect {{
        arrive.expect_tx clc_full tx=16
        clc.try_cancel bar=clc_full
      }}
      wait clc_full parity=i & 1
      clc.query bar=clc_full -> next
      arrive clc_empty
      let i = i + 1
    }}
  }}
  warps 1..3 reader {{
    let i = 0
    let next = 0
    while next >= 0 {{
      compute cycles=1000 * warp * warp
      wait clc_full parity=i & 1
      clc.query bar=clc_full -> next
      arrive clc_empty
      let i = i + 1
    }}
  }}
}}
)",
                       count);
  };
  CHECK(run_text(prog(96), "b200").outcome == Outcome::kFinished);
  auto low = run_text(prog(64), "b200");
  REQUIRE(low.outcome == Outcome::kUndefined);
  CHECK(title(low) == "arrive before the previous phase was observed");
  CHECK_THAT(low.diagnosis->message, Catch::Contains("Or its count is below the arrivals per round: phase") &&
                                         Catch::Contains("alone (count 64), while warp(s)") &&
                                         Catch::Contains("arrive on clc_empty too"));
  // An arrive that only warp 4 reaches (`if warp == 4`), on a barrier nobody waits on: the same diagnosis, and no other
  // warp of the role is named (their code never reaches it).
  auto guarded = run_text("kernel k warps=8 {\n mbarrier drained count=1\n warpgroup 1 c {\n for k in 0..3 {\n"
                          " if warp == 4 { elect { arrive drained } }\n compute cycles=100\n }\n }\n}\n");
  REQUIRE(guarded.outcome == Outcome::kUndefined);
  CHECK(title(guarded) == "arrive before the previous phase was observed");
  CHECK_THAT(guarded.diagnosis->message, !Catch::Contains("below the arrivals per round"));
}

TEST_CASE("deadlock causes say whether the arrivers exited or never existed", "[semantics][deadlock]") {
  auto cause = [](const models::RunResult& r) {
    std::string all;
    for (const auto& c : r.deadlock.causes) all += c + "\n";
    return all;
  };
  // Nobody signals the barrier at all.
  auto none = run_text("kernel k warps=2 {\n mbarrier b count=1\n mbarrier x count=1\n warp 0 p { elect { arrive x } }\n"
                       " warp 1 w { wait b parity=0 }\n}\n");
  REQUIRE(none.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(none), Catch::Contains("no op of any role arrives on b"));
  // In a cluster of 2 the only signal of b is a remote arrive at rank 0's barrier: rank 1's waiter is told that op
  // reaches other CTAs only, not that nothing signals b.
  auto other = run_text("kernel k warps=2 cluster=(2,1,1) grid=(2,1,1) {\n mbarrier b count=1\n"
                        " warp 0 p { if cluster_rank == 0 { elect { arrive b cta=0 } } }\n warp 1 w { wait b parity=0 }\n}\n");
  REQUIRE(other.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(other), Catch::Contains("the ops that signal b reach other CTAs only, not this one (cluster rank 1): "
                                           "'arrive b cta=0' (line 3)") && !Catch::Contains("no op of any role"));
  // The only op that signals b lies in a branch on a constant (a fixed twin's `if FIXED` with FIXED 0): the cause says
  // no warp's code reaches it, not that its signaller exited or that it reaches other CTAs; with FIXED 1 it runs.
  auto dead = [](int fixed) {
    return run_text(fmt::format("param FIXED = {}\nkernel k warps=2 {{\n mbarrier b count=1\n mbarrier x count=1\n"
                                " warp 0 p {{ elect {{ if FIXED {{ arrive b }} else {{ arrive x }} }} }}\n"
                                " warp 1 w {{ wait b parity=0 }}\n}}\n",
                                fixed));
  };
  CHECK(dead(1).outcome == Outcome::kFinished);
  auto unreached = dead(0);
  REQUIRE(unreached.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(unreached), Catch::Contains("b: phase 0 needs 1 more arrival(s) but no warp's code reaches an op that "
                                               "signals b: 'arrive b' (line 5) lies on a path no warp takes") &&
                                   !Catch::Contains("has exited") && !Catch::Contains("reach other CTAs only"));
  // The same op behind a guard of the warp's own built-ins that no warp of the role passes.
  auto guarded = run_text("kernel k warps=2 {\n mbarrier b count=1\n warp 0 p { if warp == 1 { elect { arrive b } } }\n"
                          " warp 1 w { wait b parity=0 }\n}\n");
  REQUIRE(guarded.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(guarded), Catch::Contains("no warp's code reaches an op that signals b: 'arrive b' (line 3)"));
  // A producer whose parity flips when its index reaches the last stage instead of when it wraps: its first waits on
  // empty[0..2] pass at once with parity 1, its first on empty[3] asks for phase 0. The first cause says so (not that
  // each side waits for the other's first arrive on empty[3]). Flipping on the wrap runs.
  auto flip = [](const char* when) {
    return run_text(fmt::format(R"(
kernel k warps=8 {{
  mbarrier full[4] count=1
  mbarrier empty[4] count=128
  warp 0 p {{ let idx = 0
             let ph = 1
             for k in 0..8 {{ wait empty[idx] parity=ph
                             elect {{ arrive full[idx] }}
                             let idx = (idx + 1) % 4
                             if idx == {} {{ let ph = ph ^ 1 }} }} }}
  warpgroup 1 c {{ for k in 0..8 {{ wait full[k % 4] parity=(k / 4) & 1
                                   arrive empty[k % 4] }} }}
}}
)",
                                when));
  };
  CHECK(flip("0").outcome == Outcome::kFinished);
  auto early_flip = flip("3");
  REQUIRE(early_flip.outcome == Outcome::kDeadlock);
  REQUIRE(!early_flip.deadlock.causes.empty());
  CHECK_THAT(early_flip.deadlock.causes[0], Catch::StartsWith("empty[3]: CTA 0 warp 0 (p) waits for its phase 0 (parity 0), while "
                                                              "the first waits on empty[0], empty[1], empty[2] passed at once "
                                                              "with parity 1"));
  CHECK_THAT(cause(early_flip), !Catch::Contains("nothing has arrived on empty[3]"));
  // Phase 0 completes while nobody waits; the waiter then asks for phase 1 (its parity one ahead): the cause says
  // phase 0 went unobserved. With parity 0 it returns on phase 0.
  auto ahead = [](int parity) {
    return run_text(fmt::format("kernel k warps=2 {{\n mbarrier b count=1\n warp 0 p {{ elect {{ arrive b }} }}\n"
                                " warp 1 w {{ sleep cycles=100\n wait b parity={} }}\n}}\n",
                                parity));
  };
  CHECK(ahead(0).outcome == Outcome::kFinished);
  auto skipped = ahead(1);
  REQUIRE(skipped.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(skipped), Catch::Contains("b: phase 0 completed (cycle") &&
                                 Catch::Contains("and no wait observed it, while CTA 0 warp 1 (w) waits for phase 1 (parity 1)"));
  // The producer arrives twice, the consumer waits for three phases: the producer exited.
  auto gone = run_text("kernel k warps=2 {\n mbarrier b count=1\n warp 0 p { for i in 0..2 { elect { arrive b }\n"
                       " wait b parity=i & 1 } }\n warp 1 w { for i in 0..3 { wait b parity=i & 1 } }\n}\n");
  REQUIRE(gone.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(gone), Catch::Contains("every warp that signals b has exited: CTA 0 warp 0 (p)"));
  // Two of three arrivers run, one left before its loop: the cause names it (and its exit), not the count.
  auto some = [](int skip) {
    return run_text(fmt::format("kernel k warps=4 {{\n mbarrier b count=96\n warp 0 p {{ wait b parity=0 }}\n"
                                " warps 1..4 w {{ if warp_in_role == {} {{ exit }}\n arrive b\n wait b parity=0 }}\n}}\n",
                                skip));
  };
  auto early = some(2);
  REQUIRE(early.outcome == Outcome::kDeadlock);
  CHECK_THAT(cause(early), Catch::Contains("only 64 arrival(s) came in phase 0 (32 missing), and 1 warp(s) whose code arrives on b "
                                           "exited: CTA 0 warp 3 (w) at cycle"));
  CHECK(some(5).outcome == Outcome::kFinished);  // no warp skips: all three arrive
}

TEST_CASE("TMEM cta_group::2: one warp of each CTA of the pair allocates together, the same columns in both",
          "[semantics][tmem]") {
  auto prog = [](const char* rank0, const char* rank1, int cluster = 2) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=({},1,1) warps=1 {{
  global seen[2]
  warp 0 w {{
    if cluster_rank == 0 {{ {} }} else {{ {} }}
  }}
}}
)",
                       cluster, rank0, rank1);
  };
  // Two pair allocations and their deallocations; both CTAs get the same address (checked through a global
  // word: rank 1 waits until rank 0 published its address and hangs unless its own is the same).
  const char* both0 = R"(tmem.alloc cols=64 cta_group=2 -> a
                         tmem.alloc cols=128 cta_group=2 -> b
                         elect { st.relaxed seen[0] val=b + 1 }
                         tmem.dealloc b cols=128 cta_group=2
                         tmem.dealloc a cols=64 cta_group=2)";
  const char* both1 = R"(tmem.alloc cols=64 cta_group=2 -> a
                         tmem.alloc cols=128 cta_group=2 -> b
                         spin seen[0] eq=b + 1
                         tmem.dealloc b cols=128 cta_group=2
                         tmem.dealloc a cols=64 cta_group=2)";
  auto ok = run_text(prog(both0, both1), "b200");
  INFO(test::problem(ok));
  CHECK(ok.outcome == Outcome::kFinished);
  // Only one CTA of the pair allocates: it waits for its peer, which exits.
  auto alone = run_text(prog("tmem.alloc cols=64 cta_group=2 -> a", "sleep cycles=10"), "b200");
  REQUIRE(alone.outcome == Outcome::kDeadlock);
  CHECK(test::problem(alone).find("waits for a warp of the peer CTA 1 to perform it too") != std::string::npos);
  CHECK(test::problem(alone).find("no warp of the peer CTA 1 did it before that CTA exited") != std::string::npos);
  // The two warps must do the same thing.
  auto mixed = run_text(prog("tmem.alloc cols=64 cta_group=2 -> a", "tmem.relinquish cta_group=2"), "b200");
  CHECK(mixed.outcome == Outcome::kUndefined);
  CHECK(mixed.diagnosis->title == "cta_group::2 peers disagree");
  auto sizes = run_text(prog("tmem.alloc cols=64 cta_group=2 -> a", "tmem.alloc cols=128 cta_group=2 -> a"), "b200");
  CHECK(sizes.outcome == Outcome::kUndefined);
  // No pair: a cluster of one CTA.
  auto single = run_text(prog("tmem.alloc cols=64 cta_group=2 -> a", "tmem.alloc cols=64 cta_group=2 -> a", 1), "b200");
  CHECK(single.outcome == Outcome::kUndefined);
  CHECK(single.diagnosis->title == "cta_group::2 without a peer CTA");
  // A kernel uses one cta_group for every tcgen05 op.
  CHECK(test::compile_error("kernel k warps=1 { warp 0 w { tmem.alloc cols=64 cta_group=2 -> a\n tmem.dealloc a cols=64 } }")
            .find("one kernel uses one cta_group") != std::string::npos);
}

TEST_CASE("deadlock wait-for edges respect where a signal can land (local, cta=, multicast masks)", "[semantics][deadlock]") {
  // CTA 0's consumer waits on its own b, which only its own producer signals (a local arrive), and that
  // producer exited: the root cause. CTA 1's producer arriving on its own b cannot help CTA 0.
  auto r = run_text(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {
  mbarrier b count=1
  mbarrier x count=1
  warp 0 producer {
    if cluster_rank == 1 { wait x parity=0 }
    if cluster_rank == 1 { elect { arrive b } }
  }
  warp 1 consumer {
    wait b parity=0
    if cluster_rank == 0 { elect { arrive x cta=1 } }
  }
}
)");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  for (const auto& cyc : r.deadlock.cycles)
    for (int n : cyc) CHECK(r.deadlock.warps[n].cta == 1);
  bool root = false;
  for (const auto& c : r.deadlock.causes) root = root || c.find("every warp that signals b has exited: CTA 0 warp 0 (producer)") != std::string::npos;
  CHECK(root);
  // A multicast mask names the CTAs it reaches.
  auto p = test::compile_text(R"(
kernel k grid=(4,1,1) cluster=(4,1,1) warps=1 {
  mbarrier f count=1
  smem s bytes=1K
  warp 0 w { elect { tma.load bytes=1K dst=s bar=f multicast=5
                     umma.commit f multicast=2
                     arrive f cta=3
                     arrive f } }
}
)");
  const auto& ops = p.roles[0].ops;
  CHECK(models::MbarrierUnit::reaches(ops[0], 1, 0));
  CHECK(models::MbarrierUnit::reaches(ops[0], 1, 2));
  CHECK_FALSE(models::MbarrierUnit::reaches(ops[0], 0, 1));
  CHECK(models::MbarrierUnit::reaches(ops[1], 0, 1));
  CHECK_FALSE(models::MbarrierUnit::reaches(ops[1], 0, 0));
  CHECK(models::MbarrierUnit::reaches(ops[2], 0, 3));
  CHECK_FALSE(models::MbarrierUnit::reaches(ops[2], 3, 0));
  CHECK(models::MbarrierUnit::reaches(ops[3], 2, 2));
  CHECK_FALSE(models::MbarrierUnit::reaches(ops[3], 2, 1));
}

TEST_CASE("deadlock: arrivals a peer CTA made on its own barrier, where nobody waits, are named as meant for this one",
          "[semantics][mbarrier][cluster]") {
  // Rank 0 waits for both CTAs' warp 1 (64 threads); the peer's arrive is local (no cta=0), so it lands on the peer's
  // own barrier, which no warp of the peer waits on.
  auto prog = [](const char* arrive) {
    return fmt::format("kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {{\n mbarrier e count=64\n"
                       " warp 0 w {{ if cluster_rank == 0 {{ wait e parity=0 }} }}\n warp 1 a {{ {} }}\n}}\n",
                       arrive);
  };
  CHECK(run_text(prog("arrive e cta=0")).outcome == Outcome::kFinished);
  auto r = run_text(prog("arrive e"));
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || c.find("CTA 1 (rank 1)'s own e has had 32 arrival(s) (phase 0, 32 pending) and no warp of that CTA waits on it: if its "
                          "warps' arrivals are meant for this CTA's e, each must name this CTA (`arrive ... cta=0`") !=
                       std::string::npos;
  CHECK(said);
  // The same while the peer's arriving warp still runs (it then waits on its own e, which its arrival cannot complete).
  auto live = run_text(prog("arrive e\n if cluster_rank == 1 { wait e parity=0 }"));
  REQUIRE(live.outcome == Outcome::kDeadlock);
  said = false;
  for (const auto& c : live.deadlock.causes) said = said || c.find("arrive ... cta=0") != std::string::npos;
  CHECK_FALSE(said);  // a warp of the peer waits on its e: its arrivals may be meant for it, nothing is said
}

TEST_CASE("deadlock: a barrier a peer's umma.commit completes in the peer only names that commit",
          "[semantics][mbarrier][cluster][tcgen05]") {
  // Rank 0's MMA warp commits to e without a multicast mask: e completes in rank 0 only, and rank 1's warp 1 waits on
  // its own e forever (a 2-SM pair's commit reaches both CTAs with multicast=0x3). A plain arrive that a peer's own
  // warps make is symmetric: a peer that ran further is no evidence (the second program).
  auto prog = [](const char* mask) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {{
  mbarrier e count=1
  smem sA bytes=16K
  warp 0 mma {{ if cluster_rank == 0 {{
    tmem.alloc cols=128 -> acc
    elect {{ umma m128n128k16 kind=f16 a=sA b=sA tmem=acc
            umma.commit e{} }}
    wait e parity=0
    tmem.relinquish
    tmem.dealloc acc cols=128 }} }}
  warp 1 w {{ wait e parity=0 }}
}}
)",
                       mask);
  };
  CHECK(run_text(prog(" multicast=0x3"), "b200").outcome == Outcome::kFinished);
  auto local = run_text(prog(""), "b200");
  REQUIRE(local.outcome == Outcome::kDeadlock);
  CHECK_THAT(causes(local), Catch::Contains("In CTA 0 (rank 0), e completed 1 phase(s), the latest arrival by CTA 0 warp 0's "
                                            "`umma.commit e` at line 8, which signals rank 0 only: if it should signal this "
                                            "CTA's e too, it needs a multicast mask that names rank 1"));
  auto symmetric = run_text("kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {\n mbarrier e count=1\n mbarrier y count=1\n"
                            " warp 0 w { wait e parity=0\n elect { arrive y } }\n"
                            " warp 1 a { if cluster_rank == 1 { wait y parity=0 }\n elect { arrive e } }\n}\n");
  REQUIRE(symmetric.outcome == Outcome::kDeadlock);
  CHECK_THAT(causes(symmetric), !Catch::Contains("which signals rank"));
}

TEST_CASE("deadlock: an element of a barrier array that no arrival ever reaches names the op that arrives on its siblings",
          "[semantics][mbarrier]") {
  // Warp 1 arrives on e[i] for every i but `skip`; with `stay` it then waits on e[2] itself (blocked), else it exits.
  auto prog = [](int skip, bool stay) {
    return fmt::format("kernel k warps=2 {{\n mbarrier e[3] count=1\n"
                       " warp 0 w {{ wait e[0] parity=0\n wait e[1] parity=0\n wait e[2] parity=0 }}\n"
                       " warp 1 a {{ for i in 0..3 {{ if i != {} {{ elect {{ arrive e[i] }} }} }}\n {} }}\n}}\n",
                       skip, stay ? "wait e[2] parity=0" : "");
  };
  CHECK(run_text(prog(3, true)).outcome == Outcome::kFinished);
  for (bool stay : {true, false}) {
    auto r = run_text(prog(2, stay));
    REQUIRE(r.outcome == Outcome::kDeadlock);
    CHECK_THAT(causes(r), Catch::Contains("e[2] never got an arrival in this CTA while e[0] (1 phase(s)), e[1] (1 phase(s)) "
                                          "completed phases; the latest arrival on e[1] was warp 1's `arrive e[i]` at line 6: "
                                          "the index it arrives on, or the condition around it, never reaches e[2]"));
  }
  // Not when the arriving warp stopped before that element (blocked on x): it may still come.
  auto before = run_text("kernel k warps=2 {\n mbarrier e[3] count=1\n mbarrier x count=1\n"
                         " warp 0 w { wait e[0] parity=0\n wait e[1] parity=0\n wait e[2] parity=0 }\n"
                         " warp 1 a { for i in 0..3 { if i == 2 { wait x parity=0 }\n elect { arrive e[i] } } }\n}\n");
  REQUIRE(before.outcome == Outcome::kDeadlock);
  CHECK_THAT(causes(before), !Catch::Contains("never reaches"));
  // Nor when another live warp's code does arrive on that element (its turn has not come: it waits on x, which comes
  // after e[2]).
  auto turn = run_text("kernel k warps=3 {\n mbarrier e[3] count=1\n mbarrier x count=1\n"
                       " warp 0 w { wait e[0] parity=0\n wait e[1] parity=0\n wait e[2] parity=0\n elect { arrive x } }\n"
                       " warp 1 a { for i in 0..2 { elect { arrive e[i] } }\n wait e[2] parity=0 }\n"
                       " warp 2 c { wait x parity=0\n elect { arrive e[2] } }\n}\n");
  REQUIRE(turn.outcome == Outcome::kDeadlock);
  CHECK_THAT(causes(turn), !Catch::Contains("never reaches"));
}

TEST_CASE("deadlock: a tx-count stuck because the cluster's multicast masks leave a CTA out names those loads",
          "[semantics][mbarrier][cluster]") {
  // Each CTA of the pair multicasts its 4 KB slice of B; rank 1 expects both slices. With the mask (computed at run
  // time) 0x1 every copy goes to rank 0 alone.
  auto prog = [](int mask) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  smem sB bytes=8K
  tensor B dtype=bf16 shape=(256, 256)
  warp 0 p {{
    let m = {}
    elect {{ arrive.expect_tx full tx=8K
            tma.load B box=(32, 64) at=(cluster_rank * 32, 0) dst=sB bar=full multicast=m }}
    wait full parity=0
  }}
}}
)",
                       mask);
  };
  CHECK(run_text(prog(3)).outcome == Outcome::kFinished);
  auto r = run_text(prog(1));
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || c.find("Multicast loads of the cluster that signal full left this CTA (rank 1) out in this phase: "
                          "`tma.load B box=(32, 64) at=(cluster_rank * 32, 0) dst=sB bar=full multicast=m` at line 9 "
                          "(CTA 0 with mask 0x1, CTA 1 with mask 0x1). If one of them should bring this CTA its bytes, its "
                          "multicast mask is wrong") != std::string::npos;
  CHECK(said);
}

TEST_CASE("deadlock: a cluster.sync that some roles never run names their warps", "[semantics][cluster]") {
  // barrier.cluster has no thread count: every live warp of the cluster must arrive. Inside the consumers' role only,
  // it waits for the producer warps forever; the cause names them and says their code has no cluster.sync. With the
  // sync before the roles split (every warp runs it) the kernel finishes.
  auto prog = [](bool split) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {{
  mbarrier go count=1
  warp 0 producer {{
    {}
    wait go parity=0
  }}
  warp 1 consumer {{
    compute cycles=50
    cluster.sync
    elect {{ arrive go }}
  }}
}}
)",
                       split ? "" : "cluster.sync");
  };
  CHECK(run_text(prog(false)).outcome == Outcome::kFinished);
  auto r = run_text(prog(true));
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes)
    said = said || (c.find("not every live warp of the cluster reaches it: live warps whose code has no cluster.sync: CTA 0 "
                           "warp 0 (producer), waiting for mbarrier go") != std::string::npos &&
                    c.find("; CTA 1 warp 0 (producer), waiting for mbarrier go") != std::string::npos);
  CHECK(said);
}

TEST_CASE("deadlock: a barrier that only expect_tx and copies signal says no op arrives on it", "[semantics][mbarrier]") {
  // expect_tx sets the bytes without arriving; the load's complete_tx brings them; the count-1 barrier needs an arrival
  // no warp's code reaches (a plain arrive behind `if warp == 1` in warp 0's role counts as none). With arrive.expect_tx
  // it completes; with a reachable arrive that is merely missing (count 2), the usual cause.
  auto prog = [](const char* expect, int count, const char* extra) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count={}
  smem s bytes=4K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{
    elect {{
      {} full tx=4K
      tma.load T box=(32, 64) at=(0, 0) dst=s bar=full
      {}
    }}
  }}
  warp 1 c {{ wait full parity=0 }}
}}
)",
                       count, expect, extra);
  };
  auto said = [](const models::RunResult& r) {
    bool found = false;
    for (const auto& c : r.deadlock.causes)
      found = found || c.find("full: phase 0 needs 1 more arrival(s), but no warp's code reaches an op that arrives on it: "
                              "the ops that signal it ('expect_tx full tx=4K' (line 8), 'tma.load T box=(32, 64) at=(0, 0) "
                              "dst=s bar=full' (line 9)) move its tx-count only") != std::string::npos;
    return found;
  };
  CHECK(run_text(prog("arrive.expect_tx", 1, "")).outcome == Outcome::kFinished);
  auto none = run_text(prog("expect_tx", 1, "if warp == 1 { arrive full }"));
  REQUIRE(none.outcome == Outcome::kDeadlock);
  CHECK(said(none));
  auto missing = run_text(prog("arrive.expect_tx", 2, ""));
  REQUIRE(missing.outcome == Outcome::kDeadlock);
  CHECK_FALSE(said(missing));
}

TEST_CASE("deadlock: a tx-count stuck because a stage's load names another stage's barrier says so",
          "[semantics][mbarrier][tma]") {
  // A ring of two stages: each load into sA[s] should complete on full[s]. With bar=full[0] the second stage's bytes
  // complete on full[0], and full[1] waits for bytes that never come: the cause names the load and its stage. Arrays of
  // different lengths (a barrier per two buffers) pair nothing, and nothing is said of them.
  auto prog = [](const char* bar, int buffers) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  smem sA[{}] bytes=4K
  tensor T dtype=bf16 shape=(1024, 1024)
  warp 0 p {{
    elect {{
      for k in 0..4 {{
        let s = k % 2
        wait empty[s] parity=((k / 2) & 1) ^ 1
        arrive.expect_tx full[s] tx=4K
        tma.load T box=(32, 64) at=(32 * k, 0) dst=sA[s] bar=full[{}]
      }}
    }}
  }}
  warp 1 c {{
    for k in 0..4 {{
      let s = k % 2
      wait full[s] parity=(k / 2) & 1
      ld.shared bytes=128 src=sA[s]
      elect {{ arrive empty[s] }}
    }}
  }}
}}
)",
                       buffers, bar);
  };
  CHECK(run_text(prog("s", 2)).outcome == Outcome::kFinished);
  auto said = [](const models::RunResult& r) {
    bool found = false;
    for (const auto& c : r.deadlock.causes)
      found = found || c.find("Note: 'tma.load T box=(32, 64) at=(32 * k, 0) dst=sA[s] bar=full[0]' (line 13) loaded into "
                              "sA[1] but completes on full[0]: does each load name its own stage's barrier (bar=)?") !=
                           std::string::npos;
    return found;
  };
  auto r = run_text(prog("0", 2));
  REQUIRE(r.outcome == Outcome::kDeadlock);
  CHECK(said(r));
  auto other = run_text(prog("0", 4));
  REQUIRE(other.outcome == Outcome::kDeadlock);
  CHECK_FALSE(said(other));
  bool stuck = false;
  for (const auto& c : other.deadlock.causes) stuck = stuck || c.find("the tx-count is stuck") != std::string::npos;
  CHECK(stuck);
}

TEST_CASE("deadlock: a tx-count stuck for want of a peer's multicast bytes names the peer and when it exited",
          "[semantics][deadlock]") {
  auto r = run_text(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {
  mbarrier full count=1
  smem s bytes=2K
  warp 0 producer {
    cluster.sync
    elect { arrive.expect_tx full tx=2K }
    if cluster_rank == 0 { elect { tma.load bytes=1K dst=s bar=full multicast=3 } }   # rank 1 forgot its half
  }
  warp 1 consumer { cluster.sync
                    wait full parity=0 }
}
)");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  std::string all;
  for (const auto& c : r.deadlock.causes) all += c + "\n";
  INFO(all);
  CHECK(all.find("tx-count is stuck at 1024") != std::string::npos);
  CHECK(all.find("Peers whose multicast copies may land here: CTA 1 (rank 1): warp 0 exited at cycle") != std::string::npos);
}

TEST_CASE("named barrier: a use left unfinished when the CTA exits is a note (shown with a problem)", "[semantics][named]") {
  auto prog = [](int warps) {
    return fmt::format("kernel k warps={} {{ warps 0..{} w {{ bar.arrive 1 threads=64 }} }}", warps, warps);
  };
  auto even = run_text(prog(2));
  CHECK(even.outcome == Outcome::kFinished);
  CHECK(even.notes.empty());
  auto odd = run_text(prog(3));
  CHECK(odd.outcome == Outcome::kFinished);
  CHECK(odd.warnings.empty());  // warpgroups taking turns leave a last arrive in correct programs too
  REQUIRE(odd.notes.size() == 1);
  CHECK(odd.notes[0].find("CTA 0 exited with a use of bar 1 unfinished: 32 of 64 threads arrived (warps 2") != std::string::npos);
}

TEST_CASE("mbarrier: a wait that returns on a completion the warp already consumed is a stale-parity warning",
          "[semantics][mbarrier]") {
  auto prog = [](const char* second) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier b count=1
  warp 0 p {{ elect {{ arrive b }}
             sleep cycles=2000
             elect {{ arrive b }} }}
  warp 1 c {{ wait b parity=0
             sleep cycles=500
             {} }}
}}
)",
                       second);
  };
  auto stale = run_text(prog("wait b parity=0"));  // the counter did not advance: phase 0 again
  CHECK(stale.outcome == Outcome::kFinished);
  REQUIRE(stale.warnings.size() == 1);
  CHECK(stale.warnings[0].find("the wait at line 9 returned on the completion of phase 0 of b, which its wait at line 7 had "
                               "already returned on") != std::string::npos);
  auto fresh = run_text(prog("wait b parity=1"));
  CHECK(fresh.outcome == Outcome::kFinished);
  CHECK(fresh.warnings.empty());
  // A successful test_wait followed by a wait on the same phase (CUTLASS's try_wait, then wait) is fine.
  auto polled = run_text(prog("test_wait b parity=1 -> ok\n wait b parity=1"));
  CHECK(polled.warnings.empty());
  // Re-waiting a barrier that never completes again (loaded once, waited in every iteration) is fine.
  auto once = run_text(R"(
kernel k warps=2 {
  mbarrier q count=1
  warp 0 p { elect { arrive q } }
  warp 1 c { for i in 0..4 { wait q parity=0
                             sleep cycles=100 } }
}
)");
  CHECK(once.outcome == Outcome::kFinished);
  CHECK(once.warnings.empty());
}

TEST_CASE("mbarrier: a run that stops names the stale waits of the CTAs still running, once per op", "[semantics][mbarrier]") {
  // A persistent loop whose stage counter restarts per tile while the k-loop (6) is not a multiple of the stages (4):
  // the second tile's wait on full[2] returns on the completion its first tile's wait consumed, and the run stops on a
  // diagnosis before full[2] completes again. A running counter across tiles is sound and warns of nothing.
  auto prog = [](bool running) {
    return fmt::format(R"(
kernel m warps=12 {{
  mbarrier full[4] count=1
  mbarrier empty[4] count=256
  smem sA[4] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 producer {{ elect {{ for t in 0..3 {{ for k in 0..6 {{
      let g = {0}
      wait empty[g % 4] parity=((g / 4) & 1) ^ 1
      arrive.expect_tx full[g % 4] tx=16K
      tma.load A box=(128, 64) at=(t * 128, k * 64) dst=sA[g % 4] bar=full[g % 4] }} }} }} }}
  warpgroups 1..3 consumer {{ for t in 0..3 {{ for k in 0..6 {{
      let g = {0}
      wait full[g % 4] parity=(g / 4) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[g % 4] b=sA[g % 4] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty[g % 4] }} }} }}
}}
)",
                       running ? "t * 6 + k" : "k");
  };
  auto fixed = run_text(prog(true));
  CHECK(fixed.outcome == Outcome::kFinished);
  CHECK(fixed.warnings.empty());
  auto restart = run_text(prog(false));
  CHECK(restart.outcome != Outcome::kFinished);
  REQUIRE(restart.warnings.size() >= 1);
  CHECK_THAT(restart.warnings[0], Catch::Contains("returned on the completion of phase 0 of full[2], which its wait at line 14 had "
                                                  "already returned on; the run stopped before full[2] completed another phase") &&
                                      Catch::Contains("(and 7 more warps of the CTA alike)"));
}


TEST_CASE("TMEM cta_group::2: pair allocations wait in order per SM, not behind pairs on other SMs, umma needs its pair",
          "[semantics][tmem]") {
  // Cluster 75 waits for columns that cluster 1 holds (same SMs) until cluster 0, on other SMs, sets a flag;
  // cluster 0's allocation must not wait behind cluster 75's.
  const char* hol = R"(
kernel k grid=(152,1,1) cluster=(2,1,1) warps=1 smem=100K {
  global flag[1] init=0
  warp 0 w {
    let cl = cta / 2
    if cl == 1 {
      tmem.alloc cols=512 cta_group=2 -> a
      spin flag[0] ge=1
      tmem.dealloc a cols=512 cta_group=2
    }
    if cl == 75 {
      tmem.alloc cols=512 cta_group=2 -> a
      tmem.dealloc a cols=512 cta_group=2
    }
    if cl == 0 {
      compute cycles=2000
      tmem.alloc cols=512 cta_group=2 -> a
      elect { st.release flag[0] val=1 }
      tmem.dealloc a cols=512 cta_group=2
    }
  }
}
)";
  auto r = run_text(hol, "b200");
  INFO(test::problem(r));
  CHECK(r.outcome == Outcome::kFinished);
  const char* odd = R"(
kernel k grid=(3,1,1) cluster=(3,1,1) warps=1 {
  mbarrier done count=1
  smem sA bytes=16K
  smem sB bytes=16K
  warp 0 w {
    if cluster_rank == 2 {
      elect { umma m256n256k16 kind=f16 cta_group=2 a=sA b=sB tmem=0
              umma.commit done }
      wait done parity=0
    }
  }
}
)";
  auto u = run_text(odd, "b200");
  CHECK(u.outcome == Outcome::kUndefined);
  CHECK(u.diagnosis->title == "cta_group::2 without a peer CTA");
  // The two warps of a pair deallocation must free the same columns.
  auto dis = run_text(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=1 {
  warp 0 w { tmem.alloc cols=32 cta_group=2 -> a
             tmem.alloc cols=32 cta_group=2 -> b
             if cluster_rank == 0 { tmem.dealloc a cols=32 cta_group=2 } else { tmem.dealloc b cols=32 cta_group=2 }
             tmem.dealloc b cols=32 cta_group=2 }
}
)", "b200");
  CHECK(dis.outcome == Outcome::kUndefined);
  CHECK(dis.diagnosis->title == "cta_group::2 peers disagree");
}


TEST_CASE("named barrier: a cause names what the other users wait on, also another named barrier", "[semantics][named]") {
  auto r = run_text(R"(
param ITERS = 3
kernel k grid=(1,1,1) warps=8 {
  warpgroup 0 wg1 {
    for i in 0..ITERS {
      bar.sync 1 threads=256
      compute cycles=200
      bar.arrive 2 threads=256
    }
  }
  warpgroup 1 wg2 {
    for i in 0..ITERS {
      bar.sync 2 threads=256
      compute cycles=200
      bar.arrive 1 threads=256
    }
  }
}
)");
  REQUIRE(r.outcome == Outcome::kDeadlock);
  bool said = false;
  for (const auto& c : r.deadlock.causes) said = said || c.find("which also uses bar 1, waits on named barrier 2") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a wait's group count known only at run time is checked like a constant: 0..63", "[semantics][ub]") {
  // The count comes from a loop variable, so the compiler cannot check it; the op checks it when it runs.
  auto prog = [](const char* wait, int n) {
    bool wg = std::string(wait) == "wgmma.wait";
    std::string op = fmt::format("{} n=i + {}", wait, n);
    if (std::string(wait) == "tma.wait") op = "elect { " + op + " }";
    return fmt::format("kernel k warps=4 {{\n {} 0 c {{\n for i in 0..1 {{\n {}\n }}\n }}\n}}\n", wg ? "warpgroup" : "warp", op);
  };
  for (const char* wait : {"wgmma.wait", "cp.async.wait", "tma.wait"}) {
    INFO(wait);
    CHECK(run_text(prog(wait, 0)).outcome == Outcome::kFinished);
    CHECK(run_text(prog(wait, 63)).outcome == Outcome::kFinished);
    for (int bad : {-1, 64, -1000000}) {
      auto r = run_text(prog(wait, bad));
      REQUIRE(r.outcome == Outcome::kUndefined);
      CHECK(title(r) == "bad wait count");
      CHECK(r.diagnosis->loc.line == 4);
    }
  }
}

TEST_CASE("bytes known only at run time past the smem element an op names are undefined behaviour at its line", "[semantics][ub]") {
  // The bytes come from a loop variable (i = 0), so the compiler cannot check them; the op checks them when it runs.
  // One element of s is 4 KB.
  auto prog = [](const std::string& op, int bytes) {
    return fmt::format("kernel k warps=1 {{\n smem s[2] bytes=4K\n mbarrier b count=1\n warp 0 w {{\n for i in 0..1 {{\n"
                       " elect {{ arrive.expect_tx b tx=16 }}\n {}\n }}\n }}\n}}\n",
                       fmt::format(fmt::runtime(op), bytes));
  };
  for (const char* op : {"st.shared bytes=i + {} dst=s[1]", "ld.shared bytes=i + {} src=s[0]", "ldmatrix bytes=i + {} src=s[0]",
                         "elect {{ cp.async bytes=i + {} dst=s[0] }}",
                         "elect {{ tma.store bytes=i + {} src=s[0]\n tma.commit\n tma.wait 0 read }}"}) {
    INFO(op);
    const bool bulk = std::string(op).find("tma.") != std::string::npos;
    CHECK(run_text(prog(op, 4096)).outcome == Outcome::kFinished);
    auto r = run_text(prog(op, bulk ? 4112 : 4097));
    REQUIRE(r.outcome == Outcome::kUndefined);
    CHECK(title(r) == "access past its buffer");
    CHECK_THAT(r.diagnosis->message, Catch::Contains(fmt::format("{} bytes", bulk ? 4112 : 4097)));
    CHECK_THAT(r.diagnosis->message, Catch::Contains("whose elements are 4096 bytes"));
    CHECK(r.diagnosis->loc.line == 7);
  }
  // A TMA load's: the same rule (its complete_tx lands on b; 4096 bytes are within the element).
  auto load = [](int bytes) {
    return fmt::format("kernel k warps=1 {{\n smem s[2] bytes=4K\n mbarrier b count=1\n warp 0 w {{\n for i in 0..1 {{\n"
                       " elect {{ arrive.expect_tx b tx={} }}\n elect {{ tma.load bytes=i + {} dst=s[1] bar=b }}\n wait b parity=0\n"
                       " }}\n }}\n}}\n",
                       bytes, bytes);
  };
  CHECK(run_text(load(4096)).outcome == Outcome::kFinished);
  auto r = run_text(load(4112));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK(title(r) == "access past its buffer");
  CHECK(r.diagnosis->loc.line == 7);
}

TEST_CASE("run-time arithmetic is checked: overflow is undefined behaviour at its line, not a wrapped value", "[semantics][ub]") {
  // i is 0 or 1 at run time, so nothing folds.
  auto prog = [](const std::string& expr) {
    return fmt::format("kernel k warps=1 {{\n warp 0 w {{\n for i in 0..2 {{\n compute cycles=max(1, min(2, {}))\n }}\n }}\n}}\n", expr);
  };
  CHECK(run_text(prog("(i - 9223372036854775807) / -1")).outcome == Outcome::kFinished);  // INT64_MAX - i fits
  CHECK(run_text(prog("(i - 9223372036854775807 - 1) % -1")).outcome == Outcome::kFinished);
  for (const char* e : {"(i - 9223372036854775807 - 1) / -1", "i * 4611686018427387904 * 2", "-(i - 9223372036854775807 - 1)",
                        "i * 9223372036854775807 + i"}) {
    INFO(e);
    auto r = run_text(prog(e));
    REQUIRE(r.outcome == Outcome::kUndefined);
    CHECK(title(r) == "integer overflow");
    CHECK(r.diagnosis->loc.line == 4);
  }
  auto z = run_text(prog("1 / i"));
  REQUIRE(z.outcome == Outcome::kUndefined);
  CHECK(title(z) == "division by zero");
}

TEST_CASE("a for step computed at run time must be positive: undefined behaviour at its line and not an endless loop",
          "[semantics][ub]") {
  // The step depends on the warp (a built-in), so the compiler cannot check it; the loop checks it on entry.
  auto prog = [](const char* step) {
    return fmt::format("kernel k warps=2 {{\n warps 0..2 w {{\n let s = {}\n for i in 0..6 step s {{\n compute cycles=1\n }}\n }}\n}}\n",
                       step);
  };
  auto ok = run_text(prog("warp + 2"));  // warps 0 and 1: steps 2 and 3, 3 + 2 iterations
  REQUIRE(ok.outcome == Outcome::kFinished);
  CHECK(ok.stats.ops == 5);
  for (const char* bad : {"warp", "warp - 1", "0 - 9223372036854775807"}) {
    INFO(bad);
    auto r = run_text(prog(bad));
    REQUIRE(r.outcome == Outcome::kUndefined);
    CHECK(title(r) == "loop step not positive");
    CHECK(r.diagnosis->loc.line == 4);
    CHECK(r.diagnosis->warp == 0);
    CHECK_THAT(r.diagnosis->message, Catch::Contains("the step of the for loop at line 4 is"));
  }
  // The step alone, hoisted out of the warp's code: still checked in the loop.
  auto hoisted = run_text("kernel k warps=1 {\n warp 0 w {\n for i in 0..4 step warp * 2 {\n compute cycles=1\n }\n }\n}\n");
  REQUIRE(hoisted.outcome == Outcome::kUndefined);
  CHECK(title(hoisted) == "loop step not positive");
  CHECK(hoisted.diagnosis->loc.line == 3);
  // A constant step that is not positive stays an input error.
  CHECK_THAT(test::compile_error("kernel k warps=1 {\n warp 0 w {\n for i in 0..4 step 1 - 1 {\n }\n }\n}\n"),
             Catch::Contains("the loop step must be positive"));
}

TEST_CASE("tmem.relinquish must be ordered after the CTA's allocs by other warps", "[semantics][tcgen05]") {
  // Warp 1 relinquishes while warp 0 allocates: unordered, the relinquish could come first on another schedule (then
  // the alloc is illegal), even though here the alloc ran first. Ordered by an arrive after the alloc, or done by the
  // allocating warp itself: fine.
  auto prog = [](const char* sched, const char* after_alloc) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier got count=32
  warp 0 mma {{
    tmem.alloc cols=128 -> t
    {}
    compute cycles=500
    tmem.dealloc t cols=128
  }}
  warp 1 sched {{
    compute cycles=100
    {}
  }}
}}
)",
                       after_alloc, sched);
  };
  auto unordered = run_text(prog("tmem.relinquish", ""), "b200");
  REQUIRE(unordered.outcome == Outcome::kUndefined);
  CHECK(title(unordered) == "relinquish not ordered after an alloc");
  CHECK(unordered.diagnosis->warp == 1);
  CHECK_THAT(unordered.diagnosis->message, Catch::Contains("not ordered after warp 0's 'tmem.alloc cols=128 -> t' (line 5)"));
  CHECK(run_text(prog("wait got parity=0\n tmem.relinquish", "arrive got"), "b200").outcome == Outcome::kFinished);
  CHECK(run_text(prog("", "tmem.relinquish"), "b200").outcome == Outcome::kFinished);
  // The other order: the relinquish runs first (warp 0 allocates late); the alloc's report names that relinquish
  // and what would order the two. The same warp relinquishing before its own alloc is told so.
  auto late = [](const char* mma_first) {
    return fmt::format("kernel k warps=2 {{\n warp 0 mma {{ {}\n tmem.alloc cols=128 -> t\n tmem.dealloc t cols=128 }}\n"
                       " warp 1 sched {{ tmem.relinquish }}\n}}\n",
                       mma_first);
  };
  auto first = run_text(late("compute cycles=500"), "b200");
  REQUIRE(first.outcome == Outcome::kUndefined);
  CHECK(title(first) == "alloc after relinquish");
  CHECK(first.diagnosis->warp == 0);
  CHECK_THAT(first.diagnosis->message, Catch::Contains("tmem.alloc after warp 1's `tmem.relinquish` at line 5 (cycle 0;") &&
                                           Catch::Contains("The relinquishing warp must wait for every alloc of the CTA"));
  auto own = run_text("kernel k warps=1 {\n warp 0 mma { tmem.relinquish\n tmem.alloc cols=128 -> t\n tmem.dealloc t cols=128 }\n}\n",
                      "b200");
  REQUIRE(own.outcome == Outcome::kUndefined);
  CHECK_THAT(own.diagnosis->message, Catch::Contains("after this warp's own `tmem.relinquish` at line 2"));
}

TEST_CASE("a barrier whose consecutive phases were completed by different warps gets a note naming both arrivals' ops",
          "[mbarrier][deadlock]") {
  // Count 1: warp 0's arrive completes phase 0 and warp 1's phase 1, unordered (as when two warps each arrive once per
  // iteration on a barrier counting one of them, e.g. a umma.commit aimed at the wrong barrier). One warp arriving twice
  // is no note.
  auto prog = [](int second) {
    return fmt::format(R"(
kernel k warps=3 {{
  mbarrier b count=1
  mbarrier turn count=1
  warp 0 a {{ elect {{ arrive b }}
             if {0} == 0 {{ compute cycles=1000
                          elect {{ arrive b }} }} }}
  warp 1 c {{ if {0} == 1 {{ compute cycles=1000
                          elect {{ arrive b }} }}
             if {0} == 2 {{ wait b parity=0
                          elect {{ arrive b }} }}
             if {0} == 3 {{ wait turn parity=0
                          elect {{ arrive b }} }} }}
  warp 2 w {{ if {0} < 2 {{ wait b parity=0
                          wait b parity=1 }}
             if {0} == 3 {{ wait b parity=0
                          elect {{ arrive turn }} }} }}
}}
)",
                       second);
  };
  auto same = run_text(prog(0));
  REQUIRE(same.outcome == Outcome::kFinished);
  CHECK(same.notes.empty());
  auto two = run_text(prog(1));
  REQUIRE(two.outcome == Outcome::kFinished);
  REQUIRE(two.notes.size() == 1);
  CHECK(two.notes[0].find("b of CTA 0: phases 0 and 1 completed back to back") != std::string::npos);
  CHECK(two.notes[0].find("(0 then 1: warp 0's `arrive b` at line 5, then warp 1's `arrive b` at line 9)") != std::string::npos);
  // Turns taken: warp 1 arrives after observing phase 0 itself, or through warp 2, which observed it before arriving on
  // `turn` (pingpong's warpgroups releasing a stage on alternate tiles). No note.
  for (int turns : {2, 3}) {
    INFO(turns);
    auto r = run_text(prog(turns));
    REQUIRE(r.outcome == Outcome::kFinished);
    CHECK(r.notes.empty());
  }
  // With the hazard checker off the order of the arrivals is not known: no note either.
  models::RunOptions off;
  off.hazards = false;
  auto unknown = run_text(prog(1), "h100-sxm", off);
  REQUIRE(unknown.outcome == Outcome::kFinished);
  CHECK(unknown.notes.empty());
}

TEST_CASE("the work budget counts CTA launches, and a CTA without roles exits at once", "[semantics][watchdog]") {
  // Each launch counts as kCtaLaunchOps ops of --max-ops, and at least kMinCtaBudget CTAs run: with a budget of 16 x
  // 70000 ops, 70000 CTAs that only exit (no op) run, and 70001 stop the run before the 70001st launch; a budget of 2
  // ops still runs 65536 CTAs.
  auto grid = [](int ctas, std::int64_t ops) {
    models::RunOptions o;
    o.max_ops = ops;
    return test::run_text(fmt::format("kernel k grid=({},1,1) warps=1 {{ warp 0 w {{ exit }} }}", ctas), "h100-sxm", o);
  };
  CHECK(grid(70000, models::kCtaLaunchOps * 70000).outcome == Outcome::kFinished);
  auto over = grid(70001, models::kCtaLaunchOps * 70000);
  REQUIRE(over.outcome == Outcome::kWatchdog);
  CHECK_THAT(over.watchdog_reason, Catch::Contains("--max-ops 1120000 reached: the grid launched 70000 CTAs by cycle") &&
                                       Catch::Contains("CTA launches have a budget of their own, one per 16 ops of --max-ops"));
  CHECK(grid(65536, 2).outcome == Outcome::kFinished);
  CHECK(grid(65537, 2).outcome == Outcome::kWatchdog);
  // A kernel without roles: its CTAs run nothing and finish (clusters too), not a deadlock of no warps.
  for (const char* k : {"kernel k warps=1 { }", "kernel k grid=(300,1,1) cluster=(2,1,1) warps=2 { mbarrier b count=1 }"}) {
    auto r = test::run_text(k);
    CHECK(r.outcome == Outcome::kFinished);
    CHECK(r.cycles == 0);
  }
}
