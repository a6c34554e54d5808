// The op vocabulary of language.md: each op's name, attributes (name, type, required or default) and
// which attributes a bare operand fills, in order. The compiler checks operands against this table; the
// simulator reads arguments by the positions given here.
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
  kCount
};

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
};

struct AttrSpec {
  std::string_view name;
  AttrType type;
  bool required;
  std::int64_t default_value;  // for kInt / kFlag when absent; -1 = "not given" where the op says so
};

struct OpSpec {
  OpKind kind;
  std::string_view name;
  std::vector<AttrSpec> attrs;
  std::vector<std::string_view> positional;  // attrs a bare operand fills, in order
  int results;                               // number of "-> V" results the op produces
  std::string_view summary;
};

const OpSpec& op_spec(OpKind kind);
std::optional<OpKind> find_op(std::string_view name);
const std::vector<OpSpec>& all_ops();

// Element size in bytes of a tensor dtype (fp4 types report 0: their size is in bits, see dtype_bits).
std::optional<int> dtype_bits(std::string_view dtype);

}  // namespace smpipe::isa
