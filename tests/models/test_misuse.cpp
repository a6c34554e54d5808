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
// A mixed-input transform warpgroup converts B with st.shared and fences after its arrive instead of before.
const char* kFenceAfterArrive = R"(param STAGES = 2
param KT = 8
kernel k grid=(1,1,1) warps=12 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  mbarrier conv_full[STAGES] count=128
  mbarrier conv_empty[STAGES] count=1
  smem sA[STAGES] bytes=16K
  smem sBq[STAGES] bytes=4K
  smem sBc[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=u8 shape=(4096, 2048)
  warp 0 producer {
    elect {
      for k in 0..KT {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=20K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s] swizzle=128
        tma.load B box=(128, 32) at=(0, k * 32) dst=sBq[s] bar=full[s] swizzle=32
      }
    }
  }
  warpgroup 1 transform {
    for k in 0..KT {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wait conv_empty[s] parity=((k / STAGES) & 1) ^ 1
      ld.shared bytes=1K src=sBq[s]
      compute cycles=60
      st.shared bytes=4K dst=sBc[s]
      if FIXED == 1 { fence.proxy.async }
      arrive conv_full[s]
      if FIXED == 0 { fence.proxy.async }
    }
  }
  warpgroup 2 mma {
    for k in 0..KT {
      let s = k % STAGES
      wait conv_full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sBc[s] count=8
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
      if warp_in_role == 0 { elect { arrive conv_empty[s] } }
    }
  }
}
)";
// A named-barrier ring whose copier only arrives (bar.arrive) on the barrier it should wait on.
const char* kArriveOnly = R"(param KT = 16
kernel k grid=(1,1,1) warps=5 {
  smem sA[2] bytes=8K
  warp 0 copier {
    for k in 0..KT {
      let s = k % 2
      if k >= 2 {
        if FIXED == 1 { bar.sync 3 + s threads=160 }
        if FIXED == 0 { bar.arrive 3 + s threads=160 }
      }
      cp.async bytes=8K dst=sA[s]
      cp.async.commit
      cp.async.wait 0
      bar.arrive 1 + s threads=160
    }
  }
  warps 1..5 math {
    for k in 0..KT {
      let s = k % 2
      bar.sync 1 + s threads=160
      ldmatrix bytes=2K src=sA[s]
      compute cycles=200
      if k + 2 < KT { bar.arrive 3 + s threads=160 }
    }
  }
}
)";
// A consumer writes scratch into a stage with st.shared and releases it, unfenced, to a TMA refill.
const char* kGenericThenTma = R"(param STAGES = 2
param KT = 8
kernel k grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=4
  smem sK[STAGES] bytes=16K
  tensor K dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    elect {
      for k in 0..KT {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=16K
        tma.load K box=(128, 64) at=(k * 128, 0) dst=sK[s] bar=full[s] swizzle=128
      }
    }
  }
  warpgroup 1 consumer {
    for k in 0..KT {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      ld.shared bytes=4K src=sK[s]
      compute cycles=100
      st.shared bytes=512 dst=sK[s]
      bar.sync 1 threads=128
      ld.shared bytes=512 src=sK[s]
      bar.sync 1 threads=128
      if FIXED == 1 { fence.proxy.async }
      elect { arrive empty[s] }
    }
  }
}
)";
// An sm100 MMA warp that commits to the accumulator's full barrier inside the k-loop.
const char* kCommitInLoop = R"(param STAGES = 4
param KT = 4
param TILES = 4
kernel k grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=32K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    elect {
      for t in 0..TILES {
        for k in 0..KT {
          let s = g % STAGES
          wait empty[s] parity=((g / STAGES) & 1) ^ 1
          arrive.expect_tx full[s] tx=48K
          tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s] swizzle=128
          tma.load B box=(256, 64) at=(0, k * 64) dst=sB[s] bar=full[s] swizzle=128
          let g = g + 1
        }
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=256 -> tmem
    bar.arrive 6 threads=160
    let g = 0
    for t in 0..TILES {
      wait acc_empty parity=(t & 1) ^ 1
      for k in 0..KT {
        let s = g % STAGES
        wait full[s] parity=(g / STAGES) & 1
        elect {
          umma m128n256k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tmem
          umma.commit empty[s]
          if FIXED == 0 { umma.commit acc_full }
        }
        let g = g + 1
      }
      if FIXED == 1 { elect { umma.commit acc_full } }
    }
    tmem.relinquish
    wait acc_empty parity=(TILES & 1) ^ 1
    tmem.dealloc tmem cols=256
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    for t in 0..TILES {
      wait acc_full parity=t & 1
      for n in 0..4 { tmem.ld 32x32b.x64 tmem=n * 64 }
      tmem.wait ld
      arrive acc_empty
      compute cycles=300
    }
  }
}
)";
// An sm100 MMA warp that commits a stage to its empty barrier before the umma that reads it.
const char* kCommitBeforeUmma = R"(param STAGES = 4
param KT = 4
param TILES = 4
kernel k grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=32K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    elect {
      for t in 0..TILES {
        for k in 0..KT {
          let s = g % STAGES
          wait empty[s] parity=((g / STAGES) & 1) ^ 1
          arrive.expect_tx full[s] tx=48K
          tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s] swizzle=128
          tma.load B box=(256, 64) at=(0, k * 64) dst=sB[s] bar=full[s] swizzle=128
          let g = g + 1
        }
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=256 -> tmem
    bar.arrive 6 threads=160
    let g = 0
    for t in 0..TILES {
      wait acc_empty parity=(t & 1) ^ 1
      for k in 0..KT {
        let s = g % STAGES
        wait full[s] parity=(g / STAGES) & 1
        elect {
          if FIXED == 0 { umma.commit empty[s] }
          umma m128n256k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tmem
          if FIXED == 1 { umma.commit empty[s] }
        }
        let g = g + 1
      }
      elect { umma.commit acc_full }
    }
    tmem.relinquish
    wait acc_empty parity=(TILES & 1) ^ 1
    tmem.dealloc tmem cols=256
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    for t in 0..TILES {
      wait acc_full parity=t & 1
      for n in 0..4 { tmem.ld 32x32b.x64 tmem=n * 64 }
      tmem.wait ld
      arrive acc_empty
      compute cycles=300
    }
  }
}
)";
// A 2-SM pair whose peer epilogue releases its own acc_empty instead of the leader's.
const char* kPeerReleasesOwn = R"(param STAGES = 4
param KT = 4
param TILES = 4
kernel k grid=(2,1,1) cluster=(2,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=1
  mbarrier acc_full count=1
  mbarrier acc_empty count=128 + 128 * FIXED
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    elect {
      for t in 0..TILES {
        for k in 0..KT {
          let s = g % STAGES
          wait empty[s] parity=((g / STAGES) & 1) ^ 1
          if cluster_rank == 0 { arrive.expect_tx full[s] tx=64K }
          tma.load A box=(128, 64) at=(cluster_rank * 128, k * 64) dst=sA[s] bar=full[s] bar_cta=0 swizzle=128
          tma.load B box=(128, 64) at=(cluster_rank * 128, k * 64) dst=sB[s] bar=full[s] bar_cta=0 swizzle=128
          let g = g + 1
        }
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=256 cta_group=2 -> tmem
    bar.arrive 6 threads=160
    if cluster_rank == 0 {
      let g = 0
      for t in 0..TILES {
        wait acc_empty parity=(t & 1) ^ 1
        for k in 0..KT {
          let s = g % STAGES
          wait full[s] parity=(g / STAGES) & 1
          elect {
            umma m256n256k16 kind=f16 a=sA[s] b=sB[s] count=4 cta_group=2 tmem=tmem
            umma.commit empty[s] multicast=3
          }
          let g = g + 1
        }
        elect { umma.commit acc_full multicast=3 }
      }
      wait acc_empty parity=(TILES & 1) ^ 1
    }
    tmem.relinquish cta_group=2
    tmem.dealloc tmem cols=256 cta_group=2
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    for t in 0..TILES {
      wait acc_full parity=t & 1
      for n in 0..4 { tmem.ld 32x32b.x64 tmem=n * 64 }
      tmem.wait ld
      if FIXED == 1 { arrive acc_empty cta=0 }
      if FIXED == 0 { arrive acc_empty }
      compute cycles=300 + 1500 * cluster_rank
    }
  }
}
)";
// A 2-slot CLC ring acquired with the one-slot parity.
const char* kClcTwoSlot = R"(param KTILES = 4
kernel k grid=(1184,1,1) warps=8 {
  mbarrier full[4] count=1
  mbarrier empty[4] count=1
  mbarrier clc_full[2] count=1
  mbarrier clc_empty[2] count=96
  smem sA[4] bytes=16K
  smem sB[4] bytes=16K
  tensor A dtype=bf16 shape=(8192, 8192)
  tensor B dtype=bf16 shape=(8192, 8192)
  warp 0 sched {
    let tile = cta
    let it = 0
    while tile >= 0 {
      let c = it % 2
      let ph = (it & 1) ^ 1
      if FIXED == 1 { let ph = ((it / 2) & 1) ^ 1 }
      wait clc_empty[c] parity=ph
      elect {
        arrive.expect_tx clc_full[c] tx=16
        clc.try_cancel bar=clc_full[c]
      }
      wait clc_full[c] parity=(it / 2) & 1
      clc.query bar=clc_full[c] -> tile
      let it = it + 1
    }
  }
  warp 1 load {
    let tile = cta
    let it = 0
    let g = 0
    while tile >= 0 {
      for k in 0..KTILES {
        let s = g % 4
        elect {
          wait empty[s] parity=((g / 4) & 1) ^ 1
          arrive.expect_tx full[s] tx=32K
          tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
          tma.load B box=(128, 64) at=(0, k * 64) dst=sB[s] bar=full[s]
        }
        let g = g + 1
      }
      let c = it % 2
      wait clc_full[c] parity=(it / 2) & 1
      clc.query bar=clc_full[c] -> tile
      arrive clc_empty[c]
      let it = it + 1
    }
  }
  warp 2 mma {
    tmem.alloc cols=128 -> tmem
    let tile = cta
    let it = 0
    let g = 0
    while tile >= 0 {
      for k in 0..KTILES {
        let s = g % 4
        wait full[s] parity=(g / 4) & 1
        elect {
          umma m128n128k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tmem
          umma.commit empty[s]
        }
        let g = g + 1
      }
      compute cycles=400
      let c = it % 2
      wait clc_full[c] parity=(it / 2) & 1
      clc.query bar=clc_full[c] -> tile
      arrive clc_empty[c]
      let it = it + 1
    }
    tmem.relinquish
    wait empty[(g - 1) % 4] parity=((g - 1) / 4) & 1
    tmem.dealloc tmem cols=128
  }
  warp 3 epi {
    let tile = cta
    let it = 0
    while tile >= 0 {
      compute cycles=3000
      let c = it % 2
      wait clc_full[c] parity=(it / 2) & 1
      clc.query bar=clc_full[c] -> tile
      arrive clc_empty[c]
      let it = it + 1
    }
  }
}
)";
// An sm100 epilogue that waits on one accumulator stage's barrier and loads the other stage's columns.
const char* kWrongStage = R"(param STAGES = 4
param KT = 4
param TILES = 6
kernel k grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=1
  mbarrier acc_full[2] count=1
  mbarrier acc_empty[2] count=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=32K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    elect {
      for t in 0..TILES {
        for k in 0..KT {
          let s = g % STAGES
          wait empty[s] parity=((g / STAGES) & 1) ^ 1
          arrive.expect_tx full[s] tx=48K
          tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s] swizzle=128
          tma.load B box=(256, 64) at=(0, k * 64) dst=sB[s] bar=full[s] swizzle=128
          let g = g + 1
        }
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=512 -> tmem
    bar.arrive 6 threads=160
    let g = 0
    for t in 0..TILES {
      let a = t % 2
      wait acc_empty[a] parity=((t / 2) & 1) ^ 1
      for k in 0..KT {
        let s = g % STAGES
        wait full[s] parity=(g / STAGES) & 1
        elect {
          umma m128n256k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tmem + a * 256
          umma.commit empty[s]
        }
        let g = g + 1
      }
      elect { umma.commit acc_full[a] }
    }
    tmem.relinquish
    for i in 0..2 {
      wait acc_empty[(TILES + i) % 2] parity=(((TILES + i) / 2) & 1) ^ 1
    }
    tmem.dealloc tmem cols=512
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    for t in 0..TILES {
      let a = t % 2
      wait acc_full[a] parity=(t / 2) & 1
      let col = a * 256
      if FIXED == 0 { let col = ((t + 1) % 2) * 256 }
      for n in 0..4 {
        tmem.ld 32x32b.x64 tmem=col + n * 64
      }
      tmem.wait ld
      arrive acc_empty[a]
      compute cycles=300
    }
  }
}
)";
// Two consumer warpgroups on one ring: in turns (a pingpong kernel, each warpgroup a whole tile; its pipeline state must
// start after the first's k-blocks and skip the other's after every tile) or sharing every stage (COOP = 1). The bug:
// the pingpong warpgroups count the ring from the same place; the cooperative ones skip a k-block after the first tile.
const char* kTurns = R"(param COOP = 0
param STAGES = 4
param KT = 6
param TILES = 8
gpu h100-sxm
kernel pp grid=(1,1,1) warps=12 {
  pipeline mainloop PipelineTmaAsync stages=STAGES consumers=128 * (1 + COOP) tx=32K
  pipeline order OrderedSequenceBarrier depth=1 length=2 group_size=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    elect {
      for t in 0..TILES / (1 + COOP) {
        for k in 0..KT {
          producer_acquire mainloop g
          tma.load A box=(128, 64) at=(t * 128, k * 64) dst=sA[g % STAGES] bar=mainloop.full[g % STAGES]
          tma.load B box=(128, 64) at=(0, k * 64) dst=sB[g % STAGES] bar=mainloop.full[g % STAGES]
          let g = g + 1
        }
      }
      producer_tail mainloop g
    }
  }
  warpgroups 1..3 consumer {
    let wg = warpgroup - 1
    let g = 0
    if FIXED && !COOP { let g = wg * KT }
    let n = 0
    for t in (1 - COOP) * wg..TILES / (1 + COOP) step 2 - COOP {
      if !COOP { sequence_wait order n group=wg }
      for k in 0..KT {
        consumer_wait mainloop g
        wgmma.fence
        wgmma m64n128k16 dtype=bf16 a=sA[g % STAGES] b=sB[g % STAGES] count=8
        wgmma.commit
        wgmma.wait 0
        consumer_release mainloop g
        let g = g + 1
      }
      if !COOP { sequence_arrive order n group=wg }
      let n = n + 1
      if FIXED && !COOP { let g = g + KT }
      if COOP && !FIXED && t == 0 { let g = g + 1 }
      compute cycles=800
    }
  }
}
)";
// A 2x1 cluster whose B slices are multicast into both CTAs: a stage is free when both CTAs' MMAs are done with it
// (empty count 2), so each MMA thread's commit arrives in both CTAs: one multicast commit (MODE 1) or two (MODE 2). The
// bug (MODE 0): each commit names its own CTA only.
const char* kCommitBoth = R"(param STAGES = 3
param KTILES = 8
kernel mc grid=(2,1,1) cluster=(2,1,1) warps=2 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=2
  mbarrier acc_full count=1
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    elect {
      for k in 0..KTILES {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load A box=(128, 64) at=(cta_x * 128, k * 64) dst=sA[s] bar=full[s]
        tma.load B box=(64, 64) at=(cluster_rank * 64, k * 64) dst=sB[s] bar=full[s] multicast=0x3
      }
      for k in KTILES..KTILES + STAGES {
        wait empty[k % STAGES] parity=((k / STAGES) & 1) ^ 1
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=128 -> tm
    for k in 0..KTILES {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      elect {
        umma m128n128k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tm
        if MODE == 0 { umma.commit empty[s] multicast=1 << cluster_rank }
        if MODE == 1 { umma.commit empty[s] multicast=0x3 }
        if MODE == 2 {
          umma.commit empty[s] multicast=0x1
          umma.commit empty[s] multicast=0x2
        }
      }
    }
    elect { umma.commit acc_full }
    wait acc_full parity=0
    tmem.dealloc tm cols=128
  }
}
)";
// A consumer that releases the previous stage after `wgmma.wait 1` (K_PIPE_MMAS = 1) and the last one after its k-loop;
// the bug: the in-loop release is guarded by the running counter (g > 0) instead of the tile's (k > 0), so a tile's first
// k-block releases the previous tile's last stage a second time.
const char* kDoubleRelease = R"(param STAGES = 4
param KT = 3
param TILES = 4
kernel dbl grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    elect {
      for g in 0..TILES * KT {
        let s = g % STAGES
        wait empty[s] parity=((g / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load A box=(128, 64) at=(0, g * 64) dst=sA[s] bar=full[s]
        tma.load B box=(128, 64) at=(0, g * 64) dst=sB[s] bar=full[s]
      }
      for g in TILES * KT..TILES * KT + STAGES {
        wait empty[g % STAGES] parity=((g / STAGES) & 1) ^ 1
      }
    }
  }
  warpgroup 1 consumer {
    let g = 0
    for t in 0..TILES {
      for k in 0..KT {
        let s = g % STAGES
        wait full[s] parity=(g / STAGES) & 1
        wgmma.fence
        wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
        wgmma.commit
        wgmma.wait 1
        let guard = FIXED * (k > 0) + (1 - FIXED) * (g > 0)
        if guard { arrive empty[(g - 1) % STAGES] }
        let g = g + 1
      }
      wgmma.wait 0
      arrive empty[(g - 1) % STAGES]
      compute cycles=200
    }
  }
}
)";

