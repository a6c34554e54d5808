// The happens-before hazard checker (models/memory/hazards): each ordering rule on both sides, in small
// programs: the synchronised version finishes, the one without the synchronisation is a hazard.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace smpipe;
using models::Outcome;
using test::run_text;

namespace {
std::string title(const models::RunResult& r) { return r.diagnosis ? r.diagnosis->title : ""; }
bool hazard(const models::RunResult& r) { return r.outcome == Outcome::kUndefined && r.diagnosis && r.diagnosis->hazard; }
}  // namespace

TEST_CASE("hazards: two TMA boxes completing on one barrier fill one stage, on two barriers they race", "[hazards][tma]") {
  auto prog = [](const char* second_bar) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier full count=1
  mbarrier other count=1
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{
    elect {{
      arrive.expect_tx full tx=4K
      tma.load T box=(32, 64) at=(0, 0) dst=s bar=full
      expect_tx {0} tx=4K
      tma.load T box=(32, 64) at=(32, 0) dst=s bar={0}
    }}
    wait full parity=0
    ld.shared bytes=128 src=s
  }}
}}
)",
                       second_bar);
  };
  auto one = run_text(prog("full"));
  INFO((one.diagnosis ? one.diagnosis->message : std::string()));
  CHECK(one.outcome == Outcome::kFinished);
  auto two = run_text(prog("other"));
  CHECK(hazard(two));
  CHECK(title(two) == "unordered writes (WAW)");
  // Two ops: each named by its text.
  CHECK(two.diagnosis->message.find("while 'tma.load T box=(32, 64) at=(0, 0) dst=s bar=full' at line") != std::string::npos);
}

TEST_CASE("hazards: two issues of one op that race are told apart by their cycles", "[hazards][tma]") {
  // One load op issued twice into the same buffer, on two barriers, the second without waiting for the first's.
  auto r = run_text(R"(
kernel k warps=1 {
  mbarrier full[2] count=1
  smem s bytes=4K
  tensor T dtype=bf16 shape=(1024, 1024)
  warp 0 w {
    for i in 0..2 {
      elect {
        arrive.expect_tx full[i] tx=4K
        tma.load T box=(32, 64) at=(32 * i, 0) dst=s bar=full[i]
      }
    }
    wait full[0] parity=0
    wait full[1] parity=0
  }
}
)");
  REQUIRE(hazard(r));
  CHECK(title(r) == "unordered writes (WAW)");
  const std::string& m = r.diagnosis->message;
  CHECK(m.find("s is written by 'tma.load T box=(32, 64) at=(32 * i, 0) dst=s bar=full[i]' at line 10 (CTA 0 warp 0, w), issued "
               "at cycle ") != std::string::npos);
  // The two cycles: this issue's, then the earlier one's (smaller).
  auto number_after = [&](const std::string& words) -> long {
    std::size_t at = m.find(words);
    return at == std::string::npos ? -1 : std::stol(m.substr(at + words.size()));
  };
  long now = number_after("issued at cycle "), earlier = number_after("while its earlier issue at cycle ");
  CHECK(earlier >= 0);
  CHECK(now > earlier);
  CHECK(m.find(fmt::format("while its earlier issue at cycle {} may still write it", earlier)) != std::string::npos);
}

TEST_CASE("hazards: a TMA load is complete for a warp that waited on its barrier's phase, not before", "[hazards][tma]") {
  auto prog = [](bool wait) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count=1
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ arrive.expect_tx full tx=8K
                       tma.load T box=(64, 64) at=(0, 0) dst=s bar=full }} }}
  warp 1 c {{ {}
             sleep cycles=5000
             ld.shared bytes=128 src=s }}
}}
)",
                       wait ? "wait full parity=0" : "");
  };
  CHECK(run_text(prog(true)).outcome == Outcome::kFinished);
  auto r = run_text(prog(false));  // the load landed long before (5000 cycles), but nothing orders it
  CHECK(hazard(r));
  CHECK(title(r) == "read before the write is complete (RAW)");
}


TEST_CASE("hazards: a RAW after a wait whose phase completed without the load's bytes names the expect_tx", "[hazards][tma]") {
  // Two boxes of 8 KB signal `full`; the expect_tx counts EXPECT bytes. 16K: the phase waits for both. 8K: it completes
  // when the first lands, the reader's wait returns, and it reads the second box's buffer while that is in flight: the
  // report says the wait was there and the count is short. Without the wait: the usual advice (wait on the barrier).
  auto prog = [](const char* expect, bool wait) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count=1
  smem a bytes=8K
  smem b bytes=8K
  tensor T dtype=bf16 shape=(4096, 256)
  warp 0 p {{ elect {{ arrive.expect_tx full tx={}
                       tma.load T box=(64, 64) at=(0, 0) dst=a bar=full
                       tma.load T box=(64, 64) at=(2048, 0) dst=b bar=full }} }}
  warp 1 c {{ {}
             ld.shared bytes=128 src=b }}
}}
)",
                       expect, wait ? "wait full parity=0" : "sleep cycles=100");
  };
  CHECK(run_text(prog("16K", true)).outcome == Outcome::kFinished);
  auto shorter = run_text(prog("8K", true));
  REQUIRE(hazard(shorter));
  CHECK(title(shorter) == "read before the write is complete (RAW)");
  CHECK_THAT(shorter.diagnosis->message, Catch::Contains("warp 1 did wait on full, for phase 0, but that phase completed while this "
                                                         "write was still in flight") &&
                                             Catch::Contains("`arrive.expect_tx` counts fewer bytes"));
  auto unwaited = run_text(prog("16K", false));
  REQUIRE(hazard(unwaited));
  CHECK_THAT(unwaited.diagnosis->message, Catch::Contains("must wait on that barrier") && !Catch::Contains("did wait on"));
}
TEST_CASE("hazards: test_wait acquires only when it returns 1", "[hazards][mbarrier]") {
  auto prog = [](int spins) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count=1
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ arrive.expect_tx full tx=8K
                       tma.load T box=(64, 64) at=(0, 0) dst=s bar=full }} }}
  warp 1 c {{
    let done = 0
    let n = 0
    while done == 0 && n < {} {{
      test_wait full parity=0 -> done
      let n = n + 1
    }}
    sleep cycles=5000
    ld.shared bytes=128 src=s
  }}
}}
)",
                       spins);
  };
  CHECK(run_text(prog(1000000)).outcome == Outcome::kFinished);  // spins until it sees the phase
  CHECK(hazard(run_text(prog(1))));                               // one early test_wait (0): no order
}

TEST_CASE("hazards: named barriers order their participants, bar.arrive releases but does not acquire", "[hazards][named]") {
  auto prog = [](const char* reader_sync) {
    return fmt::format(R"(
kernel k warps=2 {{
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 w {{ st.shared bytes=128 dst=s
             fence.proxy.async
             bar.arrive 1 threads=64 }}
  warp 1 r {{ {} 1 threads=64
             sleep cycles=100
             elect {{ tma.store T box=(64, 64) at=(0, 0) src=s
                     tma.commit
                     tma.wait 0 read }}
             st.shared bytes=128 dst=s }}
}}
)",
                       reader_sync);
  };
  CHECK(run_text(prog("bar.sync")).outcome == Outcome::kFinished);
  // The writer releases, the storing warp must acquire: with bar.arrive it does not (and never waits).
  auto r = run_text(prog("bar.arrive"));
  CHECK(hazard(r));
  CHECK(title(r) == "read before the write is complete (RAW)");
}

TEST_CASE("hazards: a TMA store reads its source until a covering tma.wait, wait N leaves the newest N", "[hazards][tma]") {
  auto prog = [](int n) {
    return fmt::format(R"(
kernel k warps=1 {{
  smem s[2] bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 e {{
    elect {{
      tma.store T box=(64, 64) at=(0, 0) src=s[0]
      tma.commit
      tma.store T box=(64, 64) at=(0, 64) src=s[1]
      tma.commit
      tma.wait {} read
    }}
    st.shared bytes=128 dst=s[0]
    elect {{ tma.wait 0 read }}
  }}
}}
)",
                       n);
  };
  CHECK(run_text(prog(1)).outcome == Outcome::kFinished);  // the older group (s[0]) is covered
  auto r = run_text(prog(2));
  CHECK(hazard(r));
  CHECK(title(r) == "buffer overwritten while still read (WAR)");
}

