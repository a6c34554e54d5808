#include "isa/ops.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "isa/limits.hpp"

namespace smpipe::isa {

namespace {

using T = AttrType;
using A = Attr;
constexpr BarrierUse kSig = BarrierUse::kSignal;
constexpr bool kReq = true;
constexpr bool kOpt = false;
constexpr std::int64_t kRelaxed = static_cast<std::int64_t>(MemOrder::kRelaxed);

std::vector<OpSpec> build_table() {
  std::vector<OpSpec> t = {
      {OpKind::kMbarrierInit, "mbarrier.init", {{A::kBar, T::kBarrier, kReq, 0}, {A::kCount, T::kInt, kReq, 0}}, {"bar"}, 0,
       "explicit in-kernel init"},
      {OpKind::kMbarrierInval, "mbarrier.inval", {{A::kBar, T::kBarrier, kReq, 0}}, {"bar"}, 0, "invalidate"},
      {OpKind::kArrive, "arrive", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kCount, T::kInt, kOpt, -1}, {A::kCta, T::kInt, kOpt, -1}},
       {"bar"}, 0, "arrive (count defaults to the executing lanes); cta= a peer's barrier by cluster rank"},
      {OpKind::kArriveExpectTx, "arrive.expect_tx",
       {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kTx, T::kInt, kReq, 0}, {A::kCta, T::kInt, kOpt, -1}}, {"bar"}, 0,
       "expect-tx then arrive(1)"},
      {OpKind::kArriveNoComplete, "arrive.nocomplete", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kCount, T::kInt, kOpt, -1}},
       {"bar"}, 0, "arrive that must not complete the phase (.noComplete)"},
      {OpKind::kExpectTx, "expect_tx", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kTx, T::kInt, kReq, 0}, {A::kCta, T::kInt, kOpt, -1}},
       {"bar"}, 0, "raise the tx-count"},
      {OpKind::kCompleteTx, "complete_tx", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kTx, T::kInt, kReq, 0}, {A::kCta, T::kInt, kOpt, -1}},
       {"bar"}, 0, "lower the tx-count"},
      {OpKind::kArriveDrop, "arrive.drop", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kCount, T::kInt, kOpt, -1}, {A::kCta, T::kInt, kOpt, -1}},
       {"bar"}, 0, "arrive and lower the expected count for later phases"},
      {OpKind::kWait, "wait", {{A::kBar, T::kBarrier, kReq, 0}, {A::kParity, T::kInt, kReq, 0}, {A::kCta, T::kInt, kOpt, -1}},
       {"bar"}, 0, "block until the phase with parity P has completed"},
      {OpKind::kTestWait, "test_wait", {{A::kBar, T::kBarrier, kReq, 0}, {A::kParity, T::kInt, kReq, 0}}, {"bar"}, 1,
       "non-blocking; V = 1 if complete"},
      {OpKind::kBarSync, "bar.sync", {{A::kId, T::kNamedBar, kReq, 0}, {A::kThreads, T::kInt, kOpt, -1}}, {"id"}, 0,
       "named barrier arrive and wait"},
      {OpKind::kBarArrive, "bar.arrive", {{A::kId, T::kNamedBar, kReq, 0}, {A::kThreads, T::kInt, kReq, 0}}, {"id"}, 0,
       "named barrier arrive without waiting"},
      {OpKind::kClusterSync, "cluster.sync", {}, {}, 0, "cluster-wide arrive + wait"},
      {OpKind::kFenceProxyAsync, "fence.proxy.async", {}, {}, 0, "generic -> async proxy ordering fence"},
      {OpKind::kFenceMbarrierInit, "fence.mbarrier_init", {}, {}, 0, "makes barrier inits visible to the cluster"},
      {OpKind::kTmaLoad, "tma.load",
       {{A::kTensor, T::kTensor, kOpt, 0}, {A::kBox, T::kTuple, kOpt, 0}, {A::kAt, T::kTuple, kOpt, 0}, {A::kBytes, T::kInt, kOpt, -1},
        {A::kDst, T::kSmem, kReq, 0}, {A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kMulticast, T::kInt, kOpt, 0}, {A::kSwizzle, T::kInt, kOpt, 0},
        {A::kBarCta, T::kInt, kOpt, -1}},
       {"tensor"}, 0,
       "bulk tensor load; complete_tx(bytes) on bar (in every CTA of the multicast mask; bar_cta=R: on cluster rank R's barrier)"},
      {OpKind::kTmaStore, "tma.store",
       {{A::kTensor, T::kTensor, kOpt, 0}, {A::kBox, T::kTuple, kOpt, 0}, {A::kAt, T::kTuple, kOpt, 0}, {A::kBytes, T::kInt, kOpt, -1},
        {A::kSrc, T::kSmem, kReq, 0}, {A::kSwizzle, T::kInt, kOpt, 0}},
       {"tensor"}, 0, "bulk tensor store into the current bulk group"},
      {OpKind::kTmaCommit, "tma.commit", {}, {}, 0, "close the current bulk group"},
      {OpKind::kTmaWait, "tma.wait", {{A::kN, T::kInt, kReq, 0}, {A::kRead, T::kFlag, kOpt, 0}}, {"n", "read"}, 0,
       "wait until at most N bulk groups are pending (read: until their smem was read)"},
      {OpKind::kTmaPrefetch, "tma.prefetch", {{A::kTensor, T::kTensor, kReq, 0}, {A::kBox, T::kTuple, kReq, 0}, {A::kAt, T::kTuple, kOpt, 0}},
       {"tensor"}, 0, "L2 prefetch, no completion"},
      {OpKind::kCpAsync, "cp.async",
       {{A::kBytes, T::kInt, kOpt, -1}, {A::kDst, T::kSmem, kReq, 0}, {A::kSrc, T::kTensor, kOpt, 0}, {A::kSize, T::kInt, kOpt, 16},
        {A::kBox, T::kTuple, kOpt, 0}, {A::kAt, T::kTuple, kOpt, 0}, {A::kLines, T::kInt, kOpt, 0}},
       {}, 0,
       "sm80 async copy (bytes for the whole warp, or the box of src= it copies; size = bytes per thread per copy: 4, 8 or 16; "
       "lines = the 128-byte lines one warp instruction touches)"},
      {OpKind::kCpAsyncCommit, "cp.async.commit", {}, {}, 0, "close the current cp.async group"},
      {OpKind::kCpAsyncWait, "cp.async.wait", {{A::kN, T::kInt, kReq, 0}}, {"n"}, 0,
       "wait until at most N cp.async groups are pending"},
      {OpKind::kCpAsyncArrive, "cp.async.arrive", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kNoinc, T::kFlag, kOpt, 0}},
       {"bar", "noinc"}, 0, "arrive on bar when this warp's prior cp.async complete"},
      {OpKind::kLdShared, "ld.shared", {{A::kBytes, T::kInt, kReq, 0}, {A::kSrc, T::kSmem, kOpt, 0}}, {}, 0, "shared memory load"},
      {OpKind::kStShared, "st.shared", {{A::kBytes, T::kInt, kReq, 0}, {A::kDst, T::kSmem, kOpt, 0}}, {}, 0, "shared memory store"},
      {OpKind::kLdmatrix, "ldmatrix", {{A::kBytes, T::kInt, kReq, 0}, {A::kSrc, T::kSmem, kReq, 0}}, {}, 0, "ldmatrix"},
      {OpKind::kLdGlobal, "ld.global",
       {{A::kBytes, T::kInt, kOpt, -1}, {A::kSrc, T::kTensor, kOpt, 0}, {A::kBox, T::kTuple, kOpt, 0}, {A::kAt, T::kTuple, kOpt, 0},
        {A::kSize, T::kInt, kOpt, 16}, {A::kLines, T::kInt, kOpt, 0}},
       {}, 0,
       "global load (waits for the data): bytes, or the box of src= it reads; size = bytes per thread per instruction (4, 8, 16), "
       "lines = the 128-byte lines one instruction touches"},
      {OpKind::kStGlobal, "st.global",
       {{A::kBytes, T::kInt, kOpt, -1}, {A::kDst, T::kTensor, kOpt, 0}, {A::kBox, T::kTuple, kOpt, 0}, {A::kAt, T::kTuple, kOpt, 0},
        {A::kSize, T::kInt, kOpt, 16}, {A::kLines, T::kInt, kOpt, 0}},
       {}, 0,
       "global store (fire and forget): bytes, or the box of dst= it writes; size = bytes per thread per instruction (4, 8, "
       "16), lines = the 128-byte lines one instruction touches"},
      {OpKind::kMmaSync, "mma.sync", {{A::kShape, T::kShape, kOpt, 0}, {A::kDtype, T::kDtype, kReq, 0}, {A::kCount, T::kInt, kOpt, 1},
        {A::kM, T::kInt, kOpt, 0}, {A::kN, T::kInt, kOpt, 0}, {A::kK, T::kInt, kOpt, 0}},
       {"shape"}, 0, "sm80 warp MMA"},
      {OpKind::kWgmmaFence, "wgmma.fence", {}, {}, 0, "warpgroup register fence"},
      {OpKind::kWgmma, "wgmma",
       {{A::kShape, T::kShape, kOpt, 0}, {A::kDtype, T::kDtype, kReq, 0}, {A::kA, T::kSmem, kOpt, 0}, {A::kB, T::kSmem, kOpt, 0},
        {A::kCount, T::kInt, kOpt, 1}, {A::kM, T::kInt, kOpt, 0}, {A::kN, T::kInt, kOpt, 0}, {A::kK, T::kInt, kOpt, 0}},
       {"shape"}, 0, "sm90 warpgroup MMA (async, warpgroup-collective)"},
      {OpKind::kWgmmaCommit, "wgmma.commit", {}, {}, 0, "commit the warpgroup's uncommitted wgmmas as a group"},
      {OpKind::kWgmmaWait, "wgmma.wait", {{A::kN, T::kInt, kReq, 0}}, {"n"}, 0, "wait until at most N wgmma groups are pending"},
      {OpKind::kTmemAlloc, "tmem.alloc", {{A::kCols, T::kInt, kReq, 0}, {A::kCtaGroup, T::kInt, kOpt, 1}}, {}, 1,
       "allocate TMEM columns (blocks until free); cta_group=2: one warp in each CTA of the pair, the same columns in both"},
      {OpKind::kTmemDealloc, "tmem.dealloc", {{A::kAddr, T::kInt, kReq, 0}, {A::kCols, T::kInt, kReq, 0}, {A::kCtaGroup, T::kInt, kOpt, 1}},
       {"addr"}, 0,
       "free TMEM columns"},
      {OpKind::kTmemRelinquish, "tmem.relinquish", {{A::kCtaGroup, T::kInt, kOpt, 1}}, {}, 0, "give up the right to allocate"},
      {OpKind::kUmma, "umma",
       {{A::kShape, T::kShape, kOpt, 0}, {A::kKind, T::kDtype, kReq, 0}, {A::kA, T::kSmem, kOpt, 0}, {A::kB, T::kSmem, kOpt, 0},
        {A::kCount, T::kInt, kOpt, 1}, {A::kCtaGroup, T::kInt, kOpt, 1}, {A::kM, T::kInt, kOpt, 0}, {A::kN, T::kInt, kOpt, 0},
        {A::kK, T::kInt, kOpt, 0}, {A::kTmem, T::kInt, kOpt, -1}},
       {"shape"}, 0, "tcgen05.mma (single thread); tmem= the accumulator's TMEM address (hazard checks)"},
      {OpKind::kUmmaCommit, "umma.commit", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kMulticast, T::kInt, kOpt, 0}}, {"bar"}, 0,
       "arrive(1) on bar when this thread's prior tcgen05 ops complete"},
      {OpKind::kTmemLd, "tmem.ld", {{A::kShape, T::kShape, kReq, 0}, {A::kTmem, T::kInt, kOpt, -1}}, {"shape"}, 0,
       "TMEM -> registers (async); tmem= the address read (hazard checks)"},
      {OpKind::kTmemSt, "tmem.st", {{A::kShape, T::kShape, kReq, 0}, {A::kTmem, T::kInt, kOpt, -1}}, {"shape"}, 0,
       "registers -> TMEM (async); tmem= the address written (hazard checks)"},
      {OpKind::kTmemWait, "tmem.wait", {{A::kLd, T::kFlag, kOpt, 0}, {A::kSt, T::kFlag, kOpt, 0}}, {"ld", "st"}, 0,
       "wait for this warp's tmem.ld or tmem.st"},
      {OpKind::kTmemCp, "tmem.cp", {{A::kShape, T::kShape, kReq, 0}, {A::kSrc, T::kSmem, kOpt, 0}}, {"shape"}, 0,
       "smem -> TMEM copy (tcgen05.cp)"},
      {OpKind::kClcTryCancel, "clc.try_cancel", {{A::kBar, T::kBarrier, kReq, 0, kSig}, {A::kMulticast, T::kFlag, kOpt, 0}}, {"multicast"}, 0,
       "cluster launch control request; the 16-byte response lands with complete_tx(16) on bar"},
      {OpKind::kClcQuery, "clc.query", {{A::kBar, T::kBarrier, kOpt, 0}}, {"bar"}, 1,
       "first CTA id of the cancelled cluster, or -1 (of the response that landed on bar, or the latest)"},
      {OpKind::kCompute, "compute", {{A::kCycles, T::kInt, kReq, 0}, {A::kShare, T::kInt, kOpt, 0}, {A::kMmaSpeed, T::kInt, kOpt, 100}},
       {"cycles"}, 0,
       "modelled ALU work; share= the percentage of its SM sub-partition it uses alone (shared above 100 %); mma_speed= the "
       "percentage of its speed it keeps while the SM's tensor pipe runs wgmmas"},
      {OpKind::kSleep, "sleep", {{A::kCycles, T::kInt, kReq, 0}}, {"cycles"}, 0, "idle time"},
      {OpKind::kAtomAdd, "atom.add", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}, {A::kSem, T::kSem, kOpt, kRelaxed}},
       {"addr"}, 1, "atomic add on a global word; V = the value before"},
      {OpKind::kAtomExch, "atom.exch", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}, {A::kSem, T::kSem, kOpt, kRelaxed}},
       {"addr"}, 1, "atomic exchange; V = the value before"},
      {OpKind::kAtomCas, "atom.cas",
       {{A::kAddr, T::kGlobal, kReq, 0}, {A::kCmp, T::kInt, kReq, 0}, {A::kVal, T::kInt, kReq, 0}, {A::kSem, T::kSem, kOpt, kRelaxed}},
       {"addr"}, 1, "atomic compare-and-swap (val is written when the word equals cmp); V = the value before"},
      {OpKind::kAtomMax, "atom.max", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}, {A::kSem, T::kSem, kOpt, kRelaxed}},
       {"addr"}, 1, "atomic maximum; V = the value before"},
      {OpKind::kRedAdd, "red.add", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}, {A::kSem, T::kSem, kOpt, kRelaxed}},
       {"addr"}, 0, "atomic add without a result (fire and forget)"},
      {OpKind::kLdAcquire, "ld.acquire", {{A::kAddr, T::kGlobal, kReq, 0}}, {"addr"}, 1, "load a global word with acquire semantics"},
      {OpKind::kLdRelaxed, "ld.relaxed", {{A::kAddr, T::kGlobal, kReq, 0}}, {"addr"}, 1, "load a global word (relaxed, gpu scope)"},
      {OpKind::kStRelease, "st.release", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}}, {"addr"}, 0,
       "store a global word with release semantics"},
      {OpKind::kStRelaxed, "st.relaxed", {{A::kAddr, T::kGlobal, kReq, 0}, {A::kVal, T::kInt, kReq, 0}}, {"addr"}, 0,
       "store a global word (relaxed, gpu scope)"},
      {OpKind::kSpin, "spin",
       {{A::kAddr, T::kGlobal, kReq, 0}, {A::kEq, T::kInt, kOpt, 0}, {A::kNe, T::kInt, kOpt, 0}, {A::kGe, T::kInt, kOpt, 0},
        {A::kGt, T::kInt, kOpt, 0}, {A::kLe, T::kInt, kOpt, 0}, {A::kLt, T::kInt, kOpt, 0}},
       {"addr"}, 0, "poll a global word with acquire loads until it compares (eq= ne= ge= gt= le= lt=) with the value"},
      {OpKind::kFenceGpu, "fence.gpu", {}, {}, 0,
       "fence.acq_rel.gpu (__threadfence): relaxed writes after it release, relaxed reads before it acquire"},
      {OpKind::kGridSync, "grid.sync", {}, {}, 0, "barrier of every thread of the grid (cooperative launch: all CTAs resident)"},
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (static_cast<std::size_t>(t[i].kind) != i) throw std::logic_error("op table out of OpKind order");
    for (AttrSpec& a : t[i].attrs) a.name = attr_name(a.attr);
  }
  if (t.size() != static_cast<std::size_t>(OpKind::kCount)) throw std::logic_error("op table incomplete");
  return t;
}

}  // namespace

