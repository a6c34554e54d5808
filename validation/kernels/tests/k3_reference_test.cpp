// CI test of the K3 CPU reference (src/k3_reference.h) and of the NVFP4 arithmetic it shares with the sm_100a
// kernel's epilogue (src/k3_nvfp4.h).  Host only: no GPU is needed (none exists where this runs).
//
// What it checks, each against something computed independently of the code under test:
//   1. e2m1: the 16 codes decode (cuda_fp4.h) to the table {0, .5, 1, 1.5, 2, 3, 4, 6} with sign; encode(decode)
//      is the identity.
//   2. e2m1 rounding: a sweep of values, every midpoint and its neighbours: round to nearest, ties to the even
//      code, saturation at +-6 (and +-inf), sign, negative zero; against a table-driven rounding written here.
//   3. ue4m3: all finite codes decode to 2^(e-7) (1 + m/8) (subnormals m 2^-9); round trip; every midpoint ties
//      to the even code; saturation at 448; underflow to 0.
//   4. block quantisation (k3::quantize16) and the epilogue on cases worked out by hand (in the comments).
//   5. the reference GEMM accumulators equal an exact integer computation (values as integer multiples of
//      2^-10) on random problems whose every sum is exact in double, for several shapes.
//   6. the driver's "exact" input family (scales in {0.5, 1, 2}): a float (fp32) running sum in any order equals
//      the reference, so a bit-exact comparison of the kernel's output is legitimate for it.
//   7. the 128x4-tiled scale-factor layout: hand-computed offsets, and to_tiled / from_tiled are inverse
//      permutations.
// Prints every failure (the first few of each check) and closes with "N passed, N failed"; exit 1 on failure.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "k3_reference.h"

namespace {

int g_pass = 0, g_fail = 0;

// One named check: counts its failing cases and prints the first few.
struct Check {
  std::string name;
  int cases = 0, bad = 0;
  explicit Check(std::string n) : name(std::move(n)) {}
  template <class... Args>
  void expect(bool ok, const char* fmt, Args... args) {
    ++cases;
    if (ok) return;
    if (++bad <= 8) {
      std::printf("  FAIL %s: ", name.c_str());
      std::printf(fmt, args...);
      std::printf("\n");
    }
  }
  ~Check() {
    if (bad == 0) {
      ++g_pass;
      std::printf("ok   %s (%d cases)\n", name.c_str(), cases);
    } else {
      ++g_fail;
      std::printf("FAIL %s: %d of %d cases wrong\n", name.c_str(), bad, cases);
    }
  }
};

const float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

// Independent e2m1 rounding: nearest of the 8 magnitudes, a tie goes to the even code (the mantissa bit is the
// code's lowest bit), |x| >= 6 saturates to 6, the sign bit is kept (so -0.1 -> code 8, "-0").
uint8_t e2m1_round_ref(double x) {
  if (std::isnan(x)) return 7;  // documented in cuda_fp4.h: NaN -> positive MAXNORM
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  const double a = std::fabs(x);
  if (a >= 6.0) return sign | 7;
  int i = 0;
  while (!(a < kE2m1[i + 1])) ++i;  // kE2m1[i] <= a < kE2m1[i + 1]
  const double dlo = a - kE2m1[i], dhi = kE2m1[i + 1] - a;
  int idx = dlo < dhi ? i : dhi < dlo ? i + 1 : ((i & 1) ? i + 1 : i);
  return static_cast<uint8_t>(sign | idx);
}

// Independent ue4m3 decode: code = e << 3 | m.
double ue4m3_value_ref(int code) {
  const int e = code >> 3, m = code & 7;
  return e == 0 ? m * std::ldexp(1.0, -9) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
}
// Independent ue4m3 rounding of x >= 0 over the finite codes 0..126: nearest, ties to the even code, above 448 -> 448.
int ue4m3_round_ref(double x) {
  if (x >= 448.0) return 0x7E;
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    const double d = std::fabs(ue4m3_value_ref(c) - x), db = std::fabs(ue4m3_value_ref(best) - x);
    if (d < db || (d == db && (c & 1) == 0)) best = c;
  }
  return best;
}