// Two warpgroups share every stage (count 256); the second needs only the first half and then leaves the pipeline with
// arrive.drop on every stage. The bug: it drops right after its last release, in a phase it already arrived in.
const char* kDropTwice = R"(param STAGES = 2
param KTILES = 8
const HALF = 4
kernel drop grid=(1,1,1) warps=12 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=256
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    elect {
      for k in 0..KTILES {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=32K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
        tma.load B box=(128, 64) at=(0, k * 64) dst=sB[s] bar=full[s]
      }
    }
  }
  warpgroup 1 wg1 {
    for k in 0..KTILES {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
      wgmma.commit
      wgmma.wait 0
      compute cycles=1500                # WG1 is slower
      arrive empty[s]
    }
  }
  warpgroup 2 wg2 {
    for k in 0..HALF {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
    }
    for k in HALF..HALF + STAGES {
      let s = k % STAGES
      if FIXED { wait full[s] parity=(k / STAGES) & 1 }
      arrive.drop empty[s]
    }
  }
}
)";
// A persistent consumer whose stage counter restarts each tile (`i = k`) while the producer's runs on (`g`).
const char* kRestart = R"(param STAGES = 2
param KTILES = 3
param TILES = 4
kernel persist grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sA[STAGES] bytes=16K
  smem sB[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    for t in 0..TILES {
      for k in 0..KTILES {
        let s = g % STAGES
        elect {
          wait empty[s] parity=((g / STAGES) & 1) ^ 1
          arrive.expect_tx full[s] tx=32K
          tma.load A box=(128, 64) at=(t * 128, k * 64) dst=sA[s] bar=full[s]
          tma.load B box=(128, 64) at=(0, k * 64) dst=sB[s] bar=full[s]
        }
        let g = g + 1
      }
    }
  }
  warpgroup 1 consumer {
    let g = 0
    for t in 0..TILES {
      for k in 0..KTILES {
        let i = FIXED * g + (1 - FIXED) * k      # BUG: per-tile state
        let s = i % STAGES
        wait full[s] parity=(i / STAGES) & 1
        wgmma.fence
        wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[s] count=4
        wgmma.commit
        wgmma.wait 0
        arrive empty[s]
        let g = g + 1
      }
      compute cycles=300
    }
  }
}
)";
// Two CTAs share the tiles (tile = cta, cta + 2, ...); the MMA warp picks its accumulator stage by the tile's number
// (the same stage every time in each CTA) while the epilogue alternates, so the MMA's acc_empty waits pass at once on a
// fresh barrier again and again.
const char* kStageByTile = R"(param TILES = 8
param KT = 2
const ACC = 2
gpu b200
kernel accidx grid=(2,1,1) warps=8 {
  mbarrier full[2] count=1
  mbarrier empty[2] count=1
  mbarrier acc_full[ACC] count=1
  mbarrier acc_empty[ACC] count=128
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor B dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    let g = 0
    for tile in cta..TILES step num_ctas {
      for k in 0..KT {
        let s = g % 2
        elect {
          wait empty[s] parity=((g / 2) & 1) ^ 1
          arrive.expect_tx full[s] tx=32K
          tma.load A box=(128, 64) at=(tile * 128, k * 64) dst=sA[s] bar=full[s]
          tma.load B box=(128, 64) at=(0, k * 64) dst=sB[s] bar=full[s]
        }
        let g = g + 1
      }
    }
  }
  warp 1 mma {
    tmem.alloc cols=256 -> tm
    bar.arrive 6 threads=160
    let g = 0
    let i = 0
    for tile in cta..TILES step num_ctas {
      let a = FIXED * (i % ACC) + (1 - FIXED) * (tile % ACC)
      wait acc_empty[a] parity=((i / ACC) & 1) ^ 1
      for k in 0..KT {
        let s = g % 2
        wait full[s] parity=(g / 2) & 1
        elect {
          umma m128n128k16 kind=f16 a=sA[s] b=sB[s] count=4 tmem=tm + a * 128
          umma.commit empty[s]
        }
        let g = g + 1
      }
      elect { umma.commit acc_full[a] }
      let i = i + 1
    }
    bar.sync 7 threads=160
    tmem.relinquish
    tmem.dealloc tm cols=256
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    let i = 0
    for tile in cta..TILES step num_ctas {
      let a = i % ACC
      wait acc_full[a] parity=(i / ACC) & 1
      tmem.ld 32x32b.x64 tmem=a * 128
      tmem.ld 32x32b.x64 tmem=a * 128 + 64
      tmem.wait ld
      arrive acc_empty[a]
      compute cycles=800
      let i = i + 1
    }
    bar.arrive 7 threads=160
  }
}
)";
// A producer that acquires its stage in a test_wait loop with a backoff sleep, starting at phase 0 (CUTLASS's producer
// starts at phase 1): the watchdog stops a run that spins forever.
const char* kSpinStart = R"(param STAGES = 2
param KTILES = 6
kernel spin grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sA[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    elect {
      let phase = FIXED                 # BUG: CUTLASS's producer starts at phase 1
      for k in 0..KTILES {
        let s = k % STAGES
        let ok = 0
        while ok == 0 {
          test_wait empty[s] parity=phase -> ok
          if ok == 0 { sleep cycles=100 }
        }
        arrive.expect_tx full[s] tx=16K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
        if s == STAGES - 1 { let phase = phase ^ 1 }
      }
    }
  }
  warpgroup 1 consumer {
    for k in 0..KTILES {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
    }
  }
}
)";
// A consumer that skips a masked block's work with `continue` after its wait, and with it the stage's
// release.
const char* kSkipRelease = R"(param STAGES = 2
param NBLK = 6
kernel causal grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sK[STAGES] bytes=16K
  tensor K dtype=bf16 shape=(4096, 128)
  warp 0 producer {
    for j in 0..NBLK {
      let s = j % STAGES
      elect {
        wait empty[s] parity=((j / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=16K
        tma.load K box=(64, 128) at=(j * 64, 0) dst=sK[s] bar=full[s]
      }
    }
  }
  warpgroup 1 consumer {
    for j in 0..NBLK {
      let s = j % STAGES
      wait full[s] parity=(j / STAGES) & 1
      if j == 3 {                    # masked-out block
        if FIXED { arrive empty[s] }
        continue
      }
      wgmma.fence
      wgmma m64n64k16 dtype=bf16 b=sK[s] count=8
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
    }
  }
}
)";
// Stream-K partials: CTA 1 TMA-stores its partial to a workspace and publishes a flag; CTA 0 waits for the flag and
// TMA-loads the partial. The bug: the publisher waits for its store with `tma.wait 0 read` only.
const char* kPartialFlag = R"(param TILES = 4
kernel streamk grid=(2,1,1) warps=1 {
  global flag[TILES] init=0
  mbarrier full count=1
  smem sAcc bytes=32K
  smem sPart bytes=32K
  tensor WS dtype=f32 shape=(512, 128)
  warp 0 worker {
    for t in 0..TILES {
      if cta == 1 {                 # first K-part: write partials
        compute cycles=1000
        st.shared bytes=32K dst=sAcc
        fence.proxy.async
        elect {
          tma.store WS box=(64, 128) at=(t * 64, 0) src=sAcc
          tma.commit
          if FIXED { tma.wait 0 } else { tma.wait 0 read }
          st.release flag[t] val=1
        }
      } else {                      # owner: reduce
        compute cycles=1000
        spin flag[t] eq=1
        elect {
          arrive.expect_tx full tx=32K
          tma.load WS box=(64, 128) at=(t * 64, 0) dst=sPart bar=full
        }
        wait full parity=t & 1
        ld.shared bytes=32K src=sPart
      }
    }
  }
}
)";
// The producer invalidates and re-initialises full[0] for an epilogue handoff while the slow consumer has not reached its
// last k-block's wait on the old barrier (FIXED: all its users meet at a bar.sync before the inval).
const char* kReinit = R"(param STAGES = 2
param KTILES = 4
kernel reinit grid=(1,1,1) warps=8 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=128
  smem sA[STAGES] bytes=16K
  tensor A dtype=bf16 shape=(4096, 4096)
  warp 0 producer {
    for k in 0..KTILES {
      let s = k % STAGES
      elect {
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=16K
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[s] bar=full[s]
      }
    }
    if FIXED { bar.sync 1 threads=160 }
    elect {
      mbarrier.inval full[0]
      mbarrier.init full[0] count=32
    }
    bar.sync 2 threads=160
    arrive full[0]                     # epilogue handoff: 32 lanes
  }
  warpgroup 1 consumer {
    for k in 0..KTILES {
      let s = k % STAGES
      compute cycles=2000
      wait full[s] parity=(k / STAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] count=4
      wgmma.commit
      wgmma.wait 0
      arrive empty[s]
    }
    if FIXED { bar.sync 1 threads=160 }
    bar.sync 2 threads=160
    wait full[0] parity=0
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
                               Catch::Contains("Either the refill writes the stage this k-block reads, a ring index error") &&
                               Catch::Contains("Or it is that stage of k-block k - 1, refilled before the barrier") &&
                               !Catch::Contains("must arrive on a barrier"));
  // The barrier the old advice asked for: the refills still skip a stage, read and never written (a warning: the run
  // finishes; a correct mainloop's unused prefetch of the next stage looks the same).
  auto hidden = run_text(with("param FIXED = 0\nparam SYNC = 1\n", kRefill));
  REQUIRE(hidden.outcome == Outcome::kFinished);
  REQUIRE(hidden.warnings.size() == 2);  // once per array: sA, sB
  CHECK_THAT(hidden.warnings[0], Catch::Contains("read of unwritten shared memory") && Catch::Contains("reads sA[2] at cycle") &&
                                     Catch::Contains("Writes reached sA[0], sA[1] only, and sA[0], sA[1] came round again") &&
                                     Catch::Contains("the ring's writes skip sA[2]"));
  CHECK_THAT(hidden.warnings[1], Catch::Contains("reads sB[2]"));
  for (const char* sync : {"0", "1"}) {
    auto fixed = run_text(with("param FIXED = 1\nparam SYNC = ", sync) + "\n" + kRefill);
    CHECK(fixed.outcome == Outcome::kFinished);
    CHECK(fixed.warnings.empty());
  }
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
  CHECK(speculative.warnings.empty());
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
  REQUIRE(turned.outcome == Outcome::kFinished);
  REQUIRE(turned.warnings.size() == 1);
  CHECK_THAT(turned.warnings[0], Catch::Contains("reads sB[2]") && Catch::Contains("Writes reached sB[0], sB[1] only, and sB[0] came round"));
}