std::string_view attr_name(Attr attr) {
  static constexpr std::string_view kNames[] = {
#define SMPIPE_ATTR_NAME(e, s) s,
      SMPIPE_ATTRIBUTES(SMPIPE_ATTR_NAME)
#undef SMPIPE_ATTR_NAME
  };
  return kNames[static_cast<int>(attr)];
}

const std::vector<OpSpec>& all_ops() {
  static const std::vector<OpSpec> table = build_table();
  return table;
}

const OpSpec& op_spec(OpKind kind) { return all_ops()[static_cast<std::size_t>(kind)]; }

// PTX ISA instruction names (without state spaces, scopes and types, which the language leaves out) for the
// ops that are one PTX instruction; PTX ISA 8.7, sections 9.7.13 (mbarrier, cp.async, cp.async.bulk),
// 9.7.15 (wgmma), 9.7.16 (tcgen05), 9.7.12.3 (clusterlaunchcontrol), 9.7.13.1 (barrier).
const std::vector<OpAlias>& op_aliases() {
  static const std::vector<OpAlias> v = {
      {"mbarrier.arrive", "arrive"},
      {"mbarrier.arrive.expect_tx", "arrive.expect_tx"},
      {"mbarrier.arrive.noComplete", "arrive.nocomplete"},
      {"mbarrier.arrive_drop", "arrive.drop"},
      {"mbarrier.expect_tx", "expect_tx"},
      {"mbarrier.complete_tx", "complete_tx"},
      {"mbarrier.try_wait.parity", "wait"},
      {"mbarrier.test_wait.parity", "test_wait"},
      {"barrier.sync.aligned", "bar.sync"},
      {"barrier.arrive.aligned", "bar.arrive"},
      {"fence.mbarrier_init.release.cluster", "fence.mbarrier_init"},
      {"fence.acq_rel.gpu", "fence.gpu"},
      {"cp.async.bulk.commit_group", "tma.commit"},
      {"cp.async.bulk.wait_group", "tma.wait"},
      {"cp.async.bulk.wait_group.read", "tma.wait", "read"},
      {"cp.async.bulk.prefetch.tensor", "tma.prefetch"},
      {"cp.async.commit_group", "cp.async.commit"},
      {"cp.async.wait_group", "cp.async.wait"},
      {"cp.async.mbarrier.arrive", "cp.async.arrive"},
      {"cp.async.mbarrier.arrive.noinc", "cp.async.arrive", "noinc"},
      {"ldmatrix.sync.aligned", "ldmatrix"},
      {"mma.sync.aligned", "mma.sync"},
      {"wgmma.mma_async", "wgmma"},
      {"wgmma.commit_group", "wgmma.commit"},
      {"wgmma.wait_group", "wgmma.wait"},
      {"tcgen05.mma", "umma"},
      {"tcgen05.commit", "umma.commit"},
      {"tcgen05.alloc", "tmem.alloc"},
      {"tcgen05.dealloc", "tmem.dealloc"},
      {"tcgen05.relinquish_alloc_permit", "tmem.relinquish"},
      {"tcgen05.ld", "tmem.ld"},
      {"tcgen05.st", "tmem.st"},
      {"tcgen05.wait", "tmem.wait"},
      {"tcgen05.cp", "tmem.cp"},
      {"clusterlaunchcontrol.try_cancel", "clc.try_cancel"},
      {"clusterlaunchcontrol.query_cancel", "clc.query"},
      {"nanosleep", "sleep"},
  };
  return v;
}

