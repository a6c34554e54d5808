// Hardware limits that the language checks before a run and the simulator checks during one: written
// once, with the PTX section they come from.
#pragma once

#include <cstdint>

namespace smpipe::isa {

// mbarrier expected/pending arrival count: 1 .. 2^20-1 (PTX ISA 9.7.13.15.1, mbarrier.init).
inline constexpr std::int64_t kMaxArrivalCount = (std::int64_t{1} << 20) - 1;
// mbarrier tx-count: -(2^20-1) .. 2^20-1 (PTX ISA 9.7.13.15.2).
inline constexpr std::int64_t kMaxTxCount = (std::int64_t{1} << 20) - 1;
// Named barriers per CTA: ids 0..15 (PTX ISA 9.7.13.1, bar / barrier).
inline constexpr int kNamedBarriers = 16;
// Largest cluster: 16 CTAs (non-portable size; CUDA C++ Programming Guide, thread block clusters).
inline constexpr int kMaxClusterSize = 16;
// Threads per warp and warps per warpgroup (PTX ISA 9.7.15, wgmma: a warpgroup is 4 contiguous warps).
inline constexpr int kWarpSize = 32;
inline constexpr int kWarpsPerWarpgroup = 4;
// Registers per thread a kernel may have (PTX ISA: .maxnreg, setmaxnreg; CUDA C++ Programming Guide, compute
// capabilities 5.0-12.0: 255), and the unit the SM allocates them in, per warp (the CUDA occupancy calculator's
// register allocation unit size for compute capability 8.0-10.0: 256 registers per warp, granularity "warp").
inline constexpr int kMaxRegsPerThread = 255;
inline constexpr int kRegAllocUnit = 256;
// Words of all `global` declarations of a kernel (a simulator limit, not a hardware one: each costs ~40 bytes per run).
inline constexpr std::int64_t kMaxGlobalWords = std::int64_t{1} << 20;

// The most cycles one op may take (`compute cycles=`, `sleep`): 2^40, about 9 minutes at 2 GHz. With
// `--max-cycles` at most kMaxCycleLimit, a time plus such a delay never overflows 64 bits.
inline constexpr std::int64_t kMaxOpCycles = std::int64_t{1} << 40;
inline constexpr std::int64_t kMaxCycleLimit = std::int64_t{1} << 62;

// Bytes of one smem buffer (or `smem=`): more than any GPU's shared memory (228 KB per SM on the H100), small
// enough that the sums of all buffers stay exact. The machine decides what fits.
inline constexpr std::int64_t kMaxSmemBufferBytes = std::int64_t{1} << 24;
// Bytes of one tensor: far beyond any GPU's memory; addresses computed from it stay within 64 bits.
inline constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 48;

// Simulator limits on program size (not hardware ones): they keep the front end's recursion within its stack
// and a program's memory bounded, whatever the input.
// Levels of nested operators, brackets and calls in one expression (`((a))` is 3, `a+b+c` is 3).
inline constexpr int kMaxExprDepth = 200;
// Levels of nested blocks (`{ }` of loops, ifs, elect, regions; each `else if` counts as one).
inline constexpr int kMaxBlockDepth = 200;
// Procs inlined inside each other.
inline constexpr int kMaxProcDepth = 64;
// Bytecode instructions and ops of a kernel after procs are inlined (an op holds ~1 KB with its attributes).
// The largest real programs (replays of hardware traces of a 8192^3 GEMM) have ~20,000 ops.
inline constexpr std::int64_t kMaxInstructions = std::int64_t{1} << 21;
inline constexpr std::int64_t kMaxOps = std::int64_t{1} << 18;

}  // namespace smpipe::isa