TEST_CASE("misuse: a fence.proxy.async after the release orders nothing for the reader", "[misuse][proxy]") {
  auto bug = run_text(with("param FIXED = 0\n", kFenceAfterArrive));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "missing fence.proxy.async");
  CHECK_THAT(message(bug), Catch::Contains("the async proxy reads sBc[0] which warp 4 wrote with st.shared (line 32) and fenced "
                                           "with fence.proxy.async (line 35) only after the release that orders this access"));
  CHECK(run_text(with("param FIXED = 1\n", kFenceAfterArrive)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a generic write, released unfenced to a TMA refill, is a missing proxy fence", "[misuse][proxy]") {
  auto bug = run_text(with("param FIXED = 0\n", kGenericThenTma));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "missing fence.proxy.async");
  CHECK_THAT(message(bug), Catch::Contains("the async proxy writes sK[0] which warp 4 wrote with st.shared") &&
                               Catch::Contains("write first and the generic stores land over its bytes"));
  CHECK(run_text(with("param FIXED = 1\n", kGenericThenTma)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a writer that only arrives on the named barrier it should wait on is told to bar.sync", "[misuse][named]") {
  auto bug = run_text(with("param FIXED = 0\n", kArriveOnly));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(bug), Catch::Contains("warp 0's latest named-barrier op is `bar.arrive 3 + s threads=160` (line 10), which "
                                           "arrives without waiting") &&
                               Catch::Contains("needs `bar.sync 3`") && !Catch::Contains("warp 1 must arrive on a barrier"));
  CHECK(run_text(with("param FIXED = 1\n", kArriveOnly)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: umma.commit in the wrong place: inside the k-loop, or before the umma it should cover", "[misuse][tcgen05]") {
  auto loop = run_text(with("param FIXED = 0\n", kCommitInLoop), "b200");
  INFO(message(loop));
  REQUIRE(loop.outcome == Outcome::kUndefined);
  CHECK_THAT(message(loop), Catch::Contains("whose latest phase was completed by 'umma.commit acc_full' at line 41 (warp 1), an "
                                            "earlier pass of the loop that holds this umma (line 39)") &&
                                Catch::Contains("Commit to acc_full once, after the loop"));
  CHECK(run_text(with("param FIXED = 1\n", kCommitInLoop), "b200").outcome == Outcome::kFinished);
  auto before = run_text(with("param FIXED = 0\n", kCommitBeforeUmma), "b200");
  INFO(message(before));
  REQUIRE(before.outcome == Outcome::kUndefined);
  CHECK(title(before) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(before), Catch::Contains("warp 0 did wait on empty[0], whose latest phase was completed by 'umma.commit "
                                              "empty[s]'") &&
                                  Catch::Contains("issued that commit before this umma"));
  CHECK(run_text(with("param FIXED = 1\n", kCommitBeforeUmma), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a 2-SM peer that releases its own accumulator barrier, not the leader's", "[misuse][tcgen05][cluster]") {
  auto bug = run_text(with("param FIXED = 0\n", kPeerReleasesOwn), "b200");
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("warp 1 observed acc_empty (phase 0), and that phase completed with the arrivals of "
                                           "cluster rank(s) 0 alone (count 128), none of rank 1 (CTA 1)") &&
                               Catch::Contains("its warps do not release acc_empty") && !Catch::Contains("not before it"));
  CHECK(run_text(with("param FIXED = 1\n", kPeerReleasesOwn), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a deadlock whose producer started at phase 1 gets no start-phase cause", "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kClcTwoSlot), "b200");
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::causes(bug), Catch::Contains("its parity flipped before the ring came back to its first stage") &&
                                    !Catch::Contains("each side waits for the other before its first arrive"));
  CHECK(run_text(with("param FIXED = 1\n", kClcTwoSlot), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("misuse: an epilogue that loads another accumulator stage's columns than the one it waited for", "[misuse][tcgen05]") {
  auto bug = run_text(with("param FIXED = 0\n", kWrongStage), "b200");
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("warp 4 is ordered after the accumulator writes to TMEM columns 0..255, the stage its "
                                           "waits covered (its latest wait: acc_full[0]), but it read columns 256..263") &&
                               Catch::Contains("its tmem= address names another accumulator stage") &&
                               !Catch::Contains("after that wait, not before it"));
  CHECK(run_text(with("param FIXED = 1\n", kWrongStage), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a proxy fence by the TMA issuer after its acquire orders the stores it is after", "[misuse][proxy]") {
  // Four warps write sD, bar.sync, then warp 0 fences and stores it; the same with the fence before bar.sync in each writer;
  // without any fence, a hazard.
  auto prog = [](const char* writer_fence, const char* issuer_fence) {
    return fmt::format(R"(
kernel k grid=(1,1,1) warps=4 {{
  smem sD bytes=8K
  tensor D dtype=bf16 shape=(64, 64)
  warps 0..4 w {{
    st.shared bytes=2K dst=sD
    {}
    bar.sync 1 threads=128
    if warp == 0 {{
      {}
      elect {{
        tma.store D box=(64, 64) at=(0, 0) src=sD
        tma.commit
        tma.wait 0
      }}
    }}
  }}
}}
)", writer_fence, issuer_fence);
  };
  CHECK(run_text(prog("fence.proxy.async", "")).outcome == Outcome::kFinished);
  CHECK(run_text(prog("", "fence.proxy.async")).outcome == Outcome::kFinished);
  auto none = run_text(prog("", ""));
  INFO(message(none));
  CHECK(title(none) == "missing fence.proxy.async");
  // The issuer fences before the barrier (not yet ordered after the others' stores): no fence on their path.
  auto early = run_text(prog("if warp == 0 { fence.proxy.async }", ""));
  INFO(message(early));
  CHECK(title(early) == "missing fence.proxy.async");
  CHECK_THAT(message(early), Catch::Contains("which warp 1 wrote with st.shared"));
}

TEST_CASE("misuse: a proxy fence on the path counts per writer, whatever the timing", "[misuse][proxy]") {
  // Every warp fences after the barrier (late for the others, on the path for warp 0's store): clean however warp 0 is
  // delayed; and an issuer whose fence covers one writer while another's store is still unfenced covers that one.
  const char* late = R"(
kernel k grid=(1,1,1) warps=4 {
  smem sD bytes=8K
  tensor D dtype=bf16 shape=(64, 64)
  warps 0..4 w {
    st.shared bytes=2K dst=sD
    bar.sync 1 threads=128
    if warp == 0 { compute cycles=1000 }
    fence.proxy.async
    if warp == 0 {
      elect {
        tma.store D box=(64, 64) at=(0, 0) src=sD
        tma.commit
        tma.wait 0
      }
    }
  }
}
)";
  auto r = run_text(late);
  INFO(message(r));
  CHECK(r.outcome == Outcome::kFinished);
  const char* partial = R"(
kernel k grid=(1,1,1) warps=3 {
  smem sD bytes=8K
  tensor D dtype=bf16 shape=(64, 64)
  warp 0 c {
    bar.sync 1 threads=64
    fence.proxy.async
    bar.sync 2 threads=64
    elect {
      tma.store D box=(64, 64) at=(0, 0) src=sD
      tma.commit
      tma.wait 0
    }
  }
  warp 1 a {
    st.shared bytes=2K dst=sD
    bar.arrive 1 threads=64
  }
  warp 2 b {
    st.shared bytes=2K dst=sD
    compute cycles=2000
    fence.proxy.async
    bar.arrive 2 threads=64
  }
}
)";
  auto p = run_text(partial);
  INFO(message(p));
  CHECK(p.outcome == Outcome::kFinished);
}

TEST_CASE("misuse: the named-barrier note reads this CTA's own ops, not a previous CTA's of the same slot", "[misuse][named]") {
  // One CTA per SM (200 KB of smem), 200 CTAs: CTA 199 reuses a slot. Its warp 0 writes before any named-barrier op of
  // its own: the WAR has no 'latest named-barrier op' note (the previous CTA's bar.arrive is not this warp's).
  auto r = run_text(R"(
kernel k grid=(200,1,1) warps=2 {
  smem sX bytes=200K whole
  warp 0 w {
    if cta == num_ctas - 1 {
      compute cycles=100
      st.shared bytes=128 dst=sX
    }
    bar.arrive 2 threads=64
  }
  warp 1 r {
    ld.shared bytes=128 src=sX
    bar.sync 2 threads=64
  }
}
)");
  INFO(message(r));
  REQUIRE(r.outcome == Outcome::kUndefined);
  CHECK_THAT(message(r), Catch::Contains("CTA 199 warp 0") && !Catch::Contains("latest named-barrier op"));
}

TEST_CASE("misuse: pingpong warpgroups that count the ring from the same place are told so", "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kTurns));
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  // Named first, ahead of the symptoms (barriers nobody arrives on).
  CHECK_THAT(test::causes(bug), Catch::StartsWith("mainloop.full[2]: phase 1 completed") &&
                                    Catch::Contains("warpgroups 1 and 2 (consumer) both began waiting on mainloop.full[0] "
                                                    "with parity 0, and have since returned on different phases") &&
                                    Catch::Contains("skips the other's k-blocks after every tile") &&
                                    !Catch::Contains("its parity is one phase ahead"));
  CHECK(run_text(with("param FIXED = 1\n", kTurns)).outcome == Outcome::kFinished);
  // Warpgroups that share every stage return on the same phases: a skipped k-block is the warps' own waits skipping a
  // phase.
  const std::string coop_turns = std::string(kTurns).replace(0, 14, "param COOP = 1");
  auto coop = run_text(with("param FIXED = 0\n", coop_turns.c_str()));
  INFO(test::causes(coop));
  REQUIRE(coop.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::causes(coop), Catch::Contains("mainloop.full[2]: phase 1 completed") &&
                                     Catch::Contains("returned on phase 0, so its waits skipped phase 1") &&
                                     !Catch::Contains("both began waiting"));
  CHECK(run_text(with("param FIXED = 1\n", coop_turns.c_str())).outcome ==
        Outcome::kFinished);
}

TEST_CASE("misuse: a multicast commit releases every CTA's operand reads, and one that leaves a CTA out is named",
          "[misuse][tcgen05][cluster]") {
  // Correct either way: the refill by the peer's multicast load is ordered after this CTA's commit (no WAR).
  for (const char* mode : {"param MODE = 1\n", "param MODE = 2\n"}) {
    auto r = run_text(with(mode, kCommitBoth), "b200");
    INFO(mode << message(r));
    CHECK(r.outcome == Outcome::kFinished);
  }
  auto bug = run_text(with("param MODE = 0\n", kCommitBoth), "b200");
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::causes(bug),
             Catch::StartsWith("empty[0]: initialised with count 2 but only 1 arrival(s) came in phase 0") &&
                 Catch::Contains("Multicast commits of the cluster that arrive on empty[0] left this CTA (rank 0) out in this "
                                 "phase: `umma.commit empty[s] multicast=1 << cluster_rank` at line 33 (CTA 1 with mask 0x2)") &&
                 Catch::Contains("their multicast mask must name rank 0"));
}

TEST_CASE("misuse: a stage released twice for one fill: the refill's report names the releases, not a wait on full",
          "[misuse][mbarrier]") {
  auto bug = run_text(with("param FIXED = 0\n", kDoubleRelease));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("warp 0 refilled the stage after its wait on empty[2] (phase 1), which completed "
                                           "with the arrivals of warps 4,5,6,7 (consumer) alone: the stage was released more "
                                           "often than it was filled") &&
                               Catch::Contains("the releases: `arrive empty[(g - 1) % STAGES]` at line 37, `arrive "
                                               "empty[(g - 1) % STAGES]` at line 41") &&
                               !Catch::Contains("wait on full[2] with parity"));
  CHECK(run_text(with("param FIXED = 1\n", kDoubleRelease)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: an arrive.drop in a phase its warps already arrived in is named", "[misuse][mbarrier]") {
  auto bug = run_text(with("param FIXED = 0\n", kDropTwice));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("completed with the arrivals of warps 8,9,10,11 alone, so the writer went on while "
                                           "warp 7 still read: in that phase warps 8,9,10,11 arrived twice, through `arrive "
                                           "empty[s]` at line 43, then `arrive.drop empty[s]` at line 48") &&
                               Catch::Contains("may drop only once that phase has completed"));
  CHECK(run_text(with("param FIXED = 1\n", kDropTwice)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a consumer whose stage counter restarts each tile: its waits skip a phase", "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kRestart));
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::causes(bug), Catch::StartsWith("full[1]: phase 1 completed") &&
                                    Catch::Contains("its previous wait on full[1] (`wait full[s] parity=(i / STAGES) & 1` at "
                                                    "line 33) returned on phase 0, so its waits skipped phase 1") &&
                                    Catch::Contains("A stage counter that restarts (e.g. each tile"));
  CHECK(run_text(with("param FIXED = 1\n", kRestart)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a writer whose wait passed at once on a fresh barrier a second time is named", "[misuse][tcgen05]") {
  auto bug = run_text(with("param FIXED = 0\n", kStageByTile), "b200");
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("warp 1's latest wait on acc_empty[0], `wait acc_empty[a] parity=((i / ACC) & 1) ^ "
                                           "1` at line 37, returned at once, for the second time") &&
                               Catch::Contains("a stage's index and parity come from one counter") &&
                               !Catch::Contains("after that wait, not before it"));
  CHECK(run_text(with("param FIXED = 1\n", kStageByTile), "b200").outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a producer spinning on test_wait with the wrong start phase: the watchdog names the poll and the cause",
          "[misuse][watchdog]") {
  models::RunOptions o;
  o.max_cycles = 200000;
  auto bug = run_text(with("param FIXED = 0\n", kSpinStart), "h100-sxm", o);
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kWatchdog);
  REQUIRE(!bug.deadlock.warps.empty());
  // The spinning warp stands at its poll (not at its backoff sleep), waiting for the phase it polls for.
  CHECK(bug.deadlock.warps.front().op_text == "test_wait empty[s] parity=phase -> ok");
  CHECK_THAT(bug.deadlock.warps.front().waits_for,
             Catch::StartsWith("mbarrier empty[0] to complete phase 0 (waits with parity 0)") &&
                 Catch::Contains("polled with test_wait in a loop, in vain"));
  CHECK_THAT(test::causes(bug), Catch::Contains("nothing has arrived on empty[0] (role producer waits with parity 0), full[0] "
                                                "(role consumer waits with parity 0): each side waits for the other"));
  CHECK(run_text(with("param FIXED = 1\n", kSpinStart), "h100-sxm", o).outcome == Outcome::kFinished);
}

namespace {
// FA3-style k-loop of a warpgroup that rescales its accumulator (register work, a compute op) between its wgmmas.
// FENCE 0: one wgmma.fence hoisted out of the loop; 1: one at each k-block after the register work (CUTLASS's
// warpgroup_arrive); 2: one at each k-block, but before the register work.
const char* kFenceLoop = R"(kernel fa grid=(GRID,1,1) warps=4 {
  smem sQ bytes=16K
  smem sK bytes=16K
  warpgroup 0 mma {
    wgmma.fence
    for k in 0..4 {
      if FENCE == 2 { wgmma.fence }
      if k > 0 { compute cycles=100 }
      if FENCE == 1 { wgmma.fence }
      wgmma m64n64k16 dtype=bf16 a=sQ b=sK count=4
      wgmma.commit
      wgmma.wait 0
    }
  }
}
)";
}  // namespace

TEST_CASE("misuse: a wgmma.fence hoisted out of the k-loop while register work sits between wgmmas is a warning",
          "[misuse][wgmma]") {
  // PTX ISA (wgmma.fence): a fence between a warp's register access and a wgmma that uses those registers (its
  // accumulator or A fragment). The run finishes (a compute op does not say which registers it touches), with one
  // warning per wgmma op, however many k-blocks and CTAs repeat it.
  auto bug = run_text(with("param FENCE = 0\nparam GRID = 1\n", kFenceLoop));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kFinished);
  REQUIRE(bug.warnings.size() == 1);
  CHECK_THAT(bug.warnings[0], Catch::Contains(":12:") && Catch::Contains("wgmma after register work without wgmma.fence") &&
                                  Catch::Contains("warp 0 (warpgroup 0 of CTA 0) ran 'compute cycles=100' (line 10)") &&
                                  Catch::Contains("after the warpgroup's wgmma at line 12") &&
                                  Catch::Contains("put a wgmma.fence after the register work, before the wgmma"));
  auto many = run_text(with("param FENCE = 0\nparam GRID = 4\n", kFenceLoop));
  REQUIRE(many.outcome == Outcome::kFinished);
  CHECK(many.warnings.size() == 1);
  // The compute after the fence of its k-block (fence; compute; wgmma) is the same misuse.
  auto early = run_text(with("param FENCE = 2\nparam GRID = 1\n", kFenceLoop));
  REQUIRE(early.outcome == Outcome::kFinished);
  REQUIRE(early.warnings.size() == 1);
  CHECK_THAT(early.warnings[0], Catch::Contains("wgmma after register work without wgmma.fence"));
  // FIXED: a fence at each k-block, after the register work.
  auto fixed = run_text(with("param FENCE = 1\nparam GRID = 1\n", kFenceLoop));
  CHECK(fixed.outcome == Outcome::kFinished);
  CHECK(fixed.warnings.empty());
}

TEST_CASE("misuse: register work that no wgmma of its warpgroup follows unfenced is no warning", "[misuse][wgmma]") {
  // Register work before the warpgroup's first wgmma (the first-wgmma rule covers it), and a warpgroup that computes
  // beside another that issues the wgmmas (each warpgroup's own warps count): no warning. The wgmmas' warpgroup
  // fences once, before its loop.
  auto clean = run_text(R"(
kernel two grid=(1,1,1) warps=8 {
  smem sQ bytes=16K
  smem sK bytes=16K
  warpgroup 0 mma {
    compute cycles=50
    wgmma.fence
    compute cycles=50
    for k in 0..4 {
      wgmma m64n64k16 dtype=bf16 a=sQ b=sK count=4
      wgmma.commit
      wgmma.wait 0
    }
  }
  warpgroup 1 softmax {
    for k in 0..8 { compute cycles=100 }
  }
}
)");
  INFO(message(clean));
  CHECK(clean.outcome == Outcome::kFinished);
  CHECK(clean.warnings.empty());
  // One warp of the warpgroup touching registers between its wgmmas is enough, and the warning names it.
  auto one = run_text(R"(
kernel one grid=(1,1,1) warps=4 {
  smem sQ bytes=16K
  smem sK bytes=16K
  warpgroup 0 mma {
    wgmma.fence
    for k in 0..2 {
      wgmma m64n64k16 dtype=bf16 a=sQ b=sK count=4
      wgmma.commit
      wgmma.wait 0
      if warp == 2 { compute cycles=30 }
    }
  }
}
)");
  REQUIRE(one.outcome == Outcome::kFinished);
  REQUIRE(one.warnings.size() == 1);
  CHECK_THAT(one.warnings[0], Catch::Contains("warp 2 (warpgroup 0 of CTA 0) ran 'compute cycles=30' (line 11)") &&
                                  Catch::Contains("issues 'wgmma m64n64k16 dtype=bf16 a=sQ b=sK count=4' (line 8)"));
}

TEST_CASE("misuse: a consumer that skips a block with continue and with it the stage's release",
          "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kSkipRelease));
  INFO(test::causes(bug));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  CHECK_THAT(
      test::causes(bug),
      Catch::StartsWith(
          "empty[1]: none of the 128 arrivals of phase 1 came: CTA 0 warp 4 (consumer) returned on phase 1 "
          "of full[1]") &&
          Catch::Contains("and now waits for its phase 2, without arriving on empty[1] in between") &&
          Catch::Contains("every stage a consumer waited for is released, also one whose work it skips"));
  CHECK(run_text(with("param FIXED = 1\n", kSkipRelease)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a flag released after its TMA store was waited for with read only is a warning", "[misuse][global]") {
  auto bug = run_text(with("param FIXED = 0\n", kPartialFlag));
  REQUIRE(bug.warnings.size() == 1);
  CHECK_THAT(bug.warnings[0], Catch::Contains("release before the TMA stores' global writes are complete: CTA 1 warp 0 makes "
                                              "`st.release flag[t] val=1` while its `tma.store WS box=(64, 128) at=(t * 64, "
                                              "0) src=sAcc` (line 16)") &&
                                  Catch::Contains("Wait with `tma.wait 0` (no `read`) before the release"));
  auto fixed = run_text(with("param FIXED = 1\n", kPartialFlag));
  CHECK(fixed.outcome == Outcome::kFinished);
  CHECK(fixed.warnings.empty());
  // tma.wait N counts every bulk group, an empty one too: after store, commit, commit, `tma.wait 1` covers the store.
  auto groups = [](const char* wait) {
    return run_text(fmt::format(R"(kernel g grid=(1,1,1) warps=1 {{
  global flag[1] init=0
  smem sAcc bytes=32K
  tensor WS dtype=f32 shape=(512, 128)
  warp 0 w {{
    st.shared bytes=32K dst=sAcc
    fence.proxy.async
    elect {{
      tma.store WS box=(64, 128) at=(0, 0) src=sAcc
      tma.commit
      tma.commit
      {}
      st.release flag[0] val=1
    }}
  }}
}}
)",
                                wait));
  };
  CHECK(groups("tma.wait 1").warnings.empty());
  CHECK(groups("tma.wait 1 read").warnings.size() == 1);
  CHECK(groups("tma.wait 2").warnings.size() == 1);
}