const OpAlias* find_alias(std::string_view name) {
  for (const OpAlias& a : op_aliases())
    if (a.alias == name) return &a;
  return nullptr;
}

std::optional<OpKind> find_op(std::string_view name) {
  for (const OpSpec& s : all_ops())
    if (s.name == name) return s.kind;
  return std::nullopt;
}

std::optional<ValueRange> value_range(OpKind kind, Attr attr) {
  using K = OpKind;
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  switch (attr) {
    case Attr::kCount:
      switch (kind) {
        case K::kMbarrierInit: case K::kArrive: case K::kArriveNoComplete: case K::kArriveDrop:
          return ValueRange{1, kMaxArrivalCount, 1, false, "PTX mbarrier arrival count"};
        case K::kMmaSync: case K::kWgmma: case K::kUmma:
          return ValueRange{1, 1 << 16, 1, false, "MMAs in a row: a simulator limit"};
        default: return std::nullopt;
      }
    case Attr::kTx:
      return ValueRange{0, kMaxTxCount, 1, false, "PTX mbarrier tx-count"};
    case Attr::kN:
      if (kind == K::kTmaWait || kind == K::kCpAsyncWait || kind == K::kWgmmaWait)
        return ValueRange{0, 63, 1, false, "PTX wait_group: an immediate"};
      return std::nullopt;
    case Attr::kBytes:
      if (kind == K::kTmaLoad || kind == K::kTmaStore)
        return ValueRange{16, (std::int64_t{1} << 32) - 16, 16, false, "PTX cp.async.bulk: a 32-bit size, a multiple of 16"};
      return ValueRange{1, kGiB, 1, false, "bytes of one op: a simulator limit of 1 GiB"};
    case Attr::kCycles:
      return ValueRange{0, kMaxOpCycles, 1, false, "a simulator limit: 2^40 cycles, about 9 minutes at 2 GHz"};
    case Attr::kThreads:
      return ValueRange{kWarpSize, 1024, kWarpSize, false, "PTX bar: a multiple of the warp size, at most 1024"};
    case Attr::kId:
      if (kind == K::kBarSync || kind == K::kBarArrive) return ValueRange{0, kNamedBarriers - 1, 1, false, "PTX bar: 16 barriers"};
      return std::nullopt;
    case Attr::kCols:
      return ValueRange{32, 512, 1, true, "PTX tcgen05.alloc: a power of 2 in 32..512"};
    case Attr::kSize:
      if (kind == K::kCpAsync) return ValueRange{4, 16, 1, true, "PTX cp.async: 4, 8 or 16 bytes"};
      if (kind == K::kLdGlobal || kind == K::kStGlobal)
        return ValueRange{4, 16, 1, true, "bytes per thread of one instruction: 4, 8 or 16 (.b32, .v2.b32, .v4.b32)"};
      return std::nullopt;
    case Attr::kLines:
      return ValueRange{1, 32, 1, false, "128-byte lines one warp instruction touches: its 32 threads reach 1 to 32"};
    case Attr::kAt:
      return ValueRange{INT32_MIN, INT32_MAX, 1, false, "PTX tensor coordinates are 32-bit signed"};
    case Attr::kMulticast:
      if (kind == K::kTmaLoad || kind == K::kUmmaCommit) return ValueRange{0, 0xffff, 1, false, "PTX ctaMask: 16 bits"};
      return std::nullopt;
    case Attr::kCta: case Attr::kBarCta:
      return ValueRange{0, kMaxClusterSize - 1, 1, false, "a CTA rank in a cluster of at most 16"};
    case Attr::kCtaGroup:
      return ValueRange{1, 2, 1, false, "PTX tcgen05: cta_group::1 or ::2"};
    case Attr::kShare:
      return ValueRange{0, 100, 1, false, "a percentage of one SM sub-partition"};
    case Attr::kMmaSpeed:
      return ValueRange{1, 100, 1, false, "a percentage of the work's speed alone"};
    default: return std::nullopt;
  }
}