TEST_CASE("hazards: cp.async copies complete by a covering wait or by cp.async.arrive on a waited barrier", "[hazards][cp.async]") {
  auto prog = [](const char* complete) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier b count=32
  smem s bytes=4K
  warp 0 w {{
    cp.async bytes=512 dst=s
    cp.async.commit
    {}
    ldmatrix bytes=512 src=s
  }}
}}
)",
                       complete);
  };
  CHECK(run_text(prog("cp.async.wait 0")).outcome == Outcome::kFinished);
  CHECK(run_text(prog("cp.async.arrive b noinc\n wait b parity=0")).outcome == Outcome::kFinished);
  auto own = run_text(prog("cp.async.wait 1"));  // the only group stays pending
  REQUIRE(hazard(own));
  CHECK_THAT(own.diagnosis->message, !Catch::Contains("covers its own copies only"));
  // The report names the wait whose N left the copy's group pending (line 8: `cp.async.wait 1`, its newest 1) ...
  CHECK_THAT(own.diagnosis->message, Catch::Contains("warp 0's latest 'cp.async.wait 1' (line 8, cycle") &&
                                         Catch::Contains("waits only for the groups older than its newest 1, and this copy's "
                                                         "group is among those"));
  // ... and a wait of N 0 before the copy's commit covers nothing of it: a wait covers committed groups only.
  auto uncommitted = run_text(R"(
kernel k warps=1 {
  smem s bytes=4K
  warp 0 w {
    cp.async bytes=512 dst=s
    cp.async.wait 0
    cp.async.commit
    ldmatrix bytes=512 src=s
  }
}
)");
  REQUIRE(hazard(uncommitted));
  CHECK_THAT(uncommitted.diagnosis->message, Catch::Contains("warp 0's latest 'cp.async.wait 0' (line 6, cycle") &&
                                                 Catch::Contains("but no `cp.async.commit` of warp 0 closed the copy's group "
                                                                 "before it") &&
                                                 !Catch::Contains("older than its newest"));
  // No wait after the copy: neither note.
  auto none = run_text(prog("sleep cycles=100000"));
  REQUIRE(hazard(none));
  CHECK_THAT(none.diagnosis->message, !Catch::Contains("latest 'cp.async.wait"));
  // Another warp's copies: its wait alone does not order them before this warp's read; the report asks for the barrier
  // after the wait (the copier reaches its wait only after the reader read, so the copy is still in flight).
  auto other = run_text(R"(
kernel k warps=2 {
  smem s bytes=4K
  warps 0..2 w {
    if warp == 1 {
      cp.async bytes=512 dst=s
      cp.async.commit
      compute cycles=500
      cp.async.wait 0
    } else {
      compute cycles=100
    }
    ldmatrix bytes=512 src=s
  }
}
)");
  REQUIRE(hazard(other));
  CHECK_THAT(other.diagnosis->message, Catch::Contains("warp 1's wait covers its own copies only, so a barrier both warps use "
                                                       "must then order it before warp 0's access (`bar.sync 0`"));
}

TEST_CASE("hazards: umma operands are read until its umma.commit's barrier completes", "[hazards][tcgen05]") {
  auto prog = [](bool wait) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier done count=1
  smem s bytes=32K
  warp 0 m {{
    tmem.alloc cols=256 -> t
    elect {{ umma m128n256k16 kind=f16 a=s b=s count=2
            umma.commit done }}
    {}
    st.shared bytes=128 dst=s
    tmem.relinquish
    tmem.dealloc t cols=256
  }}
}}
)",
                       wait ? "wait done parity=0" : "");
  };
  CHECK(run_text(prog(true), "b200").outcome == Outcome::kFinished);
  auto r = run_text(prog(false), "b200");
  CHECK(hazard(r));
  CHECK(title(r) == "buffer overwritten while still read (WAR)");
}

TEST_CASE("hazards: every later umma.commit also completes earlier umma operand reads", "[hazards][tcgen05]") {
  // tcgen05.commit tracks all the thread's earlier tcgen05 ops (PTX ISA): observing bar1 (the later commit)
  // orders both MMAs' reads; observing bar0 orders only the first one's.
  auto prog = [](const char* bar, const char* buf) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier bar0 count=1
  mbarrier bar1 count=1
  smem sA[2] bytes=16K
  warp 0 mma {{
    tmem.alloc cols=128 -> acc
    elect {{ umma m128n128k16 kind=f16 a=sA[0] b=sA[0] count=4 tmem=acc
            umma.commit bar0
            umma m128n128k16 kind=f16 a=sA[1] b=sA[1] count=4 tmem=acc
            umma.commit bar1 }}
    wait bar1 parity=0
    wait bar0 parity=0
    tmem.relinquish
    tmem.dealloc acc cols=128
  }}
  warp 1 epi {{
    wait {} parity=0
    st.shared bytes=16K dst={}
  }}
}}
)",
                       bar, buf);
  };
  for (const char* buf : {"sA[0]", "sA[1]"}) {
    auto r = run_text(prog("bar1", buf), "b200");
    INFO(buf << ": " << test::problem(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
  CHECK(run_text(prog("bar0", "sA[0]"), "b200").outcome == Outcome::kFinished);
  // bar0's commit came before the second MMA: it does not cover its read of sA[1].
  auto r = run_text(prog("bar0", "sA[1]"), "b200");
  REQUIRE(hazard(r));
  CHECK(title(r) == "buffer overwritten while still read (WAR)");
  CHECK(r.diagnosis->message.find("sA[1]") != std::string::npos);
  CHECK(r.diagnosis->message.find("umma.commit") != std::string::npos);
}

TEST_CASE("hazards: every later umma.commit also completes earlier tcgen05.cp source reads", "[hazards][tcgen05]") {
  auto prog = [](const char* bar, const char* buf) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier bar0 count=1
  mbarrier bar1 count=1
  smem sf[2] bytes=4K
  warp 0 mma {{
    elect {{ tmem.cp 128x256b src=sf[0]
            umma.commit bar0
            tmem.cp 128x256b src=sf[1]
            umma.commit bar1 }}
    wait bar0 parity=0
    wait bar1 parity=0
  }}
  warp 1 ld {{
    wait {} parity=0
    st.shared bytes=4K dst={}
  }}
}}
)",
                       bar, buf);
  };
  for (const char* buf : {"sf[0]", "sf[1]"}) {
    auto r = run_text(prog("bar1", buf), "b200");
    INFO(buf << ": " << test::problem(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
  auto r = run_text(prog("bar0", "sf[1]"), "b200");
  REQUIRE(hazard(r));
  CHECK(title(r) == "buffer overwritten while still read (WAR)");
  CHECK(r.diagnosis->message.find("sf[1]") != std::string::npos);
}

TEST_CASE("hazards: a pipeline whose commits free another stage is ordered by its later commits but one that commits "
          "before the MMA is not",
          "[hazards][tcgen05]") {
  // The MMA warp commits iteration k to empty[(k + 1) % 3] (not the stage it read). The producer's wait for
  // stage s at iteration k' observes the commit of k' - 4 on empty[s], which does not cover the MMA of k' - 3
  // that read the stage; but its previous wait observed a later commit, which does (each commit tracks all the
  // earlier MMAs): ordered. Committing before the MMA that reads the stage leaves the MMA of k' - 3 uncovered.
  auto prog = [](bool commit_first) {
    return fmt::format(R"(
param STAGES = 3
param KT = 9
kernel k grid=(1,1,1) warps=2 {{
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=1
  mbarrier acc_full count=1
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  warp 0 producer {{
    elect {{
      for k in 0..KT {{
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load bytes=16K dst=sA[s] bar=full[s]
        tma.load bytes=16K dst=sB[s] bar=full[s]
      }}
    }}
  }}
  warp 1 mma {{
    tmem.alloc cols=128 -> acc
    for k in 0..KT {{
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      elect {{
        {}
        umma m128n128k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=acc
        {}
      }}
    }}
    elect {{ umma.commit acc_full }}
    wait acc_full parity=0
    tmem.relinquish
    tmem.dealloc acc cols=128
  }}
}}
)",
                       commit_first ? "umma.commit empty[s]" : "", commit_first ? "" : "umma.commit empty[(k + 1) % STAGES]");
  };
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    models::RunOptions o;
    o.jitter_pct = 20;
    o.seed = seed;
    auto r = run_text(prog(false), "b200", o);
    INFO(test::problem(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
  auto r = run_text(prog(true), "b200");
  REQUIRE(hazard(r));
  CHECK(title(r) == "buffer overwritten while still read (WAR)");
  INFO(r.diagnosis->message);
  CHECK(r.diagnosis->message.find("sA[0] is overwritten") != std::string::npos);
}

TEST_CASE("hazards: cluster.sync orders the warps of the cluster", "[hazards][cluster]") {
  auto prog = [](const char* sync) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {{
  mbarrier full count=1
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ arrive.expect_tx full tx=8K
                       tma.load T box=(64, 64) at=(0, 0) dst=s bar=full }}
             wait full parity=0
             {} }}
  warp 1 c {{ {}
             ld.shared bytes=128 src=s }}
}}
)",
                       sync, sync);
  };
  CHECK(run_text(prog("cluster.sync")).outcome == Outcome::kFinished);
  CHECK(hazard(run_text(prog("sleep cycles=1"))));
}