TEST_CASE("misuse: a barrier invalidated and re-initialised while a warp still waits on its old life", "[misuse][mbarrier]") {
  auto bug = run_text(with("param FIXED = 0\n", kReinit));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "barrier init not ordered before its use");
  CHECK_THAT(message(bug), Catch::Contains("full[0] is a barrier that warp 0 invalidated (`mbarrier.inval full[0]` at line 20) "
                                           "after 2 phase(s) and initialised again; this op of warp 4 (line 30) had waited on "
                                           "the old barrier before") &&
                               Catch::Contains("before the inval") && !Catch::Contains("After the inits, synchronise"));
  CHECK(run_text(with("param FIXED = 1\n", kReinit)).outcome == Outcome::kFinished);
}

// Intra-CTA split-K: warpgroup 1 hands its partial sums to warpgroup 0 through smem (st.shared, then bar.arrive on a
// named barrier warpgroup 0 bar.syncs on), tile after tile, into one buffer. FIXED = 0: nothing hands the buffer back,
// so the next tile's partials may land while warpgroup 0 still reads the last ones.
const char* kHandoff = R"(param TILES = 4
kernel k grid=(1,1,1) warps=8 {
  smem sRed bytes=32K
  warpgroup 0 reducer {
    for t in 0..TILES {
      compute cycles=1500
      bar.sync 8 threads=256
      ld.shared bytes=8K src=sRed
      compute cycles=300
      if FIXED { bar.arrive 9 threads=256 }
      compute cycles=500
    }
  }
  warpgroup 1 partner {
    for t in 0..TILES {
      compute cycles=2600
      if FIXED && t > 0 { bar.sync 9 threads=256 }
      st.shared bytes=8K dst=sRed
      bar.arrive 8 threads=256
    }
  }
}
)";

