// The op vocabulary of language.md: each op's name, attributes (name, type, required or default) and
// which attributes a bare operand fills, in order. The compiler checks operands against this table; the
// simulator reads an op's arguments by attribute name (Attr), through the index the compiler records
// in each OpDesc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace smpipe::isa {

enum class OpKind : std::uint8_t {
  // synchronisation
  kMbarrierInit, kMbarrierInval, kArrive, kArriveExpectTx, kArriveNoComplete, kExpectTx, kCompleteTx, kArriveDrop,
  kWait, kTestWait, kBarSync, kBarArrive, kClusterSync, kFenceProxyAsync, kFenceMbarrierInit,
  // data movement
  kTmaLoad, kTmaStore, kTmaCommit, kTmaWait, kTmaPrefetch, kCpAsync, kCpAsyncCommit, kCpAsyncWait, kCpAsyncArrive,
  kLdShared, kStShared, kLdmatrix, kLdGlobal, kStGlobal,
  // tensor cores and tensor memory
  kMmaSync, kWgmmaFence, kWgmma, kWgmmaCommit, kWgmmaWait, kTmemAlloc, kTmemDealloc, kTmemRelinquish, kUmma,
  kUmmaCommit, kTmemLd, kTmemSt, kTmemWait, kTmemCp,
  // scheduling and time
  kClcTryCancel, kClcQuery, kCompute, kSleep,
  // synchronisation through global memory (flags, counters, grid barriers)
  kAtomAdd, kAtomExch, kAtomCas, kAtomMax, kRedAdd, kLdAcquire, kLdRelaxed, kStRelease, kStRelaxed, kSpin, kFenceGpu, kGridSync,
  kCount
};

// Every attribute name of the vocabulary, once: X(enumerator, "name").
#define SMPIPE_ATTRIBUTES(X)                                                                                          \
  X(kBar, "bar") X(kCount, "count") X(kCta, "cta") X(kTx, "tx") X(kParity, "parity") X(kId, "id")                    \
  X(kThreads, "threads") X(kTensor, "tensor") X(kBox, "box") X(kAt, "at") X(kBytes, "bytes") X(kDst, "dst")          \
  X(kSrc, "src") X(kMulticast, "multicast") X(kSwizzle, "swizzle") X(kBarCta, "bar_cta") X(kN, "n") X(kRead, "read") \
  X(kSize, "size") X(kNoinc, "noinc") X(kShape, "shape") X(kDtype, "dtype") X(kA, "a") X(kB, "b") X(kM, "m")          \
  X(kK, "k") X(kCols, "cols") X(kAddr, "addr") X(kKind, "kind") X(kCtaGroup, "cta_group") X(kLd, "ld") X(kSt, "st")  \
  X(kCycles, "cycles") X(kVal, "val") X(kCmp, "cmp") X(kSem, "sem") X(kEq, "eq") X(kNe, "ne") X(kGe, "ge") X(kGt, "gt") \
  X(kLe, "le") X(kLt, "lt") X(kTmem, "tmem") X(kShare, "share") X(kLines, "lines")        \
  X(kMmaSpeed, "mma_speed")

enum class Attr : std::uint8_t {
#define SMPIPE_ATTR_ENUM(e, s) e,
  SMPIPE_ATTRIBUTES(SMPIPE_ATTR_ENUM)
#undef SMPIPE_ATTR_ENUM
      kCount_
};
inline constexpr int kAttrCount = static_cast<int>(Attr::kCount_);
std::string_view attr_name(Attr attr);

enum class AttrType : std::uint8_t {
  kInt,       // an integer expression
  kBarrier,   // reference to an mbarrier (element)
  kSmem,      // reference to an smem buffer (element)
  kTensor,    // a tensor name
  kNamedBar,  // a number 0..15 or a declared named_barrier
  kTuple,     // (a, b, ...) of 1..5 integer expressions; a single integer is a 1-tuple
  kFlag,      // a bare word; present or absent (value 1 / 0); `flag=expr` also accepted
  kShape,     // a shape word (m64n128k16, 32x32b.x64, ...) checked per op
  kDtype,     // a dtype or MMA kind name (bf16, e4m3, mxf4nvf4, ...)
  kGlobal,    // reference to a global-memory word (element)
  kSem,       // a memory-order word: relaxed, acquire, release, acq_rel (values of MemOrder)
};