TEST_CASE("hazards: accesses by threads to fragments of one buffer do not race each other", "[hazards][generic]") {
  // Four warps write their parts of sD and read them back with no barrier: the language names buffers,
  // not offsets, so generic accesses are only checked against the async proxy.
  const char* text = R"(
kernel k warps=4 {
  smem sD bytes=8K
  warps 0..4 e { st.shared bytes=2K dst=sD
                 ld.shared bytes=2K src=sD
                 st.shared bytes=2K dst=sD }
}
)";
  CHECK(run_text(text).outcome == Outcome::kFinished);
}

TEST_CASE("hazards: TMEM accumulators: read after the commit is observed, handed back after tmem.wait ld", "[hazards][tmem]") {
  // An MMA warp accumulates into columns 0..255 over k-blocks, each committed to empty[s] (which the MMA
  // warp never waits on), then commits acc_full; the epilogue reads the columns and hands them back. The MMA
  // warp frees the columns once the epilogue handed back the second tile (phase 1 of acc_empty).
  auto prog = [](const char* before_read, bool wait_before_arrive) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  warp 0 p {{
    for i in 0..8 {{
      let s = i % 2
      wait empty[s] parity=((i / 2) & 1) ^ 1
      elect {{ arrive.expect_tx full[s] tx=32K
              tma.load bytes=16K dst=sA[s] bar=full[s]
              tma.load bytes=16K dst=sB[s] bar=full[s] }}
    }}
  }}
  warp 1 mma {{
    tmem.alloc cols=256 -> base
    let kt = 0
    for t in 0..2 {{
      wait acc_empty parity=(t & 1) ^ 1
      for k in 0..4 {{
        let s = kt % 2
        wait full[s] parity=(kt / 2) & 1
        elect {{ umma m128n256k16 kind=f16 a=sA[s] b=sB[s] tmem=base
                umma.commit empty[s] }}
        let kt = kt + 1
      }}
      elect {{ umma.commit acc_full }}
    }}
    wait acc_empty parity=1
    tmem.dealloc base cols=256
  }}
  warpgroup 1 epi {{
    for t in 0..2 {{
      {}
      tmem.ld 32x32b.x32 tmem=96
      {}
      arrive acc_empty
      tmem.wait ld
      sleep cycles=2000
    }}
  }}
}}
)",
                       before_read, wait_before_arrive ? "tmem.wait ld" : "");
  };
  auto ok = run_text(prog("wait acc_full parity=t & 1", true), "b200");
  INFO(test::problem(ok));
  CHECK(ok.outcome == Outcome::kFinished);
  // Reading before acc_full is observed: the MMAs may still be writing (the epilogue starts late enough
  // for the first MMA to have begun).
  auto early = run_text(prog("sleep cycles=3000", true), "b200");
  REQUIRE(hazard(early));
  CHECK(title(early) == "read before the write is complete (RAW)");
  CHECK(early.diagnosis->message.find("the TMEM chunk of columns 96..103") != std::string::npos);
  // (the MMA's accumulator is N = 256 columns: the report says which, not only the chunk)
  CHECK_THAT(early.diagnosis->message, Catch::Contains("writes TMEM columns 0..255)"));
  INFO(early.diagnosis->message);
  CHECK(early.diagnosis->message.find("umma.commit") != std::string::npos);
  // Handing the stage back before the load finished: the next tile's MMA overwrites what it may still read.
  auto late = run_text(prog("wait acc_full parity=t & 1", false), "b200");
  CHECK(hazard(late));
  CHECK(title(late) == "buffer overwritten while still read (WAR)");
  CHECK(late.diagnosis->message.find("tmem.wait ld") != std::string::npos);
  CHECK(late.diagnosis->message.find("nothing had written") == std::string::npos);  // it read the first tile's result
  // Reading early, before the first MMA wrote anything: the report is the MMA's WAR, and it says that the read came
  // before the first write (the epilogue must wait on acc_full, not only hand the columns back).
  auto first = run_text(prog("sleep cycles=200", true), "b200");  // after the alloc, before the first load landed
  INFO(test::problem(first));
  REQUIRE(hazard(first));
  CHECK(title(first) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(first.diagnosis->message,
             Catch::Contains("Note: nothing had written the TMEM chunk of columns 96..103 when warp") &&
                 Catch::Contains("on the barrier the MMA's umma.commit arrives on, before its tmem.ld"));
}

TEST_CASE("hazards: an accumulator read after a wait whose phase no later commit completed says which op did",
          "[hazards][tmem]") {
  // Two tiles of four k-blocks; the epilogue waits on acc_full each tile. Sound: `umma.commit acc_full` after the tile's
  // last umma. Broken: the commit issued before that umma (it does not track it), or acc_full completed by a plain
  // arrive with the tile's commit sent elsewhere. Either way the epilogue did wait: the report names the op that
  // completed the phase it observed, not a missing wait.
  auto prog = [](const char* before, const char* after) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128
  mbarrier other count=1
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  warp 0 producer {{
    elect {{
      for i in 0..8 {{
        let s = i % 2
        wait empty[s] parity=((i / 2) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load bytes=16K dst=sA[s] bar=full[s]
        tma.load bytes=16K dst=sB[s] bar=full[s]
      }}
    }}
  }}
  warp 1 mma {{
    tmem.alloc cols=256 -> acc
    tmem.relinquish
    bar.arrive 1 threads=160
    let i = 0
    for t in 0..2 {{
      wait acc_empty parity=(t & 1) ^ 1
      for k in 0..4 {{
        let s = i % 2
        wait full[s] parity=(i / 2) & 1
        elect {{
          {}
          umma m128n256k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=acc
          umma.commit empty[s]
        }}
        let i = i + 1
      }}
      elect {{
        {}
      }}
    }}
    wait acc_empty parity=1
    tmem.dealloc acc cols=256
  }}
  warpgroup 1 epilogue {{
    bar.sync 1 threads=160
    for t in 0..2 {{
      wait acc_full parity=t & 1
      tmem.ld 32x32b.x128 tmem=0
      tmem.ld 32x32b.x128 tmem=128
      tmem.wait ld
      arrive acc_empty
    }}
  }}
}}
)",
                       before, after);
  };
  auto ok = run_text(prog("let z = 0", "umma.commit acc_full"), "b200");
  INFO((ok.diagnosis ? ok.diagnosis->message : std::string()));
  CHECK(ok.outcome == Outcome::kFinished);
  auto early = run_text(prog("if k == 3 { umma.commit acc_full }", "umma.commit other"), "b200");
  REQUIRE(hazard(early));
  CHECK(title(early) == "read before the write is complete (RAW)");
  CHECK_THAT(early.diagnosis->message, Catch::Contains("warp 4 did wait on acc_full, whose latest phase was completed by "
                                                       "'umma.commit acc_full' at line 32 (warp 1), but warp 1 issued that "
                                                       "commit before this umma (line 33)"));
  auto plain = run_text(prog("let z = 0", "umma.commit other\n        arrive acc_full"), "b200");
  REQUIRE(hazard(plain));
  CHECK_THAT(plain.diagnosis->message, Catch::Contains("completed by the plain 'arrive acc_full' at line 40 (warp 1)") &&
                                           Catch::Contains("(its commits: 'umma.commit empty[s]' at line 34, 'umma.commit "
                                                           "other' at line 39, none on a barrier warp 4 waited on last)"));
}