TEST_CASE("misuse: partial sums handed through smem with no hand-back are overwritten while read", "[misuse][hazard]") {
  auto bug = run_text(with("param FIXED = 0\n", kHandoff));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(bug), Catch::Contains("warp 0 never writes sRed: it reads what other warps wrote there with st.shared") &&
                               Catch::Contains("`bar.arrive 8 threads=256` at line 20 hands the data over to warp 0; it does "
                                               "not hand the buffer back") &&
                               Catch::Contains("After its read (line 9) warp 0 must arrive on a barrier that warp 4 waits on") &&
                               !Catch::Contains("needs `bar.sync 8`"));
  CHECK(run_text(with("param FIXED = 1\n", kHandoff)).outcome == Outcome::kFinished);
}

// FA4-style row scale: the softmax warpgroup writes it with st.shared and arrives on scale_full, the correction
// warpgroup waits and reads it, and hands it back on scale_empty. FIXED = 0 arrives on scale_full before the write.
const char* kScale = R"(param ROWS = 4
kernel k grid=(1,1,1) warps=8 {
  mbarrier scale_full count=128
  mbarrier scale_empty count=128
  smem sScale bytes=512
  warpgroup 0 softmax {
    for j in 0..ROWS {
      if j > 0 { wait scale_empty parity=(j - 1) & 1 }
      compute cycles=200
      if FIXED == 0 { arrive scale_full }
      st.shared bytes=4 dst=sScale
      if FIXED { arrive scale_full }
      compute cycles=400
    }
  }
  warpgroup 1 correction {
    for j in 0..ROWS {
      wait scale_full parity=j & 1
      ld.shared bytes=4 src=sScale
      arrive scale_empty
      compute cycles=300
    }
  }
}
)";

TEST_CASE("misuse: a value handed through smem released before it is written is read too early", "[misuse][hazard]") {
  auto bug = run_text(with("param FIXED = 0\n", kScale));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "read before the write is complete (RAW)");
  CHECK_THAT(message(bug), Catch::Contains("'ld.shared bytes=4 src=sScale' at line 20") &&
                               Catch::Contains("while 'st.shared bytes=4 dst=sScale' at line 12") &&
                               Catch::Contains("it arrived on scale_full in the phase warp 4 waited for (phase 0), but before "
                                               "its access at line 12"));
  CHECK(run_text(with("param FIXED = 1\n", kScale)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: warps that read a TMA-filled buffer while others write their own parts into it hand nothing off",
          "[misuse][hazard]") {
  // Each warp reads its part of what the TMA load brought and writes its own part back (CUTLASS's epilogue reusing C's
  // buffer for D); warp 1 reads late, after warp 0 already wrote, unordered: no race (different parts). The same with
  // the buffer written only by st.shared of warp 0 first is a hand-off, and the late read races with warp 0's write.
  auto run = [](bool tma) {
    return run_text(fmt::format(R"(kernel k grid=(1,1,1) warps=2 {{
  mbarrier full count=1
  smem sC bytes=8K
  warp 0 first {{
    {}
    ld.shared bytes=4K src=sC
    st.shared bytes=4K dst=sC
  }}
  warp 1 late {{
    {}
    compute cycles=2000
    ld.shared bytes=4K src=sC
  }}
}}
)",
                                tma ? "elect {\n      arrive.expect_tx full tx=8K\n      tma.load bytes=8K dst=sC bar=full\n    }\n    wait full parity=0"
                                    : "st.shared bytes=4K dst=sC\n    elect { arrive full }",
                                "wait full parity=0"));
  };
  auto tma = run(true);
  INFO(message(tma));
  CHECK(tma.outcome == Outcome::kFinished);
  auto handed = run(false);
  INFO(message(handed));
  REQUIRE(handed.outcome == Outcome::kUndefined);
  CHECK(title(handed) == "read before the write is complete (RAW)");
}