std::string range_error(std::string_view attr, std::int64_t v, const ValueRange& r) {
  if (in_range(v, r)) return {};
  std::string what = r.pow2 ? "a power of 2 in " : r.multiple > 1 ? "a multiple of " + std::to_string(r.multiple) + " in " : "";
  return std::string(attr) + "=" + std::to_string(v) + " out of range: must be " + what + std::to_string(r.lo) + ".." +
         std::to_string(r.hi) + " (" + std::string(r.why) + ")";
}

std::string lines_error(std::int64_t lanes, std::int64_t size, std::int64_t lines) {
  return "lines=" + std::to_string(lines) + " with size=" + std::to_string(size) + ": one instruction of " + std::to_string(lanes) +
         (lanes == 1 ? " thread" : " threads") + " moves " + std::to_string(lanes) + " x " + std::to_string(size) + " = " +
         std::to_string(lanes * size) + " bytes, at most 128 of them in one line, so it touches at least " +
         std::to_string(lines_needed(lanes, size)) + " line" + (lines_needed(lanes, size) == 1 ? "" : "s");
}

std::optional<MemOrder> mem_order(std::string_view w) {
  if (w == "relaxed") return MemOrder::kRelaxed;
  if (w == "acquire") return MemOrder::kAcquire;
  if (w == "release") return MemOrder::kRelease;
  if (w == "acq_rel") return MemOrder::kAcqRel;
  return std::nullopt;
}

std::optional<int> dtype_bits(std::string_view d) {
  if (d == "f64" || d == "s64" || d == "u64") return 64;
  if (d == "f32" || d == "tf32" || d == "s32" || d == "u32") return 32;
  if (d == "f16" || d == "bf16" || d == "s16" || d == "u16") return 16;
  if (d == "e4m3" || d == "e5m2" || d == "fp8" || d == "s8" || d == "u8" || d == "ue4m3" || d == "ue8m0") return 8;
  if (d == "e2m1" || d == "fp4" || d == "nvfp4" || d == "mxfp4") return 4;
  if (d == "e3m2" || d == "e2m3" || d == "fp6") return 6;
  return std::nullopt;
}

}  // namespace smpipe::isa