TEST_CASE("hazards: an accumulator read after a wait on a barrier another warp completes keeps the generic words",
          "[hazards][tmem]") {
  // The epilogue waits on `tile`, which a scheduler warp completes with a plain arrive, and never on acc_full: the
  // missing wait is on the accumulator's barrier, and the report asks for it (not for a commit to `tile`).
  auto r = run_text(R"(
kernel k warps=8 {
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128
  mbarrier tile count=1
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  warp 0 producer {
    elect {
      for i in 0..4 {
        let s = i % 2
        wait empty[s] parity=((i / 2) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load bytes=16K dst=sA[s] bar=full[s]
        tma.load bytes=16K dst=sB[s] bar=full[s]
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=256 -> acc
    tmem.relinquish
    bar.arrive 1 threads=160
    wait acc_empty parity=1
    for k in 0..4 {
      let s = k % 2
      wait full[s] parity=(k / 2) & 1
      elect {
        umma m128n256k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=acc
        umma.commit empty[s]
      }
    }
    elect { umma.commit acc_full }
    wait acc_empty parity=0
    tmem.dealloc acc cols=256
  }
  warp 2 sched {
    wait full[1] parity=0
    elect { arrive tile }
  }
  warpgroup 1 epilogue {
    bar.sync 1 threads=160
    wait tile parity=0
    tmem.ld 32x32b.x128 tmem=0
    tmem.ld 32x32b.x128 tmem=128
    tmem.wait ld
    arrive acc_empty
  }
}
)",
                    "b200");
  REQUIRE(hazard(r));
  CHECK_THAT(r.diagnosis->message, !Catch::Contains("instead of the arrive") &&
                                       Catch::Contains("wait on that barrier's phase (the accumulator's 'full' barrier)"));
}

TEST_CASE("hazards: an accumulator write partly superseded still completes with later commits", "[hazards][tmem]") {
  // The first MMA writes columns 0..255, the second only 0..127: the first write's columns 128..255 are still
  // its own, and the commit to acc_full (after both) orders them too. Reading them before acc_full is observed
  // is a RAW.
  auto prog = [](const char* before_read) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier full count=1
  mbarrier empty count=1
  mbarrier acc_full count=1
  mbarrier read count=128
  smem sA bytes=16K
  smem sB bytes=16K
  warp 0 mma {{
    tmem.alloc cols=256 -> base
    elect {{ arrive.expect_tx full tx=32K
            tma.load bytes=16K dst=sA bar=full
            tma.load bytes=16K dst=sB bar=full }}
    wait full parity=0
    elect {{ umma m128n256k16 kind=f16 a=sA b=sB tmem=base
            umma.commit empty
            umma m128n128k16 kind=f16 a=sA b=sB tmem=base
            umma.commit acc_full }}
    wait empty parity=0
    sleep cycles=5000
    wait acc_full parity=0
    wait read parity=0
    tmem.dealloc base cols=256
  }}
  warpgroup 1 epi {{
    {}
    tmem.ld 32x32b.x32 tmem=160
    tmem.wait ld
    arrive read
  }}
}}
)",
                       before_read);
  };
  auto ok = run_text(prog("wait acc_full parity=0"), "b200");
  INFO(test::problem(ok));
  CHECK(ok.outcome == Outcome::kFinished);
  auto early = run_text(prog("sleep cycles=3000"), "b200");
  REQUIRE(hazard(early));
  CHECK(title(early) == "read before the write is complete (RAW)");
  CHECK(early.diagnosis->message.find("the TMEM chunk of columns 160..167") != std::string::npos);
}

TEST_CASE("hazards: TMEM columns outside the accumulator's are not in conflict, without tmem= nothing is checked",
          "[hazards][tmem]") {
  auto prog = [](const char* ld) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count=1
  mbarrier done count=1
  mbarrier read count=32
  smem sA bytes=16K
  smem sB bytes=16K
  warp 0 mma {{
    tmem.alloc cols=512 -> base
    elect {{ arrive.expect_tx full tx=32K
            tma.load bytes=16K dst=sA bar=full
            tma.load bytes=16K dst=sB bar=full }}
    wait full parity=0
    elect {{ umma m128n128k16 kind=f16 a=sA b=sB tmem=base + 256
            umma.commit done }}
    wait done parity=0
    wait read parity=0
    tmem.dealloc base cols=512
  }}
  warp 1 epi {{ sleep cycles=1000
               {}
               tmem.wait ld
               arrive read }}
}}
)",
                       ld);
  };
  CHECK(run_text(prog("tmem.ld 32x32b.x32 tmem=224"), "b200").outcome == Outcome::kFinished);  // columns 224..255
  CHECK(hazard(run_text(prog("tmem.ld 32x32b.x32 tmem=256"), "b200")));
  CHECK(hazard(run_text(prog("tmem.ld 16x256b.x4 tmem=352"), "b200")));  // 16x256b.x4 spans 32 columns: 352..383
  CHECK(run_text(prog("tmem.ld 32x32b.x32"), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("hazards: plain shared-memory accesses of different warps conflict in a buffer declared whole or handed off",
          "[hazards]") {
  auto prog = [](const char* decl, bool sync) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier b count=32
  smem v bytes=16 {}
  warp 0 w {{ st.shared bytes=16 dst=v
             {} }}
  warp 1 r {{ {}
             ld.shared bytes=16 src=v }}
}}
)",
                       decl, sync ? "arrive b" : "", sync ? "wait b parity=0" : "sleep cycles=100");
  };
  // Warp 1 reads what only warp 0 writes (it writes none of v itself): a hand-off, checked without `whole` too.
  auto handed = run_text(prog("", false));
  CHECK(title(handed) == "read before the write is complete (RAW)");
  CHECK(run_text(prog("", true)).outcome == Outcome::kFinished);
  // Each warp writes its own fragment and reads it back: fragments of a tile, not checked against each other.
  CHECK(run_text(R"(
kernel k warps=2 {
  smem v bytes=16
  warp 0 w { st.shared bytes=8 dst=v
             ld.shared bytes=8 src=v }
  warp 1 r { sleep cycles=100
             st.shared bytes=8 dst=v
             ld.shared bytes=8 src=v }
}
)").outcome == Outcome::kFinished);
  auto raw = run_text(prog("whole", false));
  CHECK(hazard(raw));
  CHECK(title(raw) == "read before the write is complete (RAW)");
  CHECK(run_text(prog("whole", true)).outcome == Outcome::kFinished);
  CHECK(test::compile_text("kernel k warps=1 { smem v[2] bytes=16 whole\n warp 0 w { } }").smems[0].whole);
}


TEST_CASE("hazards: TMEM is tracked in 8-column chunks, warps w and w + 4 share TMEM lanes", "[hazards][tmem]") {
  // Two accumulator stages of N = 48 columns packed at 0 and 48, correctly synchronised.
  const char* packed = R"(
param TILES = 6
param KT = 2
param N = 48
kernel k grid=(1,1,1) warps=8 {
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  mbarrier acc_full[2] count=1
  mbarrier acc_empty[2] count=128
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  warp 0 producer {
    for i in 0..TILES * KT {
      let s = i % 2
      wait empty[s] parity=((i / 2) & 1) ^ 1
      elect { arrive.expect_tx full[s] tx=32K
              tma.load bytes=16K dst=sA[s] bar=full[s]
              tma.load bytes=16K dst=sB[s] bar=full[s] }
    }
  }
  warp 1 mma {
    tmem.alloc cols=128 -> base
    let kt = 0
    for t in 0..TILES {
      let a = t % 2
      wait acc_empty[a] parity=((t / 2) & 1) ^ 1
      for k in 0..KT {
        let s = kt % 2
        wait full[s] parity=(kt / 2) & 1
        elect { umma m=128 n=N k=16 kind=f16 count=1 a=sA[s] b=sB[s] tmem=base + a * N
                umma.commit empty[s] }
        let kt = kt + 1
      }
      elect { umma.commit acc_full[a] }
    }
    for a in 0..2 { wait acc_empty[a] parity=((TILES - a + 1) / 2 + 1) & 1 }
    tmem.dealloc base cols=128
  }
  warpgroup 1 epilogue {
    for t in 0..TILES {
      let a = t % 2
      wait acc_full[a] parity=(t / 2) & 1
      tmem.ld 32x32b.x16 tmem=a * N
      tmem.ld 32x32b.x32 tmem=a * N + 16
      tmem.wait ld
      arrive acc_empty[a]
      compute cycles=2000
    }
  }
}
)";
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    models::RunOptions o;
    o.jitter_pct = 20;
    o.seed = seed;
    auto r = run_text(packed, "b200", o);
    INFO(test::problem(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
  // Warps 4 and 8 both reach lanes 0..31: their unsynchronised stores to the same columns race.
  const char* lanes = R"(
kernel k grid=(1,1,1) warps=12 {
  warp 0 alloc {
    tmem.alloc cols=32 -> a
    bar.sync 0
    bar.sync 0
    tmem.dealloc a cols=32
  }
  warpgroups 1..3 st {
    bar.sync 0
    tmem.st 32x32b.x32 tmem=0
    tmem.wait st
    bar.sync 0
  }
}
)";
  auto r = run_text(lanes, "b200");
  CHECK(hazard(r));
  CHECK(title(r) == "unordered writes (WAW)");
}