void check_e2m1_table() {
  Check ck("e2m1 codes decode to the NVFP4 table and round-trip");
  for (int c = 0; c < 16; ++c) {
    const float want = (c & 8) ? -kE2m1[c & 7] : kE2m1[c & 7];
    const float got = k3::e2m1_to_float(static_cast<uint8_t>(c));
    ck.expect(got == want && std::signbit(got) == bool(c & 8), "code %d decodes to %g, want %g", c, got, want);
    const uint8_t back = k3::float_to_e2m1(got);
    ck.expect(back == c, "encode(decode(%d)) = %d", c, back);
  }
}

void check_e2m1_rounding() {
  Check ck("e2m1 rounding: nearest, ties to even, saturation, sign");
  std::vector<float> xs;
  for (int k = -9 * 64; k <= 9 * 64; ++k) xs.push_back(k / 64.0f);  // every 1/64 in [-9, 9]
  for (int i = 0; i < 7; ++i) {                                     // every midpoint and its float neighbours
    const float mid = 0.5f * (kE2m1[i] + kE2m1[i + 1]);
    for (float m : {mid, -mid}) {
      xs.push_back(m);
      xs.push_back(std::nextafter(m, 100.0f));
      xs.push_back(std::nextafter(m, -100.0f));
    }
  }
  for (float x : {-0.0f, 6.0f, 6.0001f, 7.0f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), 1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min()})
    xs.push_back(x);
  for (float x : xs) {
    const uint8_t got = k3::float_to_e2m1(x), want = e2m1_round_ref(x);
    ck.expect(got == want, "e2m1(%.9g) = code %d, want %d", static_cast<double>(x), got, want);
  }
  // The hand-made list (value -> code): ties go to the even code.
  const struct { float x; int code; } hand[] = {
      {0.25f, 0},  {0.75f, 2},  {1.25f, 2}, {1.75f, 4}, {2.5f, 4},   {3.5f, 6},   {5.0f, 6},  {5.0001f, 7},
      {7.0f, 7},   {-0.25f, 8}, {-5.0f, 14}, {-6.5f, 15}, {0.26f, 1}, {-2.4f, 12}, {4.9f, 6},  {-0.0f, 8}};
  for (const auto& h : hand) {
    const uint8_t got = k3::float_to_e2m1(h.x);
    ck.expect(got == h.code, "hand case e2m1(%g) = %d, want %d", static_cast<double>(h.x), got, h.code);
  }
  ck.expect(k3::float_to_e2m1(std::numeric_limits<float>::quiet_NaN()) == 7, "NaN -> +6 (code 7)");
}

void check_ue4m3() {
  Check ck("ue4m3 scale factors: decode, round trip, ties to even, saturation, underflow");
  for (int c = 0; c <= 0x7E; ++c) {
    const double want = ue4m3_value_ref(c);
    const float got = k3::ue4m3_to_float(static_cast<uint8_t>(c));
    ck.expect(static_cast<double>(got) == want, "code 0x%02x decodes to %g, want %g", c, got, want);
    ck.expect(k3::float_to_ue4m3(got) == c, "round trip of code 0x%02x", c);
  }
  std::vector<float> xs;
  for (int c = 0; c < 0x7E; ++c) {  // midpoints between consecutive codes (all exact in float) and neighbours
    const float mid = static_cast<float>(0.5 * (ue4m3_value_ref(c) + ue4m3_value_ref(c + 1)));
    xs.push_back(mid);
    xs.push_back(std::nextafter(mid, 1000.0f));
    xs.push_back(std::nextafter(mid, 0.0f));
  }
  for (float x : {0.0f, 1e-12f, 448.0f, 449.0f, 463.9f, 464.0f, 480.0f, 1000.0f, 1e30f, 10.0f / 6.0f, 26.0f / 6.0f})
    xs.push_back(x);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> logu(-12.0f, 10.0f);
  for (int i = 0; i < 2000; ++i) xs.push_back(std::exp2(logu(rng)));
  for (float x : xs) {
    const int got = k3::float_to_ue4m3(x), want = ue4m3_round_ref(x);
    ck.expect(got == want, "ue4m3(%.9g) = 0x%02x, want 0x%02x", static_cast<double>(x), got, want);
  }
  // By hand: 2^-10 is the midpoint of 0 and 2^-9 -> 0 (even); 10/6 = 1.667 -> 1.625 (0x3D); 26/6 = 4.333 -> 4.5
  // (0x49); 464 (the midpoint of 448 and the NaN code's 480) and above saturate to 448 (0x7E).
  ck.expect(k3::float_to_ue4m3(std::ldexp(1.0f, -10)) == 0, "2^-10 -> 0");
  ck.expect(k3::float_to_ue4m3(10.0f / 6.0f) == 0x3D, "10/6 -> 0x3D");
  ck.expect(k3::float_to_ue4m3(26.0f / 6.0f) == 0x49, "26/6 -> 0x49");
  ck.expect(k3::float_to_ue4m3(464.0f) == 0x7E, "464 -> 0x7E");
}