// A 2-SM pair's accumulator: both CTAs' epilogues release the leader's acc_empty (`arrive ... cta=0`); FIXED = 0 counts
// one CTA's 128 threads, so the phases run ahead of the rounds.
const char* kPairCount = R"(param TILES = 4
kernel k grid=(2,1,1) cluster=(2,1,1) warps=8 {
  mbarrier acc_full count=1
  mbarrier acc_empty count=128 + FIXED * 128
  warp 0 mma {
    for t in 0..TILES {
      if cluster_rank == 0 {
        wait acc_empty parity=(t & 1) ^ 1
        compute cycles=500
        elect { arrive acc_full }
        elect { arrive acc_full cta=1 }
      }
    }
    if cluster_rank == 0 { wait acc_empty parity=(TILES & 1) ^ 1 }
  }
  warpgroup 1 epilogue {
    for t in 0..TILES {
      wait acc_full parity=t & 1
      compute cycles=300 + (1 - cluster_rank) * SLOW_LEADER * 400
      arrive acc_empty cta=0
    }
  }
}
)";

TEST_CASE("misuse: a pair's release barrier that counts one CTA's arrivals: the count is named, for a remote arrive too",
          "[misuse][mbarrier]") {
  // The leader's epilogue slow: the peer's remote arrive runs into the next phase.
  auto remote = run_text(with("param FIXED = 0\nparam SLOW_LEADER = 1\n", kPairCount), "b200");
  INFO(message(remote));
  REQUIRE(remote.outcome == Outcome::kUndefined);
  CHECK(title(remote) == "arrive before the previous phase was observed");
  CHECK_THAT(message(remote), Catch::Contains("completed with the arrivals of CTA(s) 0 alone (count 128), while CTA 1 arrives "
                                              "on it too (this arrive)"));
  // The peer's arrivals complete the phase: the leader's own arrive is reported, with the peer's warps named.
  auto own = run_text(with("param FIXED = 0\nparam SLOW_LEADER = 0\n", kPairCount), "b200");
  INFO(message(own));
  REQUIRE(own.outcome == Outcome::kUndefined);
  CHECK_THAT(message(own), Catch::Contains("completed with the arrivals of warps 4,5,6,7 of the peer CTA alone (count 128)"));
  CHECK(run_text(with("param FIXED = 1\nparam SLOW_LEADER = 1\n", kPairCount), "b200").outcome == Outcome::kFinished);
  CHECK(run_text(with("param FIXED = 1\nparam SLOW_LEADER = 0\n", kPairCount), "b200").outcome == Outcome::kFinished);
}

// An sm80 ring that loads first: each k-block refills the stage of k-block k - 1 (the right stage), then waits and
// syncs; FIXED = 0 refills before the barrier that ends the other warps' reads of that stage.
const char* kLoadsFirst = R"(param STAGES = 3
param KT = 12
kernel gemm grid=(1,1,1) warps=4 {
  smem sA[STAGES] bytes=8K
  warps 0..4 mma {
    for k in 0..STAGES - 1 {
      cp.async bytes=2K dst=sA[k]
      cp.async.commit
    }
    for k in 0..KT {
      let s = k % STAGES
      let next = k + STAGES - 1
      if FIXED { bar.sync 0 }
      if next < KT { cp.async bytes=2K dst=sA[next % STAGES] }
      cp.async.commit
      cp.async.wait STAGES - 1
      bar.sync 0
      ldmatrix bytes=2K src=sA[s]
      compute cycles=100 + warp * 40
    }
    cp.async.wait 0
  }
}
)";

TEST_CASE("misuse: a loads-first sm80 ring that refills before the barrier is told both ways", "[misuse][cp.async]") {
  auto bug = run_text(with("param FIXED = 0\n", kLoadsFirst));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(bug), Catch::Matches(".*Or it is that stage of k-block k - 1, refilled before the barrier that ends the "
                                          "other warps' reads of it \\(warp [1-3] read it at line 19\\).*"));
  CHECK(run_text(with("param FIXED = 1\n", kLoadsFirst)).outcome == Outcome::kFinished);
}

// A cp.async ring signalled with cp.async.arrive; FIXED = 0 issues the arrive before the stage's copies.
const char* kArriveFirst = R"(param STAGES = 2
param KT = 8
kernel k grid=(1,1,1) warps=2 {
  mbarrier full[STAGES] count=32
  mbarrier empty[STAGES] count=1
  smem sA[STAGES] bytes=8K
  warp 0 producer {
    for k in 0..KT {
      let s = k % STAGES
      wait empty[s] parity=((k / STAGES) & 1) ^ 1
      if FIXED == 0 { cp.async.arrive full[s] noinc }
      cp.async bytes=8K dst=sA[s]
      if FIXED { cp.async.arrive full[s] noinc }
    }
    cp.async.wait 0
  }
  warp 1 math {
    for k in 0..KT {
      let s = k % STAGES
      wait full[s] parity=(k / STAGES) & 1
      ldmatrix bytes=8K src=sA[s]
      elect { arrive empty[s] }
    }
  }
}
)";

TEST_CASE("misuse: a cp.async.arrive issued before the copies it should track names the arrive", "[misuse][cp.async]") {
  auto bug = run_text(with("param FIXED = 0\n", kArriveFirst));
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "read before the write is complete (RAW)");
  CHECK_THAT(message(bug), Catch::Contains("warp 1 waited on full[0], which warp 0 signals with `cp.async.arrive full[s] "
                                           "noinc` (line 12), and that arrive") &&
                               Catch::Contains("came before this copy (line 13") && !Catch::Contains("bar.sync 0"));
  CHECK(run_text(with("param FIXED = 1\n", kArriveFirst)).outcome == Outcome::kFinished);
  // The arrive written after the copy, and a consumer whose parity never flips: the read is early for another reason.
  auto parity = run_text(R"(param KT = 4
kernel k grid=(1,1,1) warps=2 {
  mbarrier full count=32
  mbarrier empty count=1
  smem sA bytes=8K
  warp 0 producer {
    for k in 0..KT {
      wait empty parity=(k & 1) ^ 1
      cp.async bytes=8K dst=sA
      compute cycles=300
      cp.async.arrive full noinc
    }
    cp.async.wait 0
  }
  warp 1 math {
    for k in 0..KT {
      wait full parity=0
      ldmatrix bytes=8K src=sA
      elect { arrive empty }
      compute cycles=100
    }
  }
}
)");
  INFO(message(parity));
  REQUIRE(parity.outcome == Outcome::kUndefined);
  CHECK_THAT(message(parity), !Catch::Contains("came before this copy"));
}

// An accumulator ring of two stages of N = 256 columns: STRIDE 128 puts stage 1 over half of stage 0.
const char* kAccOverlap = R"(param TILES = 4
gpu b200
kernel k grid=(1,1,1) warps=8 {
  mbarrier full count=1
  mbarrier acc_full[2] count=1
  mbarrier acc_empty[2] count=128
  smem sA bytes=16K
  smem sB bytes=32K
  warp 0 mma {
    tmem.alloc cols=512 -> tmem
    bar.arrive 6 threads=160
    elect {
      arrive.expect_tx full tx=48K
      tma.load bytes=16K dst=sA bar=full
      tma.load bytes=32K dst=sB bar=full
    }
    wait full parity=0
    for t in 0..TILES {
      let a = t % 2
      wait acc_empty[a] parity=((t / 2) & 1) ^ 1
      elect {
        umma m128n256k16 kind=f16 a=sA b=sB count=4 tmem=tmem + a * STRIDE
        umma.commit acc_full[a]
      }
    }
    wait acc_empty[0] parity=((TILES / 2) & 1) ^ 1
    wait acc_empty[1] parity=((TILES / 2) & 1) ^ 1
    tmem.relinquish
    tmem.dealloc tmem cols=512
  }
  warpgroup 1 epilogue {
    bar.sync 6 threads=160
    for t in 0..TILES {
      let a = t % 2
      wait acc_full[a] parity=(t / 2) & 1
      for n in 0..4 {
        tmem.ld 32x32b.x64 tmem=a * STRIDE + n * 64
        tmem.wait ld
        compute cycles=200
      }
      arrive acc_empty[a]
    }
  }
}
)";

TEST_CASE("misuse: accumulator stages closer than their width overlap in TMEM, and the report says so", "[misuse][tcgen05]") {
  auto bug = run_text(with("param STRIDE = 128\n", kAccOverlap), "b200");
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK(title(bug) == "read before the write is complete (RAW)");
  CHECK_THAT(message(bug), Catch::Contains("the MMA at line 23 writes TMEM columns 128..383, and warp 4 waited for the "
                                           "accumulator at columns 0..255 (the same MMA at another address, line 23): the two "
                                           "overlap at columns 128..255"));
  CHECK(run_text(with("param STRIDE = 256\n", kAccOverlap), "b200").outcome == Outcome::kFinished);
}

// A 2-SM pair: both CTAs' loads complete on the leader's full barrier, and the leader's MMA releases the stage with a
// commit. MASK = 0 commits to its own empty only: the peer's loader waits forever, and the leader's stage lacks its bytes.
const char* kPairRelease = R"(kernel k grid=(2,1,1) cluster=(2,1,1) warps=2 {
  mbarrier full count=1
  mbarrier empty count=1
  smem sA bytes=16K
  smem sB bytes=16K
  warp 0 mma { if cluster_rank == 0 {
    tmem.alloc cols=128 -> acc
    for k in 0..2 {
      wait full parity=k & 1
      elect { umma m128n128k16 kind=f16 a=sA b=sB tmem=acc
              if MASK { umma.commit empty multicast=0x3 } else { umma.commit empty } }
    }
    wait empty parity=1
    tmem.relinquish
    tmem.dealloc acc cols=128 } }
  warp 1 load {
    for k in 0..2 {
      elect {
        wait empty parity=(k & 1) ^ 1
        if cluster_rank == 0 { arrive.expect_tx full tx=32K }
        tma.load bytes=16K dst=sA bar=full bar_cta=0
      }
    }
    elect { wait empty parity=1 }
  }
}
)";