TEST_CASE("hazards off (--no-hazards): the same run, nothing looked for, a warning", "[hazards]") {
  // Every built-in model that runs race-free gives the same result with the checker off, but for the warning.
  for (const auto& [name, params, machine] : std::vector<std::tuple<std::string, isa::ParamOverrides, std::string>>{
           {"sm90/gemm_tma_ws_cooperative", {{"M", 1024}, {"N", 1024}, {"K", 1024}, {"CLUSTER_M", 2}}, "h100-sxm"},
           {"sm90/gemm_tma_ws_pingpong", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, "h100-sxm"},
           {"sm100/gemm_blockscaled_nvfp4", {{"CTA_GROUP", 2}, {"C_VOID", 0}}, "b200"},
           {"sm80/b2b_gemm_smem_accumulator", {{"M", 4096}}, "h100-sxm"},
           {"examples/global_sync", {}, "h100-sxm"}}) {
    INFO(name);
    auto src = isa::load_source(models::kernels_dir() + "/" + name + ".pipe");
    auto p = isa::compile(isa::parse(src), params, "", models::predefined_constants(models::load_machine(machine)));
    models::RunOptions on, off;
    on.jitter_pct = off.jitter_pct = 10;
    on.seed = off.seed = 3;
    off.hazards = false;
    auto a = models::simulate(p, models::load_machine(machine), on);
    auto b = models::simulate(p, models::load_machine(machine), off);
    REQUIRE(a.outcome == Outcome::kFinished);
    CHECK(b.outcome == Outcome::kFinished);
    CHECK(a.cycles == b.cycles);
    auto ja = models::to_json(a, p), jb = models::to_json(b, p);
    REQUIRE(jb["warnings"].size() == ja["warnings"].size() + 1);
    CHECK(jb["warnings"].back().get<std::string>().find("data-hazard checks were off") != std::string::npos);
    ja.erase("warnings");
    jb.erase("warnings");
    CHECK(ja == jb);
  }
  // A race the checker reports runs to its end with the checker off.
  const char* racy = R"(
kernel k warps=2 {
  mbarrier b count=32
  smem v bytes=16 whole
  warp 0 w { st.shared bytes=16 dst=v }
  warp 1 r { sleep cycles=100
             ld.shared bytes=16 src=v }
}
)";
  CHECK(hazard(run_text(racy)));
  models::RunOptions off;
  off.hazards = false;
  auto r = run_text(racy, "h100-sxm", off);
  CHECK(r.outcome == Outcome::kFinished);
  REQUIRE(r.warnings.size() == 1);
}

namespace {
// A ring of 4 stages that two consumer warpgroups read with wgmmas and release on empty[s] (count `count`), with
// `release` after each k-block's commit and `tail` after the loop.
std::string two_consumer_ring(int count, const std::string& release, const std::string& tail) {
  return fmt::format(R"(
kernel m warps=12 {{
  mbarrier full[4] count=1
  mbarrier empty[4] count={}
  smem sA[4] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 producer {{
    elect {{
      for k in 0..16 {{
        let s = k % 4
        wait empty[s] parity=((k / 4) & 1) ^ 1
        arrive.expect_tx full[s] tx=16K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
      }}
    }}
  }}
  warpgroups 1..3 consumer {{
    for k in 0..16 {{
      let s = k % 4
      wait full[s] parity=(k / 4) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sA[s] count=4
      wgmma.commit
      {}
    }}
    {}
  }}
}}
)",
                     count, release, tail);
}
}  // namespace

TEST_CASE("hazards: a WAR after a release phase completed without the reader's arrivals names the count", "[hazards][mbarrier]") {
  // Two consumer warpgroups release each stage (256 arrivals). With count 256 the ring is sound; with 128 one warpgroup's
  // arrivals complete the phase the producer waits for, and it refills a stage the other still reads: the report says
  // the reader's role releases there too and the phase completed with other warps alone. Releasing before the
  // wgmma.wait (the count right) keeps the usual advice.
  auto prog = [](int count, bool early) {
    return two_consumer_ring(count, early ? "arrive empty[s]\n      wgmma.wait 0" : "wgmma.wait 0\n      arrive empty[s]", "");
  };
  CHECK(run_text(prog(256, false)).outcome == Outcome::kFinished);
  auto low = run_text(prog(128, false));
  REQUIRE(hazard(low));
  CHECK(title(low) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(low.diagnosis->message, Catch::Contains("releases the buffer on empty[0] too, but the phase of empty[0] that warp 0 "
                                                     "waited on last (phase 0) completed with the arrivals of warps") &&
                                         Catch::Contains("(count 128)") && !Catch::Contains("not before it"));
  auto early = run_text(prog(256, true));
  REQUIRE(hazard(early));
  CHECK_THAT(early.diagnosis->message, Catch::Contains("after that wait, not before it") && !Catch::Contains("(count"));
}

TEST_CASE("hazards: a WAR with the read still in flight names the count when no reader warp arrived in the phase",
          "[hazards][mbarrier]") {
  // The same ring with CUTLASS's release of the previous stage after `wgmma.wait 1`: with count 128 the producer refills a
  // stage while the other warpgroup has not reached the wait that covers its read (the read is still in flight), and
  // none of that warpgroup's warps arrived in the phase: the count is named, not a missing wait. Releasing the stage
  // being read before its wait (the count right) is the missing wait, and the report keeps saying so.
  auto prog = [](int count, bool early) {
    return two_consumer_ring(count,
                             early ? "arrive empty[s]\n      wgmma.wait 1"
                                   : "if k > 0 {\n        wgmma.wait 1\n        arrive empty[(k - 1) % 4]\n      }",
                             "wgmma.wait 0\n    arrive empty[3]");
  };
  CHECK(run_text(prog(256, false)).outcome == Outcome::kFinished);
  auto low = run_text(prog(128, false));
  REQUIRE(hazard(low));
  CHECK(title(low) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(low.diagnosis->message, Catch::Contains("read was still in flight (before its covering wait); warp") &&
                                         Catch::Contains("completed with the arrivals of warps") && Catch::Contains("(count 128)"));
  auto early = run_text(prog(256, true));
  REQUIRE(hazard(early));
  CHECK_THAT(early.diagnosis->message, Catch::Contains("`wgmma.wait N` that covers it must come before the barrier arrive") &&
                                           !Catch::Contains("(count"));
}

TEST_CASE("hazards: a WAR across a CTA pair names the leader's count when the peer's release came in a later phase",
          "[hazards][tmem][cluster]") {
  // A 2-SM GEMM: both CTAs' epilogues hand the accumulator back on the leader's acc_empty (the peer with a remote
  // arrive). With count 256 the MMA waits for both; with 128 the leader's own four warps complete the phase, the MMA
  // (whose latest wait is on a stage, not on acc_empty) overwrites the peer's TMEM while the peer still reads, and the
  // report names the phase it observed and its arrivers. Warps of the peer are told apart from the leader's.
  auto prog = [](int count) {
    return fmt::format(R"(
kernel k grid=(2,1,1) cluster=(2,1,1) warps=8 {{
  mbarrier full[2]  count=1
  mbarrier empty[2] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count={}
  mbarrier dealloc_ok count=1
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  warp 0 producer {{
    elect {{
      for i in 0..12 {{
        let s = i % 2
        wait empty[s] parity=((i / 2) & 1) ^ 1
        if cluster_rank == 0 {{ arrive.expect_tx full[s] tx=64K }}
        tma.load bytes=16K dst=sA[s] bar=full[s] bar_cta=0
        tma.load bytes=16K dst=sB[s] bar=full[s] bar_cta=0
      }}
    }}
  }}
  warp 1 mma {{
    tmem.alloc cols=256 cta_group=2 -> acc
    tmem.relinquish cta_group=2
    bar.arrive 1 threads=160
    if cluster_rank == 0 {{
      let i = 0
      for t in 0..3 {{
        wait acc_empty parity=(t & 1) ^ 1
        for k in 0..4 {{
          let s = i % 2
          wait full[s] parity=(i / 2) & 1
          elect {{
            umma m256n256k16 kind=f16 cta_group=2 a=sA[s] b=sB[s] count=4 tmem=acc
            umma.commit empty[s] multicast=0x3
          }}
          let i = i + 1
        }}
        elect {{ umma.commit acc_full multicast=0x3 }}
      }}
      wait acc_empty parity=0
      elect {{ arrive dealloc_ok cta=1 }}
    }} else {{
      wait dealloc_ok parity=0
    }}
    tmem.dealloc acc cols=256 cta_group=2
  }}
  warpgroup 1 epilogue {{
    bar.sync 1 threads=160
    for t in 0..3 {{
      wait acc_full parity=t & 1
      tmem.ld 32x32b.x128 tmem=0
      tmem.ld 32x32b.x128 tmem=128
      tmem.wait ld
      arrive acc_empty cta=0
      compute cycles=300
    }}
  }}
}}
)",
                       count);
  };
  auto ok = run_text(prog(256), "b200");
  INFO((ok.diagnosis ? ok.diagnosis->message : std::string()));
  CHECK(ok.outcome == Outcome::kFinished);
  auto low = run_text(prog(128), "b200");
  REQUIRE(hazard(low));
  CHECK(title(low) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(low.diagnosis->message, Catch::Contains("releases the buffer on acc_empty of CTA 0 too, but the phase of acc_empty "
                                                     "of CTA 0 that warp 1 observed (phase 0) completed with the arrivals of "
                                                     "warps 4,5,6,7 alone (count 128)") &&
                                         Catch::Contains("the peer CTA's remote arrivals included"));
}

TEST_CASE("hazards: a read after the reader released the buffer and the writer refilled it says so", "[hazards][tma]") {
  // The consumer observes phase 0, then reads after (or before) its release; the producer refills the buffer as phase 1.
  auto prog = [](bool read_first) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full count=1
  mbarrier empty count=32
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ for i in 0..2 {{
                        wait empty parity=(i & 1) ^ 1
                        arrive.expect_tx full tx=8K
                        tma.load T box=(64, 64) at=(0, 0) dst=s bar=full }} }} }}
  warp 1 c {{ wait full parity=0
             {}
             wait full parity=1
             arrive empty }}
}}
)",
                       read_first ? "ld.shared bytes=128 src=s\n arrive empty" : "arrive empty\n sleep cycles=5000\n ld.shared bytes=128 src=s");
  };
  CHECK(run_text(prog(true)).outcome == Outcome::kFinished);
  auto late = run_text(prog(false));
  REQUIRE(hazard(late));
  CHECK(title(late) == "read before the write is complete (RAW)");
  CHECK_THAT(late.diagnosis->message, Catch::Contains("it completed phase 1 of full, and warp 1 observed phase 0 last") &&
                                          Catch::Contains("must read before it releases the buffer"));
}