// Unpacks quantize16's words into 16 codes.
void unpack16(uint32_t lo, uint32_t hi, int* codes) {
  for (int i = 0; i < 8; ++i) {
    codes[i] = (lo >> (4 * i)) & 0xF;
    codes[8 + i] = (hi >> (4 * i)) & 0xF;
  }
}

void check_quantize_hand() {
  Check ck("block quantisation: hand-computed cases");
  struct Case {
    const char* what;
    float v[16];
    int sf;
    int codes[16];
  };
  const Case cases[] = {
      // amax 12: scale 12/6 = 2 exactly (0x40).  v/2 = 0, .5, -1, 1.5, 3, 6, -6, .35 (->.5), .25 (tie ->0),
      // -.1 (-> -0), 1.45 (->1.5), 2.45 (->2), 2.5 (tie ->2), -3.5 (tie -> -4), 4.5 (->4), 5.5 (->6).
      {"amax 12, exact scale",
       {0, 1, -2, 3, 6, 12, -12, 0.7f, 0.5f, -0.2f, 2.9f, 4.9f, 5, -7, 9, 11},
       0x40,
       {0, 1, 10, 3, 5, 7, 15, 1, 0, 8, 3, 4, 4, 14, 6, 7}},
      // amax 10: 10/6 = 1.667 -> scale 1.625 (0x3D), rounded down, so 10/1.625 = 6.15 saturates to 6.
      // 5/1.625 = 3.08 -> 3; 1/1.625 = .615 -> .5; 2.4375/1.625 = 1.5; 3.25/1.625 = 2; -6.5/1.625 = -4;
      // 8.125/1.625 = 5 (tie between 4 and 6 -> 4).
      {"amax 10, scale rounds down, saturation",
       {10, -10, 5, 1, 0, 2.4375f, 3.25f, -6.5f, 8.125f, 0, 0, 0, 0, 0, 0, 0},
       0x3D,
       {7, 15, 5, 1, 0, 3, 4, 14, 6, 0, 0, 0, 0, 0, 0, 0}},
      {"all zeros", {0}, 0, {0}},
      // amax 1e-4: 1e-4/6 < 2^-10 rounds to scale 0: everything is zero.
      {"scale underflows to 0", {1e-4f, -5e-5f, 3e-5f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, {0}},
      // amax 1e5: scale saturates at 448 (0x7E); 1e5/448 = 223 -> 6; 448*3 -> 3; -448*0.5 -> -0.5.
      {"scale saturates at 448", {1e5f, 1344, -224, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0x7E, {7, 5, 9, 0}},
  };
  for (const Case& c : cases) {
    uint32_t lo = 0xDEADBEEF, hi = 0xDEADBEEF;
    const int sf = k3::quantize16(c.v, lo, hi);
    ck.expect(sf == c.sf, "%s: scale 0x%02x, want 0x%02x", c.what, sf, c.sf);
    int codes[16];
    unpack16(lo, hi, codes);
    for (int i = 0; i < 16; ++i)
      ck.expect(codes[i] == c.codes[i], "%s: element %d code %d, want %d", c.what, i, codes[i], c.codes[i]);
  }
  // Packing: element 2j in the low nibble of byte j (element 0 = code 7 and element 1 = code 15 -> byte 0xF7).
  uint32_t lo, hi;
  k3::quantize16(cases[1].v, lo, hi);
  ck.expect((lo & 0xFF) == 0xF7, "packed byte 0 = 0x%02x, want 0xF7", lo & 0xFF);
  // The epilogue value is one fused multiply-add: 0.1f = 13421773 * 2^-27, so 0.1f * 10 - 1 = 2^-26 exactly,
  // where a separately rounded product (1.0f) would give 0.
  const float e = k3::epilogue_value(0.1f, 10.0f, 1.0f, -1.0f);
  ck.expect(e == std::ldexp(1.0f, -26), "epilogue_value(.1, 10, 1, -1) = %g, want 2^-26", static_cast<double>(e));
}

// The whole reference on a 1 x 16 output worked out by hand.  A: one row of K = 32 ones (code 2) with scale
// factors 1.0 (0x38) for k < 16 and 0.5 (0x30) for k >= 16.  B: 16 rows; row n has e2m1 value t(n) = the n-th
// table entry ({0,.5,1,1.5,2,3,4,6} then the same negated) for k < 16 and 0 for k >= 16, scale 1.0.
// So acc[n] = 16 t(n) = {0, 8, 16, 24, 32, 48, 64, 96, 0, -8, ..., -96}.
void check_reference_hand() {
  Check ck("reference GEMM + epilogue: hand-computed 1 x 16 x 32 case");
  k3ref::Nvfp4 A = k3ref::make_nvfp4(1, 32), B = k3ref::make_nvfp4(16, 32);
  for (int k = 0; k < 32; ++k) A.set_code(0, k, 2);
  A.scale_ref(0, 0) = 0x38;
  A.scale_ref(0, 1) = 0x30;
  for (int n = 0; n < 16; ++n) {
    for (int k = 0; k < 16; ++k) B.set_code(n, k, static_cast<uint8_t>(n));
    B.scale_ref(n, 0) = 0x38;
    B.scale_ref(n, 1) = 0x38;
  }
  const std::vector<float> acc = k3ref::gemm_acc(A, B);
  for (int n = 0; n < 16; ++n) {
    const float want = 16.0f * ((n & 8) ? -kE2m1[n & 7] : kE2m1[n & 7]);
    ck.expect(acc[n] == want, "acc[%d] = %g, want %g", n, acc[n], want);
  }
  // alpha 0.25, no C: v = 4 t(n), amax 24 -> scale 4 (0x48), codes = n except n = 8: acc[8] = +0 -> code 0.
  {
    const k3ref::Nvfp4 D = k3ref::reference_gemm(A, B, nullptr, 0.25f, 0.0f);
    ck.expect(D.sf[0] == 0x48, "alpha .25: scale 0x%02x, want 0x48", D.sf[0]);
    for (int n = 0; n < 16; ++n) {
      const int want = n == 8 ? 0 : n;
      ck.expect(D.code(0, n) == want, "alpha .25: code[%d] = %d, want %d", n, D.code(0, n), want);
    }
  }
  // alpha 0.25, beta -1, C = 2: v = {-2, 0, 2, 4, 6, 10, 14, 22, -2, -4, -6, -8, -10, -14, -18, -26}; amax 26 ->
  // 26/6 = 4.33 -> scale 4.5 (0x49); v/4.5 = -.44 (-> -.5), 0, .44 (.5), .89 (1), 1.33 (1.5), 2.22 (2), 3.11 (3),
  // 4.89 (4), -.44, -.89, -1.33, -1.78 (-2), -2.22 (-2), -3.11, -4, -5.78 (-6).
  {
    const std::vector<float> C(16, 2.0f);
    const k3ref::Nvfp4 D = k3ref::reference_gemm(A, B, C.data(), 0.25f, -1.0f);
    const int want[16] = {9, 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 12, 13, 14, 15};
    ck.expect(D.sf[0] == 0x49, "beta -1: scale 0x%02x, want 0x49", D.sf[0]);
    for (int n = 0; n < 16; ++n)
      ck.expect(D.code(0, n) == want[n], "beta -1: code[%d] = %d, want %d", n, D.code(0, n), want[n]);
  }
}

// Random NVFP4 matrix: codes uniform in 0..15, scale codes uniform in [lo, hi].
k3ref::Nvfp4 random_nvfp4(int rows, int cols, int sf_lo, int sf_hi, std::mt19937& rng) {
  k3ref::Nvfp4 m = k3ref::make_nvfp4(rows, cols);
  std::uniform_int_distribution<int> code(0, 15), sc(sf_lo, sf_hi);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m.set_code(r, c, static_cast<uint8_t>(code(rng)));
    for (int j = 0; j < cols / 16; ++j) m.scale_ref(r, j) = static_cast<uint8_t>(sc(rng));
  }
  return m;
}

// Value of an element as an integer multiple of 2^-10: e2m1 = i2 / 2 and a normal ue4m3 with e >= 1 is
// (8 + m) 2^(e - 10), so the product is i2 (8 + m) 2^(e - 1) 2^-10 (exact in int64).  Reads the raw storage
// with the documented layout (element 2j in the low nibble of byte j of its row; scale factor c / 16 of its
// row), not through the accessors under test.
int64_t fixed_value(const k3ref::Nvfp4& mat, int r, int c) {
  static const int64_t twice[8] = {0, 1, 2, 3, 4, 6, 8, 12};  // 2 * e2m1 magnitude
  const uint8_t byte = mat.q[static_cast<size_t>(r) * (mat.cols / 2) + c / 2];
  const int q = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
  const int s = mat.sf[static_cast<size_t>(r) * (mat.cols / 16) + c / 16];
  const int e = s >> 3, m = s & 7;
  const int64_t v = twice[q & 7] * (8 + m) * (int64_t{1} << (e - 1));
  return (q & 8) ? -v : v;
}

void check_gemm_exact() {
  Check ck("reference GEMM accumulators = exact integer computation (random problems)");
  std::mt19937 rng(12345);
  const struct { int M, N, K; } shapes[] = {{1, 1, 16}, {7, 9, 64}, {16, 16, 256}, {33, 20, 512}, {128, 8, 160}};
  for (const auto& s : shapes) {
    // Scale codes 0x08..0x6F: normal, e = 1..13, values 2^-6 .. 1.875 * 2^6.  Every value is a multiple of 2^-10
    // below 2^11.6, every product a multiple of 2^-20 below 2^23.2: any sum of up to 512 products spans < 53 bits,
    // so the reference's double sum is exact and must equal the integer sum.
    const k3ref::Nvfp4 A = random_nvfp4(s.M, s.K, 0x08, 0x6F, rng), B = random_nvfp4(s.N, s.K, 0x08, 0x6F, rng);
    const std::vector<float> acc = k3ref::gemm_acc(A, B);
    for (int m = 0; m < s.M; ++m)
      for (int n = 0; n < s.N; ++n) {
        int64_t sum = 0;  // multiples of 2^-20, summed in the opposite k order
        for (int k = s.K - 1; k >= 0; --k) sum += fixed_value(A, m, k) * fixed_value(B, n, k);
        const float want = static_cast<float>(std::ldexp(static_cast<double>(sum), -20));
        const float got = acc[static_cast<size_t>(m) * s.N + n];
        ck.expect(got == want, "%dx%dx%d: acc[%d][%d] = %.9g, exact %.9g", s.M, s.N, s.K, m, n, got, want);
      }
  }
}

void check_exact_family() {
  Check ck("'exact' inputs (scales .5/1/2): any fp32 accumulation order equals the reference");
  std::mt19937 rng(99);
  const int M = 8, N = 8, K = 2048;
  // scale codes 0x30 (0.5), 0x38 (1), 0x40 (2): products are multiples of 2^-4 below 144, sums below 2^18.2 over
  // 2048 terms: every partial sum is an fp32 integer multiple of 2^-4 below 2^22.2 < 2^24 -> exact in fp32.
  k3ref::Nvfp4 A = k3ref::make_nvfp4(M, K), B = k3ref::make_nvfp4(N, K);
  std::uniform_int_distribution<int> code(0, 15), sc(0, 2);
  for (k3ref::Nvfp4* m : {&A, &B})
    for (int r = 0; r < m->rows; ++r) {
      for (int c = 0; c < K; ++c) m->set_code(r, c, static_cast<uint8_t>(code(rng)));
      for (int j = 0; j < K / 16; ++j) m->scale_ref(r, j) = static_cast<uint8_t>(0x30 + 8 * sc(rng));
    }
  const std::vector<float> acc = k3ref::gemm_acc(A, B);
  const std::vector<float> a = k3ref::decode(A), b = k3ref::decode(B);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float fwd = 0.0f, bwd = 0.0f, blocked = 0.0f;
      for (int k = 0; k < K; ++k) fwd += a[m * K + k] * b[n * K + k];
      for (int k = K - 1; k >= 0; --k) bwd += a[m * K + k] * b[n * K + k];
      for (int k0 = 0; k0 < K; k0 += 64) {  // per MMA (K = 64) partial sums, then accumulated
        float part = 0.0f;
        for (int k = k0; k < k0 + 64; ++k) part += a[m * K + k] * b[n * K + k];
        blocked += part;
      }
      const float ref = acc[m * N + n];
      ck.expect(fwd == ref && bwd == ref && blocked == ref, "acc[%d][%d]: ref %.9g, fp32 orders %.9g %.9g %.9g", m,
                n, ref, fwd, bwd, blocked);
    }
}