TEST_CASE("misuse: a pair's stage released by a commit that reaches the leader only: the commit leads the causes",
          "[misuse][deadlock][tcgen05]") {
  auto bug = run_text(with("param MASK = 0\n", kPairRelease), "b200");
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  INFO(test::causes(bug));
  REQUIRE_FALSE(bug.deadlock.causes.empty());
  // (the symptom, the leader's stage stuck at half its bytes, comes after)
  CHECK_THAT(bug.deadlock.causes.front(), Catch::StartsWith("empty: none of the 1 arrivals of phase 0 came") &&
                                              Catch::Contains("which signals rank 0 only: if it should signal this CTA's "
                                                              "empty too, it needs a multicast mask that names rank 1"));
  CHECK(run_text(with("param MASK = 1\n", kPairRelease), "b200").outcome == Outcome::kFinished);
}

// A reusable grid barrier: every CTA adds 1 to count, the last resets it and bumps the generation the others spin on.
// FIXED = 0 publishes the generation before the reset: CTAs released by it add to count for the next barrier, and the
// reset erases their arrivals.
const char* kGridReset = R"(param CTAS = 64
param ROUNDS = 3
gpu h100-sxm
kernel grid_barrier grid=(CTAS, 1, 1) warps=4 {
  global count init=0
  global gen init=0
  warps 0..4 worker {
    for r in 0..ROUNDS {
      compute cycles=40 + (cta % 7) * 10                     # this phase's work (short: a fused elementwise step)
      bar.sync 0
      if warp == 0 {
        let old = 0
        elect { atom.add count val=1 sem=acq_rel -> old }
        if old == CTAS - 1 {
          elect {
            if FIXED == 0 { st.release gen val=r + 1 }
            compute cycles=1500
            st.relaxed count val=0
            if FIXED { st.release gen val=r + 1 }
          }
        } else {
          spin gen ge=r + 1
        }
      }
      bar.sync 0
    }
  }
}
)";

TEST_CASE("misuse: a grid barrier's counter reset after the release that lets the others add again loses arrivals",
          "[misuse][global][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kGridReset));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  INFO(test::causes(bug));
  REQUIRE_FALSE(bug.deadlock.causes.empty());
  CHECK_THAT(bug.deadlock.causes.front(),
             Catch::Matches("count: CTA [0-9]+ warp 0's `st.relaxed count val=0` \\(line 19, cycle [0-9]+\\) overwrote [0-9]+ "
                            "read-modify-write\\(s\\) that other CTAs made after its own `atom.add count val=1 sem=acq_rel "
                            "-> old` \\(line 14, .*those arrivals are lost.*Its `st.release gen val=r \\+ 1` \\(line 17, "
                            "cycle [0-9]+\\) came before the reset and let them go on: reset first, then release"));
  CHECK_THAT(test::causes(bug), !Catch::Contains("a turn or count off by one?"));
  CHECK(run_text(with("param FIXED = 1\n", kGridReset)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a turn handed on with a relaxed store after global writes publishes them without a release",
          "[misuse][global]") {
  // Serial split-K: each split adds to the tile and hands the turn on; HANDOFF is how.
  auto run = [](const char* handoff) {
    return run_text(fmt::format(R"(param TILES = 4
param SPLITS = 3
kernel splitk grid=(TILES * SPLITS, 1, 1) warps=4 {{
  global sem[TILES] init=0
  tensor Dp dtype=f32 shape=(TILES * 128, 128)
  warps 0..4 gemm {{
    let tile = cta % TILES
    let split = cta / TILES
    compute cycles=2000
    if split > 0 {{
      if warp == 0 {{ spin sem[tile] eq=split }}
      bar.sync 0
      ld.global src=Dp box=(32, 128) at=(tile * 128 + warp * 32, 0)
    }}
    st.global dst=Dp box=(32, 128) at=(tile * 128 + warp * 32, 0)
    bar.sync 0
    if warp == 0 {{ elect {{ {} }} }}
  }}
}}
)",
                                handoff));
  };
  auto relaxed = run("st.relaxed sem[tile] val=split + 1");
  REQUIRE(relaxed.outcome == Outcome::kFinished);
  REQUIRE(relaxed.warnings.size() == 1);
  CHECK_THAT(relaxed.warnings[0], Catch::Contains("a relaxed write publishes global data without a release: CTA 0 warp 0 "
                                                  "makes `st.relaxed sem[tile] val=split + 1`, which other warps acquire") &&
                                      Catch::Contains("after CTA 0 warp 0's `st.global dst=Dp"));
  CHECK(run("st.release sem[tile] val=split + 1").warnings.empty());
  CHECK(run("fence.gpu\n st.relaxed sem[tile] val=split + 1").warnings.empty());
  CHECK(run("red.add sem[tile] val=1 sem=release").warnings.empty());
  CHECK(run("red.add sem[tile] val=1").warnings.size() == 1);
}

TEST_CASE("misuse: a warp that overwrites the TMEM columns its own tcgen05.ld still reads is told to wait first",
          "[misuse][tcgen05]") {
  auto run = [](bool wait) {
    return run_text(fmt::format(R"(kernel k grid=(1,1,1) warps=4 {{
  warpgroup 0 softmax {{
    if warp == 0 {{ tmem.alloc cols=128 -> t }}
    bar.sync 1 threads=128
    tmem.ld 32x32b.x64 tmem=0
    {}
    tmem.st 32x32b.x32 tmem=0
    tmem.wait st
    bar.sync 1 threads=128
    if warp == 0 {{
      tmem.relinquish
      tmem.dealloc 0 cols=128
    }}
  }}
}}
)",
                                wait ? "tmem.wait ld" : ""),
                    "b200");
  };
  auto bug = run(false);
  INFO(message(bug));
  REQUIRE(bug.outcome == Outcome::kUndefined);
  CHECK_THAT(message(bug), Catch::Contains("tcgen05.ld is asynchronous until its `tmem.wait ld` (tcgen05.wait::ld), and this "
                                           "op of the same warp touches those columns before that wait: wait first"));
  CHECK(run(true).outcome == Outcome::kFinished);
}

// An epilogue's row reduction: each of the 8 consumer warps writes its partial row sums to sRed, a barrier gathers them,
// and warp 4 reads all 8 partials (more than it wrote itself). FIXED = 0 writes the partials before the barrier the
// reducer passes only after its previous read; REDUCER_SYNC = 0 lets the reducer only arrive there before it reads.
const char* kRowReduce = R"(param SUB = 12
param LATE = 0
kernel evt grid=(1,1,1) warps=12 {
  smem sRed bytes=8 * 256
  warpgroups 1..3 consumer {
    compute cycles=500
    for i in 0..SUB {
      compute cycles=80
      if FIXED == 0 && i >= LATE { st.shared bytes=256 dst=sRed }
      bar.sync 1 threads=256
      if FIXED || i < LATE { st.shared bytes=256 dst=sRed }
      if warp == 4 && REDUCER_SYNC == 0 { bar.arrive 2 threads=256 }
      else { bar.sync 2 threads=256 }
      if warp == 4 {
        ld.shared bytes=8 * 256 src=sRed
        compute cycles=60
      }
    }
  }
}
)";

TEST_CASE("misuse: a reducer reading every warp's partial sums is checked against their stores", "[misuse][hazard]") {
  // The reducer writes its own partial too: it reads more than it wrote, so it takes what the others hand it.
  auto hoisted = run_text(with("param FIXED = 0\nparam REDUCER_SYNC = 1\n", kRowReduce));
  INFO(message(hoisted));
  REQUIRE(hoisted.outcome == Outcome::kUndefined);
  CHECK(title(hoisted) == "buffer overwritten while still read (WAR)");
  CHECK_THAT(message(hoisted), Catch::Contains("warp 4 reads other warps' parts of sRed (its ld.shared takes more bytes than "
                                               "its own st.shared wrote there)"));
  // The same from round 9 on: the reducer still reads more than it wrote since its previous read.
  std::string late_text = with("param FIXED = 0\nparam REDUCER_SYNC = 1\n", kRowReduce);
  late_text.replace(late_text.find("param LATE = 0"), 14, "param LATE = 9");
  auto late = run_text(late_text);
  INFO(message(late));
  CHECK(title(late) == "buffer overwritten while still read (WAR)");
  auto arrive = run_text(with("param FIXED = 1\nparam REDUCER_SYNC = 0\n", kRowReduce));
  INFO(message(arrive));
  REQUIRE(arrive.outcome == Outcome::kUndefined);
  CHECK(title(arrive) == "read before the write is complete (RAW)");
  CHECK_THAT(message(arrive), Catch::Contains("(here warp 4, before it reads) needs `bar.sync 2`"));
  CHECK(run_text(with("param FIXED = 1\nparam REDUCER_SYNC = 1\n", kRowReduce)).outcome == Outcome::kFinished);
}

TEST_CASE("misuse: a lock taken with an acquiring compare-and-swap after global stores is no relaxed publish",
          "[misuse][global]") {
  auto lock = run_text(R"(kernel k grid=(8,1,1) warps=1 {
  global lock init=0
  tensor D dtype=f32 shape=(1024, 128)
  tensor Acc dtype=f32 shape=(32, 128)
  warp 0 w {
    compute cycles=100 + cta * 50
    st.global dst=D box=(32, 128) at=(cta * 32, 0)
    let got = 1
    while got != 0 {
      elect { atom.cas lock cmp=0 val=1 sem=acquire -> got }
    }
    ld.global src=Acc box=(32, 128) at=(0, 0)
    st.global dst=Acc box=(32, 128) at=(0, 0)
    elect { st.release lock val=0 }
  }
}
)");
  CHECK(lock.outcome == Outcome::kFinished);
  CHECK(lock.warnings.empty());
}

TEST_CASE("misuse: a counter reset after its storer saw every add erases nothing and a grid of 264 CTAs still names the reset",
          "[misuse][global][deadlock]") {
  // CTA 0 waits until all CTAs added, then resets the count: no arrival is lost. The deadlock (a spin on a flag that
  // nothing writes) is told as such, with no erase cause.
  auto observed = run_text(R"(param CTAS = 4
kernel k grid=(CTAS,1,1) warps=1 {
  global cnt init=0
  global flag init=0
  warp 0 w {
    compute cycles=10 + cta * 200
    elect { red.add cnt val=1 sem=release }
    if cta == 0 {
      spin cnt ge=CTAS
      elect { st.relaxed cnt val=0 }
    }
    spin flag ge=1
  }
}
)");
  REQUIRE(observed.outcome == Outcome::kDeadlock);
  INFO(test::causes(observed));
  CHECK_THAT(test::causes(observed), !Catch::Contains("those arrivals are lost"));
  CHECK_THAT(test::causes(observed), Catch::Contains("no op of the kernel writes flag"));
  // The grid barrier whose reset comes after the release, with more CTAs than the adds a word keeps at once.
  std::string big_text = with("param FIXED = 0\n", kGridReset);
  big_text.replace(big_text.find("param CTAS = 64"), 15, "param CTAS = 264");
  auto big = run_text(big_text);
  REQUIRE(big.outcome == Outcome::kDeadlock);
  CHECK_THAT(big.deadlock.causes.front(), Catch::Contains("those arrivals are lost"));
}