TEST_CASE("hazards: a RAW whose write completes on another element of the barrier the reader waited on says so", "[hazards][tma]") {
  // The second box of each stage names bar=full[(s + 1) % 2] instead of full[s]: the reader's wait on full[s] does not
  // cover it, and the report names both barriers. With full[s] the ring is sound.
  auto prog = [](const char* bar) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full[2] count=1
  mbarrier empty[2] count=32
  smem a[2] bytes=8K
  smem b[2] bytes=8K
  tensor T dtype=bf16 shape=(4096, 256)
  warp 0 p {{ elect {{ for k in 0..4 {{
                        let s = k % 2
                        wait empty[s] parity=((k / 2) & 1) ^ 1
                        arrive.expect_tx full[s] tx=16K
                        tma.load T box=(64, 64) at=(0, 0) dst=a[s] bar=full[s]
                        tma.load T box=(64, 64) at=(64, 0) dst=b[s] bar={} }} }} }}
  warp 1 c {{ for k in 0..4 {{
               let s = k % 2
               wait full[s] parity=(k / 2) & 1
               ld.shared bytes=128 src=b[s]
               arrive empty[s] }} }}
}}
)",
                       bar);
  };
  CHECK(run_text(prog("full[s]")).outcome == Outcome::kFinished);
  auto wrong = run_text(prog("full[(s + 1) % 2]"));
  REQUIRE(hazard(wrong));
  CHECK(title(wrong) == "read before the write is complete (RAW)");
  CHECK_THAT(wrong.diagnosis->message, Catch::Contains("Warp 1's latest wait was on full[") &&
                                           Catch::Contains("does it name the stage's barrier?"));
}

TEST_CASE("hazards: a multicast refill of a peer's stage its consumers did not release says the release must reach this CTA",
          "[hazards][cluster]") {
  // 2x1 cluster, B multicast to both CTAs. Releasing each stage on both CTAs' empty barriers (count 2) is sound; only
  // on its own (count 1) lets CTA 0 refill CTA 1's sB while CTA 1 still reads it: the report names CTA 1's buffer and
  // says CTA 0 cannot wait on CTA 1's barrier, CTA 1's consumers must release to CTA 0.
  auto prog = [](bool both) {
    return fmt::format(R"(
kernel mc grid=(2,1,1) cluster=(2,1,1) warps=8 {{
  mbarrier full[4] count=1
  mbarrier empty[4] count={}
  smem sA[4] bytes=16K
  smem sB[4] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {{
    elect {{
      for k in 0..16 {{
        let s = k % 4
        wait empty[s] parity=((k / 4) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load A box=(128, 64) at=(cta_x * 128, k * 64) dst=sA[s] bar=full[s]
        tma.load B box=(64, 64) at=(cluster_rank * 64, k * 64) dst=sB[s] bar=full[s] multicast=0x3
      }}
      for k in 16..20 {{ wait empty[k % 4] parity=((k / 4) & 1) ^ 1 }}
    }}
  }}
  warpgroup 1 consumer {{
    for k in 0..16 {{
      let s = k % 4
      wait full[s] parity=(k / 4) & 1
      compute cycles=200 * cluster_rank
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
      wgmma.commit
      wgmma.wait 0
      if warp_in_role == 0 {{ elect {{ {} }} }}
    }}
  }}
}}
)",
                       both ? 2 : 1, both ? "arrive empty[s] cta=0\n arrive empty[s] cta=1" : "arrive empty[s]");
  };
  auto ok = run_text(prog(true));
  INFO(test::problem(ok));
  CHECK(ok.outcome == Outcome::kFinished);
  auto local = run_text(prog(false));
  REQUIRE(hazard(local));
  // CTA 0's producer waited on its own empty[0], whose phase completed with rank 0's arrivals alone: CTA 1's consumers,
  // which read the multicast slice, never release it.
  CHECK_THAT(local.diagnosis->message, Catch::Contains("of CTA 1 is") &&
                                           Catch::Contains("that phase completed with the arrivals of cluster rank(s) 0 alone "
                                                           "(count 1), none of rank 1 (CTA 1), whose warps use sB[0]") &&
                                           Catch::Contains("rank 1 arrived on it in none of its recent phases") &&
                                           Catch::Contains("`arrive EMPTY cta=R` for each such rank R") && !Catch::Contains("with parity"));
}

