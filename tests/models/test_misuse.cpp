// Diagnoses of pipeline misuses whose first reports told the wrong story (a red team's bug programs, rebuilt): each
// is reported with its cause and fix, and its fixed twin (FIXED = 1) runs clean.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace smpipe;
using models::Outcome;
using test::run_text;

namespace {
std::string message(const models::RunResult& r) { return r.diagnosis ? r.diagnosis->message : std::string(); }
std::string title(const models::RunResult& r) { return r.diagnosis ? r.diagnosis->title : std::string(); }
std::string with(const char* prelude, const char* body) { return std::string(prelude) + body; }

// FA3-style K and V rings; the consumer releases V's stage on K's empty barrier.
const char* kKv = R"(param STAGES = 2
param NBLK = 8
const BK = 128 * 64 * 2
kernel fa3 grid=(1,1,1) warps=8 {
  mbarrier full_k[STAGES] count=1
  mbarrier full_v[STAGES] count=1
  mbarrier empty_k[STAGES] count=128
  mbarrier empty_v[STAGES] count=128
  smem sK[STAGES] bytes=BK
  smem sV[STAGES] bytes=BK
  tensor K dtype=bf16 shape=(8192, 64)
  tensor V dtype=bf16 shape=(8192, 64)

  warp 0 producer {
    elect {
      for n in 0..NBLK {
        let s = n % STAGES
        let ph = ((n / STAGES) & 1) ^ 1
        wait empty_k[s] parity=ph
        arrive.expect_tx full_k[s] tx=BK
        tma.load K box=(128, 64) at=(n * 128, 0) dst=sK[s] bar=full_k[s] swizzle=128
        wait empty_v[s] parity=ph
        arrive.expect_tx full_v[s] tx=BK
        tma.load V box=(128, 64) at=(n * 128, 0) dst=sV[s] bar=full_v[s] swizzle=128
      }
    }
  }

  warpgroup 1 consumer {
    for n in 0..NBLK {
      let s = n % STAGES
      let ph = (n / STAGES) & 1
      wait full_k[s] parity=ph
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 b=sK[s] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty_k[s]
      compute cycles=100
      wait full_v[s] parity=ph
      wgmma.fence
      wgmma m64n64k16 dtype=bf16 b=sV[s] count=8
      wgmma.commit
      wgmma.wait 0
      if FIXED { arrive empty_v[s] } else { arrive empty_k[s] }
    }
  }
}
)";
// A 2x2 cluster (A multicast along y, B along x) whose empty count covers two releasing CTAs, not three.
const char* kMulticastCount = R"(param STAGES = 2
param KT = 8
const TM = 128
const TN = 128
const TK = 64
const TX = (TM + TN) * TK * 2
kernel gemm grid=(2,2,1) cluster=(2,2,1) warps=8 {
  pipeline ml PipelineTmaAsync stages=STAGES consumers=128 tx=TX empty_count=(1 - FIXED) * 2
  smem sA[STAGES] bytes=TM * TK * 2
  smem sB[STAGES] bytes=TN * TK * 2
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)

  warp 0 producer {
    cluster.sync
    let cm = cluster_rank % 2
    let cn = cluster_rank / 2
    let mask_a = (1 << cm) | (1 << (cm + 2))        # same cm: A rows shared along the cluster's y
    let mask_b = (1 << (cn * 2)) | (1 << (cn * 2 + 1))  # same cn: B shared along x
    elect {
      for k in 0..KT {
        let s = k % STAGES
        producer_acquire ml k
        tma.load A box=(TM / 2, TK) at=(cm * TM + cn * (TM / 2), k * TK) dst=sA[s] bar=ml.full[s] multicast=mask_a swizzle=128
        tma.load B box=(TN / 2, TK) at=(cn * TN + cm * (TN / 2), k * TK) dst=sB[s] bar=ml.full[s] multicast=mask_b swizzle=128
      }
      producer_tail ml KT
    }
  }

  warpgroup 1 consumer {
    cluster.sync
    for k in 0..KT {
      let s = k % STAGES
      consumer_wait ml k
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=8
      wgmma.commit
      wgmma.wait 0
      consumer_release ml k
    }
  }
}
)";
// A ReuseSmemC epilogue that releases the C slot after reading C, before writing D into it.
const char* kReuseC = R"(param SC = 2
param SUB = 8
const EB = 64 * 32 * 2
kernel epi grid=(1,1,1) warps=8 {
  pipeline epi PipelineTransactionAsync stages=SC producers=32 consumers=128 tx=EB
  smem sC[SC] bytes=EB
  tensor C dtype=bf16 shape=(4096, 4096)
  tensor D dtype=bf16 shape=(4096, 4096)

  warp 0 epilogue_load {
    for j in 0..SUB {
      producer_acquire epi j
      elect {
        producer_expect_tx epi j
        tma.load C box=(64, 32) at=(0, j * 32) dst=sC[j % SC] bar=epi.full[j % SC]
      }
      producer_commit epi j
    }
    producer_tail epi SUB
  }

  warpgroup 1 consumer {
    for j in 0..SUB {
      consumer_wait epi j
      ld.shared bytes=EB / 4 src=sC[j % SC]
      if FIXED == 0 { consumer_release epi j }
      compute cycles=50
      bar.sync 1 threads=128          # every warp has read C before any writes D over it
      st.shared bytes=EB / 4 dst=sC[j % SC]
      fence.proxy.async
      bar.sync 1 threads=128
      if warp == 4 {
        elect {
          tma.store D box=(64, 32) at=(0, j * 32) src=sC[j % SC]
          tma.commit
          tma.wait 0 read
        }
      }
      bar.sync 1 threads=128
      if FIXED { consumer_release epi j }
    }
    if warp == 4 { elect { tma.wait 0 } }
  }
}
)";
// A 2x2 cluster whose consumers compute their release ranks with cm and cn swapped.
const char* kSwapped = R"(param STAGES = 2
param KT = 8
const TM = 128
const TN = 128
const TK = 64
const TX = (TM + TN) * TK * 2
kernel gemm grid=(2,2,1) cluster=(2,2,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=3
  smem sA[STAGES] bytes=TM * TK * 2
  smem sB[STAGES] bytes=TN * TK * 2
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)

  warp 0 producer {
    cluster.sync
    let cm = cluster_rank % 2
    let cn = cluster_rank / 2
    let mask_a = (1 << cm) | (1 << (cm + 2))
    let mask_b = (1 << (cn * 2)) | (1 << (cn * 2 + 1))
    elect {
      for k in 0..KT {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=TX
        tma.load A box=(TM / 2, TK) at=(cm * TM + cn * (TM / 2), k * TK) dst=sA[s] bar=full[s] multicast=mask_a swizzle=128
        tma.load B box=(TN / 2, TK) at=(cn * TN + cm * (TN / 2), k * TK) dst=sB[s] bar=full[s] multicast=mask_b swizzle=128
      }
      for k in KT..KT + STAGES {      # producer tail
        wait empty[k % STAGES] parity=((k / STAGES) & 1) ^ 1
      }
    }
  }

  warpgroup 1 consumer {
    cluster.sync
    let cm = cluster_rank % 2
    let cn = cluster_rank / 2
    if FIXED == 0 {
      let t = cm
      let cm = cn
      let cn = t
    }
    for k in 0..KT {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=8
      wgmma.commit
      wgmma.wait 0
      if warp == 4 {
        elect {
          arrive empty[s] cta=cm                 # same cm, y = 0
          arrive empty[s] cta=cm + 2             # same cm, y = 1
          if cm == 0 { arrive empty[s] cta=1 + 2 * cn } else { arrive empty[s] cta=2 * cn }   # same cn, the other x
        }
      }
    }
  }
}
)";
// An sm80 multistage ring whose refill writes the stage being read (SYNC: with the barrier the WAR advice suggested).
const char* kRefill = R"(param STAGES = 3
param KTILES = 8
kernel multistage grid=(1,1,1) warps=4 {
  smem sA[STAGES] bytes=4K
  smem sB[STAGES] bytes=4K
  warps 0..4 mma {
    for k in 0..STAGES - 1 {
      cp.async bytes=1K dst=sA[k]
      cp.async bytes=1K dst=sB[k]
      cp.async.commit
    }
    cp.async.wait STAGES - 2
    bar.sync 0
    for k in 0..KTILES {
      let s = k % STAGES
      let next = (k + STAGES - 1) % STAGES
      if FIXED == 0 { let next = s }
      for kk in 0..2 {
        ldmatrix bytes=512 src=sA[s]
        ldmatrix bytes=512 src=sB[s]
        mma.sync m16n8k16 dtype=f16 count=8
      }
      if SYNC { bar.sync 0 }
      if k + STAGES - 1 < KTILES {
        cp.async bytes=1K dst=sA[next]
        cp.async bytes=1K dst=sB[next]
      }
      cp.async.commit
      cp.async.wait STAGES - 2
      bar.sync 0
    }
  }
}
)";
}  // namespace