TEST_CASE("misuse: the first turn of warpgroups that take turns given inside a loop that one of them never enters",
          "[misuse][named]") {
  // Two warpgroups alternate through bar 3 / bar 4; warpgroup 1 gives warpgroup 0 its first turn. With one tile,
  // warpgroup 1's tile loop runs no round: an arrive inside it never comes.
  auto run = [](bool inside) {
    return run_text(fmt::format(R"(param TILES = 1
kernel k grid=(1,1,1) warps=8 {{
  warpgroups 0..2 consumer {{
    let wg = warpgroup
    {}
    let j = 0
    for t in wg..TILES step 2 {{
      {}
      bar.sync 3 + wg threads=256
      compute cycles=500
      bar.arrive 3 + (1 - wg) threads=256
      let j = j + 1
    }}
  }}
}}
)",
                                inside ? "" : "if wg == 1 { bar.arrive 3 threads=256 }",
                                inside ? "if wg == 1 && j == 0 { bar.arrive 3 threads=256 }" : ""));
  };
  auto bug = run(true);
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  INFO(test::causes(bug));
  CHECK_THAT(test::causes(bug), Catch::Contains("Warp(s) 4, 5, 6, 7 (128 threads) exited without reaching bar 3, though their "
                                                "role's code uses it (`bar.arrive 3 threads=256` at line 8)") &&
                                    Catch::Contains("belongs before that loop"));
  CHECK(run(false).outcome == Outcome::kFinished);
}

// Mixed-input GEMM: a transform warpgroup converts B into a ring of converted stages; the MMA warpgroup releases a
// converted stage after `wgmma.wait 1`. FIXED = 0 releases the stage just issued on (c) instead of the previous one.
const char* kMixedRelease = R"(param STAGES = 4
param CSTAGES = 2
param KT = 16
const TM = 64
const TN = 128
const TK = 64
gpu h100-sxm
kernel mixed_gemm grid=(8,1,1) warps=12 {
  mbarrier full[STAGES] count=1
  mbarrier empty[STAGES] count=8               # one elected lane per warp of the two warpgroups
  mbarrier cvt_full[CSTAGES] count=4           # one elected lane per transform warp
  mbarrier cvt_empty[CSTAGES] count=4          # one elected lane per MMA warp
  smem sA[STAGES] bytes=TM * TK * 2
  smem sBq[STAGES] bytes=TN * TK
  smem sB[CSTAGES] bytes=TN * TK * 2
  tensor A dtype=bf16 shape=(4096, 4096)
  tensor Bq dtype=s8 shape=(4096, 4096)

  warp 0 producer {
    elect {
      for k in 0..KT {
        let s = k % STAGES
        wait empty[s] parity=((k / STAGES) & 1) ^ 1
        arrive.expect_tx full[s] tx=TM * TK * 2 + TN * TK
        tma.load A box=(TM, TK) at=(cta * TM, k * TK) dst=sA[s] bar=full[s] swizzle=128
        tma.load Bq box=(TN, TK) at=(0, k * TK) dst=sBq[s] bar=full[s] swizzle=64
      }
      for k in KT..KT + STAGES {
        wait empty[k % STAGES] parity=((k / STAGES) & 1) ^ 1
      }
    }
  }

  warpgroup 1 transform {
    for k in 0..KT {
      let s = k % STAGES
      let c = k % CSTAGES
      wait full[s] parity=(k / STAGES) & 1
      ld.shared bytes=TN * TK / 4 src=sBq[s]     # each warp its quarter of the raw int8 tile
      elect { arrive empty[s] }
      compute cycles=200                        # int8 -> bf16 (and scale)
      wait cvt_empty[c] parity=((k / CSTAGES) & 1) ^ 1
      st.shared bytes=TN * TK * 2 / 4 dst=sB[c]
      fence.proxy.async                         # generic writes -> visible to wgmma (async proxy)
      elect { arrive cvt_full[c] }
    }
  }

  warpgroup 2 mma {
    for k in 0..KT {
      let s = k % STAGES
      let c = k % CSTAGES
      wait full[s] parity=(k / STAGES) & 1
      wait cvt_full[c] parity=(k / CSTAGES) & 1
      wgmma.fence
      wgmma m64n128k16 dtype=bf16 a=sA[s] b=sB[c] count=4
      wgmma.commit
      if k > 0 {
        wgmma.wait 1
        elect {
          arrive empty[(k - 1) % STAGES]
          if FIXED { arrive cvt_empty[(k - 1) % CSTAGES] } else { arrive cvt_empty[c] }
        }
      }
    }
    wgmma.wait 0
    elect {
      arrive empty[(KT - 1) % STAGES]
      arrive cvt_empty[(KT - 1) % CSTAGES]
    }
  }
}
)";

TEST_CASE("misuse: a release after wgmma.wait 1 that names the stage just issued on, not the previous one",
          "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kMixedRelease));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  INFO(test::causes(bug));
  CHECK_THAT(bug.deadlock.causes.front(),
             Catch::StartsWith("cvt_empty[0]: none of the 4 arrivals of phase 0 came") &&
                 Catch::Contains("without arriving on cvt_empty[0] in between, while it did arrive on cvt_empty[1]") &&
                 Catch::Contains("frees the previous k-block's stage"));
  CHECK(run_text(with("param FIXED = 1\n", kMixedRelease)).outcome == Outcome::kFinished);
}

// FA3 forward with K and V in rings of their own; FIXED = 0 waits for V's stage on K's full barrier.
const char* kWaitWrongRing = R"(param NB = 8
param KS = 2
const BM = 64
const BN = 128
const HD = 128
gpu h100-sxm
kernel fa3_fwd grid=(8,1,1) warps=8 {
  mbarrier q_full count=1
  mbarrier full_k[KS] count=1
  mbarrier empty_k[KS] count=4
  mbarrier full_v[KS] count=1
  mbarrier empty_v[KS] count=4
  smem sQ bytes=BM * HD * 2
  smem sK[KS] bytes=BN * HD * 2
  smem sV[KS] bytes=BN * HD * 2
  smem sO bytes=BM * HD * 2
  tensor Q dtype=bf16 shape=(8192, HD)
  tensor K dtype=bf16 shape=(8192, HD)
  tensor V dtype=bf16 shape=(8192, HD)
  tensor O dtype=bf16 shape=(8192, HD)

  warp 0 producer {
    elect {
      arrive.expect_tx q_full tx=BM * HD * 2
      tma.load Q box=(BM, 64) at=(cta * BM, 0) dst=sQ bar=q_full swizzle=128
      tma.load Q box=(BM, 64) at=(cta * BM, 64) dst=sQ bar=q_full swizzle=128
      # K runs one block ahead of V (FA3's producer: K_0, then K_j, V_{j-1}, ..., V_{NB-1})
      for j in 0..NB + 1 {
        if j < NB {
          let s = j % KS
          wait empty_k[s] parity=((j / KS) & 1) ^ 1
          arrive.expect_tx full_k[s] tx=BN * HD * 2
          tma.load K box=(BN, 64) at=(j * BN, 0) dst=sK[s] bar=full_k[s] swizzle=128
          tma.load K box=(BN, 64) at=(j * BN, 64) dst=sK[s] bar=full_k[s] swizzle=128
        }
        if j > 0 {
          let s = (j - 1) % KS
          wait empty_v[s] parity=(((j - 1) / KS) & 1) ^ 1
          arrive.expect_tx full_v[s] tx=BN * HD * 2
          tma.load V box=(BN, 64) at=((j - 1) * BN, 0) dst=sV[s] bar=full_v[s] swizzle=128
          tma.load V box=(BN, 64) at=((j - 1) * BN, 64) dst=sV[s] bar=full_v[s] swizzle=128
        }
      }
      for j in NB..NB + KS {                       # producer tail
        wait empty_k[j % KS] parity=((j / KS) & 1) ^ 1
        wait empty_v[j % KS] parity=((j / KS) & 1) ^ 1
      }
    }
  }

  warpgroup 1 consumer {
    wait q_full parity=0
    wait full_k[0] parity=0
    wgmma.fence
    wgmma m=64 n=BN k=16 dtype=bf16 a=sQ b=sK[0] count=HD / 16      # S_0 = Q K_0^T
    wgmma.commit
    wgmma.wait 0
    elect { arrive empty_k[0] }
    compute cycles=600                              # softmax(S_0): row max, exp2, row sum -> P_0
    for j in 1..NB {
      let sk = j % KS
      let sv = (j - 1) % KS
      wait full_k[sk] parity=(j / KS) & 1
      wgmma.fence
      wgmma m=64 n=BN k=16 dtype=bf16 a=sQ b=sK[sk] count=HD / 16   # S_j = Q K_j^T
      wgmma.commit
      if FIXED { wait full_v[sv] parity=((j - 1) / KS) & 1 } else { wait full_k[sv] parity=((j - 1) / KS) & 1 }
      wgmma m=64 n=HD k=16 dtype=bf16 b=sV[sv] count=BN / 16       # O += P_{j-1} V_{j-1} (P from registers)
      wgmma.commit
      wgmma.wait 1                                  # S_j complete; P_{j-1} V_{j-1} may still run
      elect { arrive empty_k[sk] }
      compute cycles=600                            # softmax(S_j)
      wgmma.wait 0                                  # P_{j-1} V_{j-1} complete
      elect { arrive empty_v[sv] }
      compute cycles=100                            # rescale O by exp2(m_old - m_new)
    }
    let sv = (NB - 1) % KS
    wait full_v[sv] parity=((NB - 1) / KS) & 1
    wgmma.fence
    wgmma m=64 n=HD k=16 dtype=bf16 b=sV[sv] count=BN / 16       # O += P_{NB-1} V_{NB-1}
    wgmma.commit
    wgmma.wait 0
    elect { arrive empty_v[sv] }
    # epilogue: O / row_sum -> bf16 in smem -> TMA store; LSE straight to global
    compute cycles=200
    st.shared bytes=BM * HD * 2 / 4 dst=sO
    fence.proxy.async
    bar.sync 1 threads=128
    if warp_in_role == 0 {
      elect {
        tma.store O box=(BM, 64) at=(cta * BM, 0) src=sO swizzle=128
        tma.commit
        tma.wait 0
      }
    }
    st.global bytes=BM * 4 / 4                      # LSE of this warp's 16 rows
  }
}
)";

TEST_CASE("misuse: a wait on the sibling ring's barrier is asked about by name", "[misuse][deadlock]") {
  auto bug = run_text(with("param FIXED = 0\n", kWaitWrongRing));
  REQUIRE(bug.outcome == Outcome::kDeadlock);
  INFO(test::causes(bug));
  CHECK_THAT(bug.deadlock.causes.front(),
             Catch::Contains("full_k and full_v are filled alike (3 ops signal each), but the kernel waits on full_k in 3 "
                             "places and on full_v in 2") &&
                 Catch::Contains("mean full_v?"));
  CHECK(run_text(with("param FIXED = 1\n", kWaitWrongRing)).outcome == Outcome::kFinished);
}