TEST_CASE("hazards: a race across a named barrier whose thread count splits the warps into two uses has a note", "[hazards][named]") {
  // Two warpgroups write their part of sD, fence, sync on bar 1, then warp 4 stores sD. threads=256: one use, sound.
  // threads=128: each warpgroup completes a use alone, warp 4 stores before warpgroup 2 wrote: the report notes that
  // warp 4's use of bar 1 gathered warps 4-7 alone while warp 8's role uses bar 1 too.
  auto prog = [](int threads) {
    return fmt::format(R"(
kernel epi warps=12 {{
  smem sD bytes=16K
  tensor D dtype=bf16 shape=(1024, 1024)
  warpgroups 1..3 consumer {{
    compute cycles=100 + 400 * (warpgroup - 1)
    st.shared bytes=2K dst=sD
    fence.proxy.async
    bar.sync 1 threads={0}
    if warp == 4 {{ elect {{ tma.store D box=(128, 64) at=(0, 0) src=sD
                            tma.commit
                            tma.wait 0 read }} }}
    bar.sync 1 threads={0}
  }}
}}
)",
                       threads);
  };
  CHECK(run_text(prog(256)).outcome == Outcome::kFinished);
  auto split = run_text(prog(128));
  REQUIRE(hazard(split));
  CHECK_THAT(split.diagnosis->message, Catch::Contains("Note: the latest use of bar 1 that warp 4 waited on gathered warps 4,5,6,7 "
                                                       "alone (128 threads), while warp 8's role uses bar 1 too"));
  // Each warpgroup on a barrier of its own (the id picked by the warpgroup): the same race, and no note, since warp 8's
  // code never reaches bar 1 (its role's code has the op, in the other warpgroup's branch).
  auto own = run_text(R"(
kernel epi warps=12 {
  smem sD bytes=16K
  tensor D dtype=bf16 shape=(1024, 1024)
  warpgroups 1..3 consumer {
    compute cycles=100 + 400 * (warpgroup - 1)
    st.shared bytes=2K dst=sD
    fence.proxy.async
    if warpgroup == 1 { bar.sync 1 threads=128 } else { bar.sync 2 threads=128 }
    if warp == 4 { elect { tma.store D box=(128, 64) at=(0, 0) src=sD
                           tma.commit
                           tma.wait 0 read } }
    if warpgroup == 1 { bar.sync 1 threads=128 } else { bar.sync 2 threads=128 }
  }
}
)");
  REQUIRE(hazard(own));
  CHECK_THAT(own.diagnosis->message, !Catch::Contains("Note: the latest use of bar"));
}

TEST_CASE("hazards: a CTA exits only after its TMA loads were observed and its TMA stores' reads waited for", "[hazards][tma]") {
  // A store committed but not waited for, and a load whose barrier phase no warp observed, are undefined behaviour at
  // the exit whatever the timing (the sleep lets both finish here); with the wait they are fine.
  auto store = [](const char* tail) {
    return fmt::format(R"(
kernel k warps=1 {{
  smem s bytes=8K
  tensor D dtype=bf16 shape=(256, 256)
  warp 0 e {{ st.shared bytes=128 dst=s
             fence.proxy.async
             elect {{ tma.store D box=(64, 64) at=(0, 0) src=s
                     tma.commit
                     {} }}
             sleep cycles=20000 }}
}}
)",
                       tail);
  };
  CHECK(run_text(store("tma.wait 0 read")).outcome == Outcome::kFinished);
  auto unwaited = run_text(store(""));
  REQUIRE(unwaited.outcome == Outcome::kUndefined);
  CHECK(title(unwaited) == "CTA exited before its async op was observed");
  CHECK(unwaited.diagnosis->loc.line == 7);
  CHECK_THAT(unwaited.diagnosis->message, Catch::Contains("may still read s: no `tma.wait N read`"));
  auto load = [](const char* tail) {
    return fmt::format(R"(
kernel k warps=1 {{
  mbarrier full count=1
  smem s bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ arrive.expect_tx full tx=8K
                       tma.load T box=(64, 64) at=(0, 0) dst=s bar=full }}
             sleep cycles=20000
             {} }}
}}
)",
                       tail);
  };
  CHECK(run_text(load("wait full parity=0")).outcome == Outcome::kFinished);
  auto unobserved = run_text(load(""));
  REQUIRE(unobserved.outcome == Outcome::kUndefined);
  CHECK(title(unobserved) == "CTA exited before its async op was observed");
  CHECK_THAT(unobserved.diagnosis->message, Catch::Contains("no warp of it observed the completion of 'tma.load T"));
  CHECK_THAT(unobserved.diagnosis->message, Catch::Contains("No warp of CTA 0 waited on a phase of full"));
}

TEST_CASE("hazards: a load nobody observed before the exit names the roles' trip counts", "[hazards][tma]") {
  // The producer fills 6 stages of a 2-stage ring; the consumer waits on `waits` of them and releases each. With fewer
  // waits it leaves its loop while the producer still fills: the report counts the phases of full that completed and
  // those the consumer observed, rather than asking for a producer tail.
  auto prog = [](int waits, int sleep = 20000) {
    return fmt::format(R"(
kernel k warps=2 {{
  mbarrier full[2] count=1
  mbarrier empty[2] count=32
  smem s[2] bytes=8K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ elect {{ for k in 0..6 {{
                         wait empty[k % 2] parity=((k / 2) & 1) ^ 1
                         arrive.expect_tx full[k % 2] tx=8K
                         tma.load T box=(64, 64) at=(0, 0) dst=s[k % 2] bar=full[k % 2] }} }} }}
  warp 1 c {{ for k in 0..{} {{
                wait full[k % 2] parity=(k / 2) & 1
                arrive empty[k % 2] }}
              sleep cycles={} }}
}}
)",
                       waits, sleep);
  };
  CHECK(run_text(prog(6)).outcome == Outcome::kFinished);
  auto early = run_text(prog(4));
  REQUIRE(early.outcome == Outcome::kUndefined);
  CHECK(title(early) == "CTA exited before its async op was observed");
  CHECK_THAT(early.diagnosis->message, Catch::Contains("full completed 6 phases in CTA 0 before the exit, and the warps that wait "
                                                       "on it observed 4 of them (warps 1)"));
  CHECK_THAT(early.diagnosis->message, Catch::Contains("The roles ran different numbers of iterations"));
  // The consumer exits at once: the CTA is gone before the last loads land, which names the same counts.
  auto gone = run_text(prog(4, 1));
  REQUIRE(gone.outcome == Outcome::kUndefined);
  CHECK(title(gone) == "signal to an exited CTA");
  CHECK_THAT(gone.diagnosis->message, Catch::Contains("the warps that wait on it observed 4 of them (warps 1)"));
  CHECK(run_text(prog(6, 1)).outcome == Outcome::kFinished);
}

TEST_CASE("hazards: two CTAs of a cluster that both multicast a try_cancel: the report names both issuers", "[hazards][clc]") {
  // Every CTA arms its own barrier for 16 bytes; with `every` both CTAs also issue the multicast, so each barrier
  // gets two responses per phase and the second counts toward the next: a race on the response, whose cause is the
  // second issuer, not a short expect_tx.
  auto prog = [](bool every) {
    return fmt::format(R"(
kernel k grid=(8,1,1) cluster=(2,1,1) warps=1 {{
  mbarrier full count=1
  mbarrier empty count=2
  warp 0 s {{
    let it = 0
    let tile = cta
    while tile >= 0 {{
      if cluster_rank == 0 {{ wait empty parity=(it & 1) ^ 1 }}
      elect {{ arrive.expect_tx full tx=16
              if cluster_rank == 0 || {} {{ clc.try_cancel bar=full multicast }} }}
      wait full parity=it & 1
      clc.query bar=full -> tile
      elect {{ arrive empty cta=0 }}
      let it = it + 1
    }}
    if cluster_rank == 0 {{ wait empty parity=(it & 1) ^ 1 }}
  }}
}}
)",
                       every ? 1 : 0);
  };
  CHECK(run_text(prog(false), "b200").outcome == Outcome::kFinished);
  auto r = run_text(prog(true), "b200");
  REQUIRE(hazard(r));
  CHECK(title(r) == "read before the write is complete (RAW)");
  CHECK_THAT(r.diagnosis->message, Catch::Contains("receives the multicast try_cancel responses of both CTA") &&
                                       Catch::Contains("(line 11)") && Catch::Contains("Only one CTA of the cluster issues") &&
                                       !Catch::Contains("counts fewer bytes"));
}