TEST_CASE("misuse: two ops of a role arrive on one barrier, the sibling pipeline's barrier never: both named", "[misuse][mbarrier]") {
  auto bug = run_text(with("param FIXED = 0\n", kKv));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "arrive before the previous phase was observed");
  CHECK_THAT(message(bug), Catch::Contains("arrives on empty_k[1] in phase 1 through `arrive empty_k[s]` at line 46") &&
                               Catch::Contains("the latest through another op, `arrive empty_k[s]` at line 39") &&
                               Catch::Contains("two ops of the role arrive on this barrier") &&
                               Catch::Contains("empty_v is waited on (`wait empty_v[s] parity=ph` at line 23) but no op a "
                                               "warp reaches arrives on it: does `arrive empty_k[s]` (line 46) mean empty_v?") &&
                               !Catch::Contains("wrong parity"));
  CHECK(run_text(with("param FIXED = 1\n", kKv)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a multicast stage's empty count below the CTAs that release it: the WAW names the count", "[misuse][cluster]") {
  auto bug = run_text(with("param FIXED = 0\n", kMulticastCount));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "unordered writes (WAW)");
  CHECK_THAT(message(bug), Catch::Contains("waited last on ml.empty[0] (phase 0), and that phase completed with the arrivals of "
                                           "cluster rank(s) 0,1 alone (count 2), none of rank 3 (CTA 3), whose warps use sA[0]") &&
                               Catch::Contains("rank 3 does release it, later. More CTAs arrive on ml.empty per phase than its count") &&
                               !Catch::Contains("cannot wait on another CTA's barrier"));
  CHECK(run_text(with("param FIXED = 1\n", kMulticastCount)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: release ranks that go to the wrong CTAs: the WAW says the buffer's CTA never released", "[misuse][cluster]") {
  auto bug = run_text(with("param FIXED = 0\n", kSwapped));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "unordered writes (WAW)");
  CHECK_THAT(message(bug), Catch::Contains("that phase completed with the arrivals of cluster rank(s) 0,2,3 alone (count 3), none "
                                           "of rank 1 (CTA 1)") &&
                               Catch::Contains("rank 1 arrived on it in none of its recent phases: its warps do not release "
                                               "empty[0]") &&
                               !Catch::Contains("wait on full[0] with parity 0 first"));
  CHECK(run_text(with("param FIXED = 1\n", kSwapped)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a release before the buffer's last use is named, not 'nothing orders'", "[misuse][epilogue]") {
  auto bug = run_text(with("param FIXED = 0\n", kReuseC));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "unordered writes (WAW)");
  CHECK_THAT(message(bug), Catch::Contains("warp 4 did release the buffer: it arrived on epi.empty[0] in the phase warp 0 "
                                           "waited for (phase 0), but before its access at line 30") &&
                               !Catch::Contains("nothing orders"));
  CHECK(run_text(with("param FIXED = 1\n", kReuseC)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a cp.async refill of the stage being read is a ring index error, and a barrier does not hide it",
          "[misuse][cp.async]") {
  auto bug = run_text(with("param FIXED = 0\nparam SYNC = 0\n", kRefill));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(bug), Catch::Contains("warp 0 itself read sA[0] with that op") &&
                               Catch::Contains("the refill writes the stage this k-block reads") && !Catch::Contains("must arrive on a barrier"));
  // The barrier the old advice asked for: the refills still skip a stage, read and never written.
  auto hidden = run_text(with("param FIXED = 0\nparam SYNC = 1\n", kRefill));
  INFO(message(hidden));
  REQUIRE(hidden.outcome == Outcome::kUndefined);
  CHECK(title(hidden) == "read of unwritten shared memory");
  CHECK_THAT(message(hidden), Catch::Contains("reads sA[2] at cycle") &&
                                  Catch::Contains("Writes reached sA[0], sA[1] only, and sA[0], sA[1] came round again") &&
                                  Catch::Contains("the ring's writes skip sA[2]"));
  CHECK(run_text(with("param FIXED = 1\nparam SYNC = 0\n", kRefill)).outcome == Outcome::kFinished);
  CHECK(run_text(with("param FIXED = 1\nparam SYNC = 1\n", kRefill)).outcome == Outcome::kFinished);
  // Fewer k-tiles than stages, where CUTLASS's sm80 mainloop reads the next stage's fragments after the last k-tile
  // (never written, never used): no stage came round, so no hazard (the sm80 back-to-back GEMM's GEMM1 does this: its
  // 2 k-tiles of 3 stages; tests/models/test_hazards.cpp runs it with the checker on).
  auto speculative = run_text(R"(
kernel next grid=(1,1,1) warps=4 {
  smem sB[3] bytes=4K
  warps 0..4 w {
    for k in 0..2 {
      cp.async bytes=1K dst=sB[k]
      cp.async.commit
    }
    cp.async.wait 0
    bar.sync 0
    for k in 0..2 {
      ldmatrix bytes=512 src=sB[k]
      ldmatrix bytes=512 src=sB[k + 1]
    }
  }
}
)");
  INFO(message(speculative));
  CHECK(speculative.outcome == Outcome::kFinished);
  // The same reads after a stage came round (refilled after it was read): the never-written stage is reported.
  auto turned = run_text(R"(
kernel next grid=(1,1,1) warps=4 {
  smem sB[3] bytes=4K
  warps 0..4 w {
    for k in 0..2 {
      cp.async bytes=1K dst=sB[k]
      cp.async.commit
    }
    cp.async.wait 0
    bar.sync 0
    ldmatrix bytes=512 src=sB[0]
    bar.sync 0
    cp.async bytes=1K dst=sB[0]
    cp.async.commit
    cp.async.wait 0
    bar.sync 0
    ldmatrix bytes=512 src=sB[2]
  }
}
)");
  INFO(message(turned));
  CHECK(title(turned) == "read of unwritten shared memory");
  CHECK_THAT(message(turned), Catch::Contains("reads sB[2]") && Catch::Contains("Writes reached sB[0], sB[1] only, and sB[0] came round"));
}
