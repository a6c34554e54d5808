// CPU emulation test of the K1 CTA program (src/k1_tile.cuh), host only, no GPU.
//
// Runs the same `k1::cta_body` the GPU kernel runs, with 128 std::threads per CTA and an Ops policy that
// emulates the warp-collective instructions from their PTX ISA definitions (independent of the kernel's
// index math):
//   - ldmatrix .x4: lanes 8j..8j+7 give the row addresses of matrix j; lane l receives the 4 bytes at
//     row (l / 4) + byte 4 * (l % 4) of each matrix.  Also counts bank conflicts: the 8 rows of one matrix must
//     fall on 8 distinct 16-byte bank groups (one wavefront), and be 16-byte aligned.
//   - mma.sync m16n8k16 row.col f32.f16: A, B rebuilt from the 32 lanes' fragments (a0: row g, k 2t..2t+1;
//     a1: row g+8; a2: row g, k +8; a3: row g+8, k +8; b0: k 2t..2t+1, n g; b1: k +8; d0,d1: row g, n 2t..;
//     d2,d3: row g+8), products summed in float.
//   - st.shared.b32 across a warp: counts bank conflicts (distinct addresses on one bank).
//   - cp.async: in mode "late" a copy lands only when the cp.async.wait_group that retires its group runs
//     (reading a stage before its wait + __syncthreads reads stale data); in mode "early" at issue (writing
//     a stage that another warp still reads corrupts it).  Sources are bounds-checked against the inputs.
//   - __syncthreads: a 128-thread std::barrier.
// Every global access is bounds-checked; D is poisoned (0xFFFF) and surrounded by guard words.
// The result is compared with a float64 CPU reference that rounds D1 to fp16 like the kernel.
// Exit 0 when every case passes.
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "k1_tile.cuh"