TEST_CASE("hazards: a consumer whose first wait passes a fresh barrier at once (parity 1) is told so", "[hazards][mbarrier]") {
  // The consumer waits on full with the producer's parity ((k & 1) ^ 1): on a barrier that completed no phase, parity 1
  // names the phase before phase 0, which counts as complete, so its wgmma reads sA before the first load lands. With
  // parity k & 1 the ring is sound.
  auto prog = [](int flip) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier full count=1
  mbarrier empty count=128
  smem sA bytes=16K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p {{ for k in 0..4 {{
               wait empty parity=(k & 1) ^ 1
               elect {{ arrive.expect_tx full tx=16K
                       tma.load T box=(64, 128) at=(0, 0) dst=sA bar=full }} }} }}
  warpgroup 1 c {{ for k in 0..4 {{
                    wait full parity=(k & 1) ^ {}
                    wgmma.fence
                    wgmma m64n256k16 dtype=bf16 a=sA b=sA
                    wgmma.commit
                    wgmma.wait 0
                    arrive empty }} }}
}}
)",
                       flip);
  };
  CHECK(run_text(prog(0)).outcome == Outcome::kFinished);
  auto r = run_text(prog(1));
  REQUIRE(hazard(r));
  CHECK_THAT(r.diagnosis->message, Catch::Contains("`wait full parity=(k & 1) ^ 1` at line 12 returned at once on full, which "
                                                   "had completed no phase") &&
                                       Catch::Contains("A consumer's first wait on a full barrier uses parity 0"));
  // A parity-1 wait that passed at once on a barrier the write does not complete on (the reader's own store ring, say)
  // is not named: the reader simply never waited on full.
  auto other = run_text(R"(
kernel k warps=2 {
  mbarrier full count=1
  mbarrier ring count=1
  smem sA bytes=16K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 p { elect { arrive.expect_tx full tx=16K
                     tma.load T box=(64, 128) at=(0, 0) dst=sA bar=full } }
  warp 1 c { sleep cycles=100
             wait ring parity=1
             ld.shared bytes=128 src=sA
             wait full parity=0 }
}
)");
  REQUIRE(hazard(other));
  CHECK_THAT(other.diagnosis->message, !Catch::Contains("returned at once") && Catch::Contains("full"));
}

TEST_CASE("hazards: a read before the first write, ordered before it, is reported when its wait passed a fresh barrier at once",
          "[hazards][mbarrier]") {
  // A ring of 3 stages whose phase flips every 2 k-blocks on both sides ((k >> 1) & 1, right for 2 or 4 stages): at
  // k = 2 the consumer waits on full[2] with parity 1, which returns at once on the fresh barrier, and its wgmma reads
  // sA[2] before any load wrote it; the producer waits on empty[2] for phase 0, which the consumer's release after that
  // read completes, so its load comes ordered after the read: no race, but the read took what sA[2] held before the
  // kernel wrote it. With (k / 3) & 1 the ring is sound.
  auto prog = [](const char* parity) {
    return fmt::format(R"(
kernel k warps=8 {{
  mbarrier full[3] count=1
  mbarrier empty[3] count=1
  smem sA[3] bytes=16K
  tensor T dtype=bf16 shape=(4096, 256)
  warp 0 p {{ for k in 0..6 {{
               let s = k % 3
               wait empty[s] parity=({}) ^ 1
               elect {{ arrive.expect_tx full[s] tx=16K
                       tma.load T box=(64, 128) at=(k * 64, 0) dst=sA[s] bar=full[s] }} }} }}
  warpgroup 1 c {{ for k in 0..6 {{
                    let s = k % 3
                    wait full[s] parity={}
                    wgmma.fence
                    wgmma m64n128k16 dtype=bf16 a=sA[s] b=sA[s]
                    wgmma.commit
                    wgmma.wait 0
                    if warp_in_role == 0 {{ elect {{ arrive empty[s] }} }} }} }}
}}
)",
                       parity, parity);
  };
  CHECK(run_text(prog("(k / 3) & 1")).outcome == Outcome::kFinished);
  auto r = run_text(prog("(k >> 1) & 1"));
  REQUIRE(hazard(r));
  CHECK(title(r) == "read before the first write");
  CHECK(r.diagnosis->loc.line == 16);  // the wgmma that read, not the load
  CHECK_THAT(r.diagnosis->message, Catch::Contains("read sA[2] at cycle") && Catch::Contains("before anything had written it") &&
                                       Catch::Contains("'tma.load T box=(64, 128) at=(k * 64, 0) dst=sA[s] bar=full[s]' at line 11") &&
                                       Catch::Contains("`wait full[s] parity=(k >> 1) & 1` at line 14 returned at once on full[2]"));
  // A read of a buffer nothing wrote whose warp did not pass a wait at once (it reads first, then releases the buffer to
  // the TMA write, ordered after it): not reported (the language cannot tell such a read from one of data the model
  // leaves out).
  auto plain = run_text(R"(
kernel k warps=2 {
  mbarrier done count=1
  mbarrier full count=1
  smem sA bytes=16K
  tensor T dtype=bf16 shape=(256, 256)
  warp 1 c { ld.shared bytes=128 src=sA
             elect { arrive done } }
  warp 0 p { wait done parity=0
             elect { arrive.expect_tx full tx=16K
                     tma.load T box=(64, 128) at=(0, 0) dst=sA bar=full }
             wait full parity=0 }
}
)");
  CHECK(plain.outcome == Outcome::kFinished);
}

TEST_CASE("hazards: hand-offs that share one buffer, each pair with its own barriers, do not conflict", "[hazards]") {
  // (1) Two softmax warpgroups hand their halves of one sScale to the correction warpgroup, each through its own full
  // and empty barriers: a read is checked against the writers that handed it its data only (they were ordered before it
  // and before no earlier read of its warp), not against the other half's writer. (2) Warp i hands warp i + 4 a value
  // through one buffer, each pair with its own named barriers. (3) A buffer used for a hand-off, then filled by a TMA
  // load whose data each warp reads and overwrites in its own part: the TMA write ends the hand-off.
  const char* programs[] = {R"(param ROWS = 4
kernel k grid=(1,1,1) warps=12 {
  mbarrier full0 count=128
  mbarrier full1 count=128
  mbarrier empty0 count=128
  mbarrier empty1 count=128
  smem sScale bytes=1K
  warpgroup 0 softmax0 {
    for j in 0..ROWS {
      if j > 0 { wait empty0 parity=(j - 1) & 1 }
      compute cycles=300
      st.shared bytes=4 dst=sScale
      arrive full0
    }
  }
  warpgroup 1 softmax1 {
    for j in 0..ROWS {
      if j > 0 { wait empty1 parity=(j - 1) & 1 }
      compute cycles=450
      st.shared bytes=4 dst=sScale
      arrive full1
    }
  }
  warpgroup 2 correction {
    for j in 0..ROWS {
      wait full0 parity=j & 1
      ld.shared bytes=4 src=sScale
      arrive empty0
      wait full1 parity=j & 1
      ld.shared bytes=4 src=sScale
      arrive empty1
    }
  }
}
)",
                            R"(param ROUNDS = 4
kernel k grid=(1,1,1) warps=8 {
  smem xchg bytes=512
  warpgroup 0 producer {
    for r in 0..ROUNDS {
      if r > 0 { bar.sync 5 + warp threads=64 }
      compute cycles=100 + warp * 137
      st.shared bytes=16 dst=xchg
      bar.arrive 1 + warp threads=64
    }
  }
  warpgroup 1 consumer {
    for r in 0..ROUNDS {
      bar.sync 1 + warp - 4 threads=64
      ld.shared bytes=16 src=xchg
      bar.arrive 5 + warp - 4 threads=64
      compute cycles=50
    }
  }
}
)",
                            R"(kernel k grid=(1,1,1) warps=2 {
  mbarrier full count=1
  smem sBuf bytes=8K
  tensor C dtype=f32 shape=(64, 32)
  warps 0..2 w {
    if warp == 0 {
      st.shared bytes=4 dst=sBuf
      fence.proxy.async
    }
    bar.sync 0
    if warp == 1 { ld.shared bytes=4 src=sBuf }
    bar.sync 0
    if warp == 0 {
      elect {
        arrive.expect_tx full tx=8K
        tma.load tensor=C box=(32, 64) at=(0, 0) dst=sBuf bar=full
      }
    }
    wait full parity=0
    compute cycles=10 + warp * 2000
    ld.shared bytes=4K src=sBuf
    st.shared bytes=4K dst=sBuf
  }
}
)"};
  for (const char* text : programs) {
    auto r = run_text(text);
    INFO(text);
    INFO(title(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
}
