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
// Words of all `global` declarations of a kernel (a simulator limit, not a hardware one: each costs ~40 bytes per run).
inline constexpr std::int64_t kMaxGlobalWords = std::int64_t{1} << 20;

}  // namespace smpipe::isa