void check_tiled_layout() {
  Check ck("128x4-tiled scale-factor layout");
  // Hand-computed offsets: (row, sf_col, sf_cols) -> byte.
  const struct { size_t r, c, cols, off; } hand[] = {
      {0, 0, 8, 0},    {1, 0, 8, 16},   {32, 0, 8, 4},     {0, 1, 8, 1},       {31, 3, 8, 499}, {127, 3, 4, 511},
      {33, 5, 8, 533}, {128, 0, 8, 1024}, {128, 4, 8, 1536}, {200, 9, 12, 5 * 512 + 8 * 16 + 2 * 4 + 1}};
  for (const auto& h : hand) {
    const size_t got = k3::sf_tiled_offset(h.r, h.c, h.cols);
    ck.expect(got == h.off, "offset(%zu, %zu; %zu cols) = %zu, want %zu", h.r, h.c, h.cols, got, h.off);
  }
  const int rows = 256, cols = 12;
  std::vector<uint8_t> sf(rows * cols);
  for (size_t i = 0; i < sf.size(); ++i) sf[i] = static_cast<uint8_t>(i * 37 + 11);
  std::vector<int> hit(sf.size(), 0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ++hit[k3::sf_tiled_offset(r, c, cols)];
  ck.expect(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; }), "offsets are not a permutation");
  ck.expect(k3ref::from_tiled(k3ref::to_tiled(sf, rows, cols), rows, cols) == sf, "from_tiled(to_tiled(x)) != x");
  // The first tiled block's first 16-byte row holds rows 0, 32, 64, 96 (4 scale factors each).
  const std::vector<uint8_t> t = k3ref::to_tiled(sf, rows, cols);
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < 4; ++c)
      ck.expect(t[j * 4 + c] == sf[(32 * j) * cols + c], "tiled byte %d holds row %d sf %d", j * 4 + c, 32 * j, c);
}

}  // namespace

int main() {
  check_e2m1_table();
  check_e2m1_rounding();
  check_ue4m3();
  check_quantize_hand();
  check_reference_hand();
  check_gemm_exact();
  check_exact_family();
  check_tiled_layout();
  std::printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail == 0 ? 0 : 1;
}