// The memory order of an op on a global word (PTX memory model: .relaxed, .acquire, .release, .acq_rel).
enum class MemOrder : std::uint8_t { kRelaxed, kAcquire, kRelease, kAcqRel };
std::optional<MemOrder> mem_order(std::string_view word);
inline bool acquires(MemOrder m) { return m == MemOrder::kAcquire || m == MemOrder::kAcqRel; }
inline bool releases(MemOrder m) { return m == MemOrder::kRelease || m == MemOrder::kAcqRel; }

// What an op does with an mbarrier it names (kBarrier attributes).
enum class BarrierUse : std::uint8_t {
  kNone,    // not a barrier, or only read (wait, test_wait, init, query)
  kSignal,  // the op (or the async work it starts) arrives on it or moves its tx-count
};

struct AttrSpec {
  Attr attr;
  AttrType type;
  bool required;
  std::int64_t default_value;  // for kInt / kFlag when absent; -1 = "not given" where the op says so
  BarrierUse use = BarrierUse::kNone;
  std::string_view name = {};  // attr_name(attr), filled in by the table
};

struct OpSpec {
  OpKind kind;
  std::string_view name;
  std::vector<AttrSpec> attrs;
  std::vector<std::string_view> positional;  // attrs a bare operand fills, in order
  int results;                               // number of "-> V" results the op produces
  std::string_view summary;
};

// Values one op's arguments occupy at most: every attribute a 5-tuple (the compiler checks each op).
inline constexpr std::size_t kMaxArgValues = 48;

const OpSpec& op_spec(OpKind kind);
std::optional<OpKind> find_op(std::string_view name);
const std::vector<OpSpec>& all_ops();

// A PTX spelling accepted for an op (tcgen05.mma for umma ...): the op it stands for, and the flag the
// spelling implies (cp.async.bulk.wait_group.read is tma.wait with `read`), if any.
struct OpAlias {
  std::string_view alias;
  std::string_view op;
  std::string_view flag = {};
};
const std::vector<OpAlias>& op_aliases();
const OpAlias* find_alias(std::string_view name);

// The values an integer attribute of an op may take. The compiler checks a constant against it and the
// simulator checks a value known only at run time against the same range (a value outside is an input error
// before the run, undefined behaviour during it), so the two can never disagree.
struct ValueRange {
  std::int64_t lo = 0, hi = 0;
  std::int64_t multiple = 1;  // the value is also a multiple of this
  bool pow2 = false;          // and a power of two
  std::string_view why;       // where the rule comes from
};
// The range of attribute `attr` of op `kind`, or nullopt when any 64-bit value is allowed (or the attribute
// is not an integer).
std::optional<ValueRange> value_range(OpKind kind, Attr attr);
inline bool in_range(std::int64_t v, const ValueRange& r) {
  return v >= r.lo && v <= r.hi && v % r.multiple == 0 && (!r.pow2 || (v > 0 && (v & (v - 1)) == 0));
}
// Empty when `v` lies in `r`; else a message such as "bytes=8 must be a multiple of 16 in 16..4294967280 (...)".
std::string range_error(std::string_view attr, std::int64_t v, const ValueRange& r);

// The fewest 128-byte lines one warp instruction of `size` bytes per thread touches (lanes x size bytes, at most
// 128 in one line; lanes: 32, or 1 inside elect), and the error for lines= below it (cp.async, ld.global,
// st.global: the compiler for constants, the simulator for run-time values).
inline std::int64_t lines_needed(std::int64_t lanes, std::int64_t size) { return (lanes * size + 127) / 128; }
std::string lines_error(std::int64_t lanes, std::int64_t size, std::int64_t lines);

// Element size in bytes of a tensor dtype (fp4 types report 0: their size is in bits, see dtype_bits).
std::optional<int> dtype_bits(std::string_view dtype);

}  // namespace smpipe::isa
