// Host-side helpers shared by the drivers of validation/kernels (K1, K2, K3): CUDA / cuBLAS error checks,
// the cuTensorMapEncodeTiled entry point (through the runtime: no -lcuda), JSON text and timing statistics.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#define CK(call)                                                                                          \
  do {                                                                                                    \
    cudaError_t e_ = (call);                                                                              \
    if (e_ != cudaSuccess) {                                                                              \
      char b_[512];                                                                                       \
      std::snprintf(b_, sizeof b_, "%s failed: %s (%s) at %s:%d", #call, cudaGetErrorName(e_),            \
                    cudaGetErrorString(e_), __FILE__, __LINE__);                                          \
      throw std::runtime_error(b_);                                                                       \
    }                                                                                                     \
  } while (0)
#define CKB(call)                                                                                          \
  do {                                                                                                     \
    cublasStatus_t s_ = (call);                                                                            \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                     \
      char b_[512];                                                                                        \
      std::snprintf(b_, sizeof b_, "%s failed: cublas status %d at %s:%d", #call, (int)s_, __FILE__, __LINE__); \
      throw std::runtime_error(b_);                                                                        \
    }                                                                                                      \
  } while (0)

namespace khost {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline EncodeTiledFn encoder() {
  static EncodeTiledFn fn = nullptr;
  if (fn) return fn;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !p) throw std::runtime_error("cuTensorMapEncodeTiled entry point not found");
  fn = reinterpret_cast<EncodeTiledFn>(p);
  return fn;
}

// A shell command's standard output, trailing newlines removed ("" when it cannot run).
inline std::string popen_all(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  pclose(f);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}
// A JSON string literal.
inline std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (ch == '\n') {
      o += "\\n";
    } else if ((unsigned char)ch < 0x20) {
      o += ' ';
    } else {
      o += ch;
    }
  }
  return o + "\"";
}
// A JSON number (null when not finite).
inline std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
inline std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
// The q-quantile (nearest rank).
inline double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))];
}
// bf16 bits -> float.
inline float bf2f(uint16_t u) {
  uint32_t x = uint32_t(u) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// "MxNxK,MxNxK,..." (--shapes).
struct Shape {
  int M, N, K;
};
inline std::vector<Shape> parse_shapes(const std::string& s) {
  std::vector<Shape> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Shape sh{};
    if (std::sscanf(item.c_str(), "%dx%dx%d", &sh.M, &sh.N, &sh.K) != 3) throw std::runtime_error("bad shape " + item);
    v.push_back(sh);
  }
  return v;
}

}  // namespace khost
