// Host interface to the probe-on build of the K2 kernel (src/k2_probe.cu, compiled with SMPIPE_PROBE=1).
// The driver (k2_main.cu, probe off) includes k2_gemm.cuh itself; the two kernel instances live in the
// inline namespaces k2::probe_off and k2::probe_on.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "k2_gemm.cuh"

namespace k2probe {

// Whether the probe-on build keeps k-block sampling (K2_PROBE_KB_SAMPLING; --trace-kb-sample N > 1 needs it).
bool kb_sampling();
// Whether the probe-on build has an instance of this tile width, stage count and schedule (pp: pingpong).
bool has(int bn, int stages, bool pp);
// Sets the dynamic shared-memory limit of the probe-on kernel of this variant.
cudaError_t prepare(int bn, int stages, bool pp);
void launch(int bn, int stages, bool pp, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c,
            const CUtensorMap& d, k2::Params p, int grid, cudaStream_t st);

// Recording configuration: set 0 or 1 is allocated and zeroed; select() points the kernel at one of them
// (or at none: -1) with a stream-ordered copy, so configurations alternate between launches without a
// host synchronisation.
cudaError_t configure(int set, uint32_t slots, uint32_t cta_first, uint32_t warps, uint32_t capacity,
                      uint32_t tile_limit, uint32_t kb_sample = 1);
cudaError_t select(int set, cudaStream_t st);
cudaError_t read(int set, std::vector<unsigned char>& out);  // the raw buffer (traces/probe.cuh layout)
void release();

}  // namespace k2probe