namespace {

float h2f(uint16_t h) {
  const uint32_t s = uint32_t(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = s;
    } else {  // subnormal
      float f = std::ldexp(float(m), -24);
      return s ? -f : f;
    }
  } else if (e == 31) {
    x = s | 0x7F800000u | (m << 13);
  } else {
    x = s | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
// float -> fp16, round to nearest even (overflow -> inf, NaN kept)
uint16_t f2h(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t s = uint16_t((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return s | (ax > 0x7F800000u ? 0x7E00 : 0x7C00);
  if (ax >= 0x477FF000u) return s | 0x7C00;  // >= 65520: rounds to inf
  if (ax < 0x38800000u) {                    // below 2^-14: subnormal or zero
    const float a = std::fabs(f) * 16777216.f;  // in units of 2^-24 (exact)
    float r = std::nearbyint(a);                 // default rounding mode: to nearest even
    return s | uint16_t(r);
  }
  const uint32_t e = (ax >> 23) - 112, m = ax & 0x7FFFFFu;
  uint32_t h = (e << 10) | (m >> 13);
  const uint32_t rem = m & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return s | uint16_t(h);
}

struct Region {
  const void* lo;
  size_t bytes;
};

struct Cta {
  std::vector<uint8_t> smem = std::vector<uint8_t>(k1::SMEM_BYTES, 0xA5);
  std::barrier<> cta_bar{k1::THREADS};
  std::unique_ptr<std::barrier<>> warp_bar[k1::WARPS];
  struct Slot {
    uint32_t addr;
    uint32_t a[4], b[2];
  } slot[k1::THREADS];
  bool late = true;
  std::vector<Region> readable, writable;
  std::atomic<long> ldsm_conflicts{0}, sts_conflicts{0}, misaligned{0}, oob{0}, ldsm_calls{0}, mma_calls{0},
      cp_calls{0};
  Cta() {
    for (auto& b : warp_bar) b = std::make_unique<std::barrier<>>(32);
  }
  bool in(const std::vector<Region>& rs, const void* p, size_t n) const {
    for (const Region& r : rs) {
      const auto* lo = static_cast<const uint8_t*>(r.lo);
      const auto* q = static_cast<const uint8_t*>(p);
      if (q >= lo && q + n <= lo + r.bytes) return true;
    }
    return false;
  }
};

struct HostOps {
  Cta* c;
  int tid;
  struct Copy {
    uint32_t off;
    const void* src;
    bool valid;
  };
  std::vector<Copy> cur;
  std::vector<std::vector<Copy>> groups;

  int lane() const { return tid & 31; }
  int wbase() const { return tid & ~31; }
  std::barrier<>& wbar() { return *c->warp_bar[tid >> 5]; }
  uint32_t rd32(uint32_t off) const {
    uint32_t v;
    std::memcpy(&v, c->smem.data() + off, 4);
    return v;
  }

  void ldsm_x4(uint32_t (&r)[4], uint32_t off) {
    c->slot[tid].addr = off;
    wbar().arrive_and_wait();
    if (lane() == 0) {
      c->ldsm_calls++;
      for (int j = 0; j < 4; ++j) {
        unsigned seen = 0;
        for (int i = 0; i < 8; ++i) {
          const uint32_t a = c->slot[wbase() + 8 * j + i].addr;
          if (a % 16 || a + 16 > k1::SMEM_BYTES) c->misaligned++;
          const unsigned bg = 1u << ((a >> 4) & 7);
          if (seen & bg) c->ldsm_conflicts++;
          seen |= bg;
        }
      }
    }
    for (int j = 0; j < 4; ++j) r[j] = rd32(c->slot[wbase() + 8 * j + lane() / 4].addr + 4 * (lane() % 4));
    wbar().arrive_and_wait();
  }
  void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    std::memcpy(c->slot[tid].a, a, sizeof a);
    std::memcpy(c->slot[tid].b, b, sizeof b);
    wbar().arrive_and_wait();
    if (lane() == 0) c->mma_calls++;
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; ++l) {
      const auto& s = c->slot[wbase() + l];
      const int g = l / 4, t = l % 4;
      for (int h = 0; h < 2; ++h) {
        A[g][2 * t + h] = h2f(uint16_t(s.a[0] >> (16 * h)));
        A[g + 8][2 * t + h] = h2f(uint16_t(s.a[1] >> (16 * h)));
        A[g][2 * t + 8 + h] = h2f(uint16_t(s.a[2] >> (16 * h)));
        A[g + 8][2 * t + 8 + h] = h2f(uint16_t(s.a[3] >> (16 * h)));
        B[2 * t + h][g] = h2f(uint16_t(s.b[0] >> (16 * h)));
        B[2 * t + 8 + h][g] = h2f(uint16_t(s.b[1] >> (16 * h)));
      }
    }
    const int g = lane() / 4, t = lane() % 4;
    for (int e = 0; e < 4; ++e) {
      const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
      float s = 0.f;
      for (int k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
      d[e] += s;
    }
    wbar().arrive_and_wait();
  }
  void land(const Copy& cp) {
    if (cp.off % 16 || cp.off + 16 > k1::SMEM_BYTES || reinterpret_cast<uintptr_t>(cp.src) % 16) c->misaligned++;
    if (!c->in(c->readable, cp.src, 16)) c->oob++;
    if (cp.valid) std::memcpy(c->smem.data() + cp.off, cp.src, 16);
    else std::memset(c->smem.data() + cp.off, 0, 16);
  }
  void cp_async16(uint32_t off, const void* src, bool valid) {
    c->cp_calls++;
    if (c->late) cur.push_back({off, src, valid});
    else land({off, src, valid});
  }
  void commit() {
    groups.push_back(cur);
    cur.clear();
  }
  template <int N>
  void wait() {
    while (groups.size() > size_t(N)) {
      for (const Copy& cp : groups.front()) land(cp);
      groups.erase(groups.begin());
    }
  }
  void sync() { c->cta_bar.arrive_and_wait(); }
  void mark(int) {}
  void sts32(uint32_t off, uint32_t v) {
    c->slot[tid].addr = off;
    wbar().arrive_and_wait();
    if (lane() == 0) {
      for (int i = 0; i < 32; ++i) {
        const uint32_t a = c->slot[wbase() + i].addr;
        if (a % 4 || a + 4 > k1::SMEM_BYTES) c->misaligned++;
        for (int j = 0; j < i; ++j) {
          const uint32_t b = c->slot[wbase() + j].addr;
          if (a != b && ((a >> 2) & 31) == ((b >> 2) & 31)) {
            c->sts_conflicts++;
            break;
          }
        }
      }
    }
    wbar().arrive_and_wait();
    std::memcpy(c->smem.data() + off, &v, 4);
    wbar().arrive_and_wait();
  }
  uint32_t ldg32(const uint16_t* p) {
    if (!c->in(c->readable, p, 4) || reinterpret_cast<uintptr_t>(p) % 4) {
      c->oob++;
      return 0;
    }
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  void stg32(uint16_t* p, uint32_t v) {
    if (!c->in(c->writable, p, 4) || reinterpret_cast<uintptr_t>(p) % 4) {
      c->oob++;
      return;
    }
    std::memcpy(p, &v, 4);
  }
  uint32_t pack(float lo, float hi) { return uint32_t(f2h(lo)) | (uint32_t(f2h(hi)) << 16); }
  float lo(uint32_t v) { return h2f(uint16_t(v & 0xFFFF)); }
  float hi(uint32_t v) { return h2f(uint16_t(v >> 16)); }
};

// 16-byte aligned fp16 buffer with guard words after it
struct Buf {
  std::vector<uint16_t> v;
  size_t n;
  static constexpr size_t GUARD = 64;
  explicit Buf(size_t n_) : v(n_ + GUARD, 0x7E7E), n(n_) {}
  uint16_t* p() { return v.data(); }
  const uint16_t* p() const { return v.data(); }
  bool guard_ok() const {
    for (size_t i = n; i < n + GUARD; ++i)
      if (v[i] != 0x7E7E) return false;
    return true;
  }
};

struct Case {
  const char* name;
  int M, K0, N1;
  bool bias;
  float alpha0, alpha1, beta1;
  bool late;
};

bool run_case(const Case& cs, uint64_t seed) {
  const int M = cs.M, K0 = cs.K0, N0 = k1::BN0, N1 = cs.N1;
  if (const char* why = k1::shape_error(M, N0, K0, N1)) {
    std::printf("[%s] shape refused: %s\n", cs.name, why);
    return false;
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Buf A0(size_t(M) * K0), B0(size_t(N0) * K0), bias(N0), B1(size_t(N1) * N0), C1(size_t(M) * N1), D(size_t(M) * N1);
  const float s0 = 3.f / std::sqrt(float(K0)), s1 = std::sqrt(6.f / N0);
  for (size_t i = 0; i < A0.n; ++i) A0.v[i] = f2h(u(rng));
  for (size_t i = 0; i < B0.n; ++i) B0.v[i] = f2h(u(rng) * s0);
  for (size_t i = 0; i < bias.n; ++i) bias.v[i] = f2h(0.5f * u(rng));
  for (size_t i = 0; i < B1.n; ++i) B1.v[i] = f2h(u(rng) * s1);
  for (size_t i = 0; i < C1.n; ++i) C1.v[i] = cs.beta1 != 0.f ? f2h(u(rng)) : uint16_t(0xFFFF);  // NaN: must not be read
  for (size_t i = 0; i < D.n; ++i) D.v[i] = 0xFFFF;

  k1::Params p{A0.p(), B0.p(), cs.bias ? bias.p() : nullptr, B1.p(), C1.p(), D.p(), M, K0, N1,
               cs.alpha0, cs.alpha1, cs.beta1};
  const int grid = (M + k1::BM - 1) / k1::BM;
  long conf_l = 0, conf_s = 0, mis = 0, oob = 0, ldsm = 0, mmas = 0, cps = 0;
  for (int cta = 0; cta < grid; ++cta) {
    Cta c;
    c.late = cs.late;
    c.readable = {{A0.p(), A0.n * 2}, {B0.p(), B0.n * 2}, {bias.p(), bias.n * 2}, {B1.p(), B1.n * 2},
                  {C1.p(), C1.n * 2}};
    c.writable = {{D.p(), D.n * 2}};
    std::vector<std::thread> th;
    for (int t = 0; t < k1::THREADS; ++t)
      th.emplace_back([&, t] {
        HostOps o{&c, t, {}, {}};
        k1::cta_body(o, p, cta, t);
        if (!o.cur.empty() || !o.groups.empty()) c.oob += 1000000;  // cp.async left behind at exit
      });
    for (auto& x : th) x.join();
    conf_l += c.ldsm_conflicts;
    conf_s += c.sts_conflicts;
    mis += c.misaligned;
    oob += c.oob;
    ldsm += c.ldsm_calls;
    mmas += c.mma_calls;
    cps += c.cp_calls;
  }

  // float64 reference, D1 rounded to fp16 (as float first, as the kernel does)
  double se = 0, sr = 0, worst = 0;
  long nonfinite = 0;
  std::vector<double> refv(D.n);
  std::vector<float> d1(N0);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N0; ++n) {
      double s = 0;
      for (int k = 0; k < K0; ++k) s += double(h2f(A0.v[size_t(m) * K0 + k])) * h2f(B0.v[size_t(n) * K0 + k]);
      double x = cs.alpha0 * s + (cs.bias ? h2f(bias.v[n]) : 0.0);
      d1[n] = h2f(f2h(float(x > 0 ? x : 0)));
    }
    for (int j = 0; j < N1; ++j) {
      double s = 0;
      for (int n = 0; n < N0; ++n) s += double(d1[n]) * h2f(B1.v[size_t(j) * N0 + n]);
      double y = cs.alpha1 * s + (cs.beta1 != 0.f ? cs.beta1 * double(h2f(C1.v[size_t(m) * N1 + j])) : 0.0);
      refv[size_t(m) * N1 + j] = y > 0 ? y : 0;
    }
  }
  for (double r : refv) sr += r * r;
  const double rms = std::sqrt(sr / double(refv.size()));
  long kept = 0;
  for (size_t i = 0; i < D.n; ++i) {
    const float x = h2f(D.v[i]);
    if (!std::isfinite(x)) {
      ++nonfinite;
      continue;
    }
    kept += x > 0;
    const double df = x - refv[i];
    se += df * df;
    worst = std::max(worst, std::fabs(df) / (std::fabs(refv[i]) + 0.1 * rms));
  }
  const double rel = std::sqrt(se / sr);
  const bool guards = A0.guard_ok() && B0.guard_ok() && bias.guard_ok() && B1.guard_ok() && C1.guard_ok() && D.guard_ok();
  // expected instruction counts per CTA: GEMM0 per k-tile 2 k-groups x (MT0 + NT0/2) ldmatrix per warp, plus the
  // prologue's; GEMM1 per n1 tile: (KK1 - 1) A1 loads + (1 + KK1) B1 loads of MT1 / NT1/2 x4's, mmas
  const int kt0 = K0 / k1::BK, n1t = N1 / k1::BN1;
  const long exp_mma = long(grid) * k1::WARPS *
                       (long(kt0) * k1::KGROUPS * k1::MT0 * k1::NT0 + long(n1t) * k1::KK1 * k1::MT1 * k1::NT1);
  const bool ok = rel < 2e-3 && worst < 1e-2 && nonfinite == 0 && conf_l == 0 && conf_s == 0 && mis == 0 &&
                  oob == 0 && guards && mmas == exp_mma;
  std::printf("[%s] M=%d K0=%d N1=%d bias=%d a0=%g a1=%g b1=%g cp.async %s: rel err %.3e, max scaled err %.3e, "
              "non-finite %ld, D>0 %.1f %%, ldmatrix conflicts %ld (of %ld x4), st.shared conflicts %ld, misaligned "
              "%ld, out of bounds %ld, guards %s, mma %ld (expected %ld), cp.async %ld -> %s\n",
              cs.name, M, K0, N1, cs.bias, cs.alpha0, cs.alpha1, cs.beta1, cs.late ? "late" : "early", rel, worst,
              nonfinite, 100.0 * kept / double(D.n), conf_l, ldsm, conf_s, mis, oob, guards ? "intact" : "BROKEN",
              mmas, exp_mma, cps, ok ? "OK" : "FAIL");
  return ok;
}

}  // namespace

int main() {
  const Case cases[] = {
      {"one k-tile", 64, 32, 256, true, 1.f, 1.f, 1.f, true},
      {"one k-tile", 64, 32, 256, true, 1.f, 1.f, 1.f, false},
      {"tail+2 n1 tiles", 100, 160, 512, true, 0.75f, 1.25f, 0.5f, true},
      {"tail+2 n1 tiles", 100, 160, 512, true, 0.75f, 1.25f, 0.5f, false},
      {"beta0 C1=NaN", 70, 64, 256, false, 1.f, 1.f, 0.f, true},
      {"ref K0", 64, 576, 256, true, 1.f, 1.f, 1.f, true},
  };
  int fails = 0;
  uint64_t seed = 0x6b31;
  for (const Case& c : cases) fails += !run_case(c, seed++);
  // the driver's shape check
  struct Bad {
    long long M, N0, K0, N1;
  } bad[] = {{0, 64, 576, 256}, {128, 128, 576, 256}, {128, 64, 100, 256}, {128, 64, 576, 300}, {128, 64, 0, 256}};
  for (const Bad& b : bad) {
    const char* why = k1::shape_error(b.M, b.N0, b.K0, b.N1);
    std::printf("shape %lldx%lldx%lldx%lld refused: %s\n", b.M, b.N0, b.K0, b.N1, why ? why : "NOT REFUSED");
    fails += why == nullptr;
  }
  std::printf("%s (%d failed)\n", fails ? "SOME FAILED" : "all passed", fails);
  return fails ? 1 : 0;
}
