// Values out of range are caught before simulation; each boundary is tested on both sides.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace smpipe;
using test::compile_error;

namespace {
std::string with_op(const std::string& decls, const std::string& op, int warps = 4, bool elect = false) {
  std::string body = elect ? "elect { " + op + " }" : op;
  return compile_error("kernel k warps=" + std::to_string(warps) + " {\n" + decls + "\n  warpgroup 0 a {\n    " + body +
                       "\n  }\n}\n");
}
}  // namespace

TEST_CASE("mbarrier count must be in 1..2^20-1", "[isa][boundary]") {
  CHECK(compile_error("kernel k { mbarrier b count=1 }").empty());
  CHECK(compile_error("kernel k { mbarrier b count=1048575 }").empty());
  CHECK_THAT(compile_error("kernel k { mbarrier b count=0 }"), Catch::Contains("mbarrier count 0 out of range 1..1048575"));
  CHECK_THAT(compile_error("kernel k { mbarrier b count=1048576 }"), Catch::Contains("out of range 1..1048575"));
  CHECK(with_op("mbarrier b", "mbarrier.init b count=1048575", 4, true).empty());
  CHECK_THAT(with_op("mbarrier b", "mbarrier.init b count=1048576", 4, true), Catch::Contains("out of range"));
}

TEST_CASE("named barrier id must be in 0..15", "[isa][boundary]") {
  CHECK(compile_error("kernel k { named_barrier n id=15 }").empty());
  CHECK_THAT(compile_error("kernel k { named_barrier n id=16 }"), Catch::Contains("named barrier id 16 out of range 0..15"));
  CHECK(with_op("", "bar.sync 0").empty());
  CHECK(with_op("", "bar.sync 15 threads=128").empty());
  CHECK_THAT(with_op("", "bar.sync 16"), Catch::Contains("named barrier id 16 out of range 0..15"));
  CHECK_THAT(with_op("", "bar.sync -1"), Catch::Contains("out of range 0..15"));
  // An id known only at run time compiles (PTX: a register operand); the simulator checks its value.
  CHECK(with_op("", "bar.sync 1 + warpgroup threads=128").empty());
  CHECK_THAT(with_op("", "bar.sync 8 + 8 threads=128"), Catch::Contains("named barrier id 16 out of range 0..15"));
  CHECK_THAT(with_op("", "bar.sync 1 threads=100"), Catch::Contains("must be a positive multiple of 32"));
  CHECK_THAT(with_op("", "bar.sync 1 threads=160"), Catch::Contains("at most the CTA's 128 threads"));
  CHECK_THAT(with_op("", "bar.arrive 1"), Catch::Contains("'bar.arrive' needs threads="));
}

TEST_CASE("tmem cols must be a power of 2 in 32..512", "[isa][boundary]") {
  CHECK(with_op("", "tmem.alloc cols=32 -> t").empty());
  CHECK(with_op("", "tmem.alloc cols=512 -> t").empty());
  CHECK_THAT(with_op("", "tmem.alloc cols=16 -> t"), Catch::Contains("tmem cols=16 must be a power of 2 in 32..512"));
  CHECK_THAT(with_op("", "tmem.alloc cols=1024 -> t"), Catch::Contains("power of 2 in 32..512"));
  CHECK_THAT(with_op("", "tmem.alloc cols=96 -> t"), Catch::Contains("power of 2 in 32..512"));
  CHECK_THAT(with_op("", "tmem.alloc cols=32"), Catch::Contains("'tmem.alloc' produces 1 value(s)"));
}

TEST_CASE("wgmma shapes are the ones PTX has", "[isa][boundary]") {
  const std::string s = "smem a bytes=1K";
  CHECK(with_op(s, "wgmma m64n8k16 dtype=bf16 a=a b=a").empty());
  CHECK(with_op(s, "wgmma m64n256k16 dtype=f16 a=a b=a").empty());
  CHECK(with_op(s, "wgmma m64n256k32 dtype=e4m3 a=a b=a").empty());
  CHECK(with_op(s, "wgmma m64n128k8 dtype=tf32 a=a b=a").empty());
  CHECK_THAT(with_op(s, "wgmma m64n264k16 dtype=bf16 a=a b=a"), Catch::Contains("wgmma has no shape m64n264k16 for bf16"));
  CHECK_THAT(with_op(s, "wgmma m64n12k16 dtype=bf16 a=a b=a"), Catch::Contains("has no shape"));
  CHECK_THAT(with_op(s, "wgmma m128n128k16 dtype=bf16 a=a b=a"), Catch::Contains("has no shape"));
  CHECK_THAT(with_op(s, "wgmma m64n128k16 dtype=e4m3 a=a b=a"), Catch::Contains("m64nNk32"));
  CHECK_THAT(with_op(s, "elect { wgmma m64n128k16 dtype=bf16 a=a b=a }"), Catch::Contains("warpgroup-collective"));
}

TEST_CASE("umma shapes depend on kind and cta_group", "[isa][boundary]") {
  const std::string s = "smem a bytes=1K";
  CHECK(with_op(s, "umma m128n256k16 kind=f16 a=a b=a", 4, true).empty());
  CHECK(with_op(s, "umma m64n8k16 kind=f16 a=a b=a", 4, true).empty());
  CHECK(with_op(s, "umma m256n256k16 kind=f16 a=a b=a cta_group=2", 4, true).empty());
  CHECK_THAT(with_op(s, "umma m256n256k16 kind=f16 a=a b=a", 4, true), Catch::Contains("has no shape"));
  CHECK_THAT(with_op(s, "umma m128n8k16 kind=f16 a=a b=a cta_group=2", 4, true), Catch::Contains("N 16..256 step 16"));
  CHECK(with_op(s, "umma m128n128k64 kind=mxf4nvf4 a=a b=a", 4, true).empty());
  CHECK_THAT(with_op(s, "umma m64n128k64 kind=mxf4nvf4 a=a b=a", 4, true), Catch::Contains("has no shape"));
  CHECK_THAT(with_op(s, "umma m128n128k16 kind=f16 a=a b=a"), Catch::Contains("issued by one thread: put it inside elect"));
}

TEST_CASE("TMA boxes follow the tensor-map limits", "[isa][boundary]") {
  const std::string d = "smem s bytes=64K\n  mbarrier b count=1\n  tensor T dtype=bf16 shape=(1024, 1024)";
  CHECK(with_op(d, "tma.load T box=(256, 8) dst=s bar=b", 4, true).empty());
  CHECK_THAT(with_op(d, "tma.load T box=(257, 8) dst=s bar=b", 4, true), Catch::Contains("out of range 1..256"));
  CHECK_THAT(with_op(d, "tma.load T box=(0, 8) dst=s bar=b", 4, true), Catch::Contains("out of range 1..256"));
  CHECK_THAT(with_op(d, "tma.load T box=(8, 4) dst=s bar=b", 4, true), Catch::Contains("not a multiple of 16 bytes"));
  CHECK(with_op(d, "tma.load T box=(8, 64) dst=s bar=b swizzle=128", 4, true).empty());
  CHECK_THAT(with_op(d, "tma.load T box=(8, 128) dst=s bar=b swizzle=128", 4, true),
             Catch::Contains("inner box is 256 bytes but the 128B swizzle allows at most 128"));
  CHECK_THAT(with_op(d, "tma.load T box=(8, 8, 8) dst=s bar=b", 4, true), Catch::Contains("box has 3 dimensions but tensor 'T' has rank 2"));
  CHECK_THAT(with_op(d, "tma.load T box=(8, 64) dst=s bar=b"), Catch::Contains("put it inside elect"));
  CHECK_THAT(with_op(d, "tma.load bytes=24 dst=s bar=b", 4, true), Catch::Contains("multiple of 16"));
  CHECK_THAT(with_op(d, "tma.load T box=(8, 64) dst=b bar=b", 4, true), Catch::Contains("'b' is an mbarrier, not an smem buffer"));
  CHECK_THAT(compile_error("kernel k { tensor T dtype=bf16 shape=(1,2,3,4,5,6) }"), Catch::Contains("tensor rank 6 out of range 1..5"));
  // l2_promotion= takes the tensor map's values in bytes, written before or after dtype= and shape=.
  for (int v : {0, 64, 128, 256}) {
    CHECK(compile_error(fmt::format("kernel k {{ tensor T dtype=bf16 shape=(8, 64) l2_promotion={} }}", v)).empty());
    CHECK(compile_error(fmt::format("kernel k {{ tensor T l2_promotion={} dtype=bf16 shape=(8, 64) }}", v)).empty());
  }
  for (int v : {-1, 1, 32, 63, 65, 127, 129, 255, 257, 512})
    CHECK_THAT(compile_error(fmt::format("kernel k {{ tensor T dtype=bf16 shape=(8, 64) l2_promotion={} }}", v)),
               Catch::Contains("must be 0, 64, 128 or 256"));
}

TEST_CASE("an op's constant bytes fit the smem element it writes or reads", "[isa][boundary]") {
  // One element of s is 4 KB: a 64 x 32 bf16 box (4096 bytes) fits, 65 rows (4160 bytes) run past it.
  const std::string d = "smem s[2] bytes=4K\n  mbarrier b count=1\n  tensor T dtype=bf16 shape=(1024, 1024)";
  CHECK(with_op(d, "tma.load T box=(64, 32) dst=s[0] bar=b", 4, true).empty());
  CHECK_THAT(with_op(d, "tma.load T box=(65, 32) dst=s[0] bar=b", 4, true),
             Catch::Contains("'tma.load' writes 4160 bytes into 's', whose elements are 4096 bytes: the 64 bytes past the element"));
  CHECK(with_op(d, "tma.load bytes=4096 dst=s[1] bar=b", 4, true).empty());
  CHECK_THAT(with_op(d, "tma.load bytes=4112 dst=s[1] bar=b", 4, true), Catch::Contains("writes 4112 bytes into 's'"));
  CHECK(with_op(d, "tma.store T box=(64, 32) src=s[0]", 4, true).empty());
  CHECK_THAT(with_op(d, "tma.store T box=(65, 32) src=s[0]", 4, true), Catch::Contains("'tma.store' reads 4160 bytes from 's'"));
  CHECK(with_op(d, "cp.async bytes=4096 dst=s[0]").empty());
  CHECK_THAT(with_op(d, "cp.async bytes=4097 dst=s[0]"), Catch::Contains("'cp.async' writes 4097 bytes into 's'"));
  CHECK(with_op(d, "cp.async src=T box=(64, 32) dst=s[0]").empty());
  CHECK_THAT(with_op(d, "cp.async src=T box=(64, 33) dst=s[0]"), Catch::Contains("writes 4224 bytes into 's'"));
  CHECK(with_op(d, "st.shared bytes=4096 dst=s[0]").empty());
  CHECK_THAT(with_op(d, "st.shared bytes=4097 dst=s[0]"), Catch::Contains("'st.shared' writes 4097 bytes into 's'"));
  CHECK(with_op(d, "ld.shared bytes=4096 src=s[0]").empty());
  CHECK_THAT(with_op(d, "ld.shared bytes=4097 src=s[0]"), Catch::Contains("'ld.shared' reads 4097 bytes from 's'"));
  CHECK(with_op(d, "ldmatrix bytes=4096 src=s[0]").empty());
  CHECK_THAT(with_op(d, "ldmatrix bytes=4097 src=s[0]"), Catch::Contains("'ldmatrix' reads 4097 bytes from 's'"));
  // Without a buffer the op is not checked (ld.shared bytes=N alone), nor are bytes known only at run time here.
  CHECK(with_op(d, "ld.shared bytes=1M").empty());
  CHECK(with_op(d, "for i in 0..1 { st.shared bytes=4097 + i dst=s[0] }").empty());
}

TEST_CASE("other attribute checks", "[isa][boundary]") {
  const std::string d = "mbarrier b[4] count=1\n  smem s bytes=1K";
  CHECK_THAT(with_op(d, "wait b[4] parity=0"), Catch::Contains("index 4 out of range: 'b' has 4 elements"));
  CHECK(with_op(d, "wait b[3] parity=0").empty());
  CHECK_THAT(with_op(d, "wait b parity=0"), Catch::Contains("'b' is an array of 4: write b[i]"));
  CHECK(with_op(d, "wait b[0] parity=2").empty());  // any integer: its parity counts (semantics: PTX phaseParity)
  CHECK_THAT(with_op(d, "arrive b[0] count=0"), Catch::Contains("arrive count 0 out of range"));
  CHECK_THAT(with_op(d, "arrive.expect_tx b[0] tx=1048576", 4, true), Catch::Contains("tx=1048576 out of range 0..1048575"));
  CHECK(with_op(d, "arrive.expect_tx b[0] tx=1048575", 4, true).empty());
  CHECK_THAT(with_op(d, "cp.async bytes=16 dst=s size=12"), Catch::Contains("size=12 must be 4, 8 or 16"));
  CHECK_THAT(with_op(d, "mma.sync m16n8k16 dtype=tf32"), Catch::Contains("mma.sync has no shape"));
  CHECK_THAT(with_op(d, "tmem.ld 32x32b.x3"), Catch::Contains("is not a tcgen05.ld/st shape"));
  CHECK(with_op(d, "tmem.ld 32x32b.x128").empty());
  CHECK_THAT(with_op(d, "tmem.wait"), Catch::Contains("exactly one of 'ld' or 'st'"));
  CHECK_THAT(with_op(d, "wgmma.wait 64"), Catch::Contains("out of range 0..63"));
  CHECK_THAT(with_op(d, "let warp = 3"), Catch::Contains("'warp' is a built-in value"));
  CHECK_THAT(with_op(d, "compute cycles=b"), Catch::Contains("'b' is a declaration, not a value"));
}

TEST_CASE("cp.async / ld.global / st.global: bytes= or a box of their tensor (not both)", "[isa][boundary]") {
  const std::string d = "smem s bytes=1K\n  tensor T dtype=f16 shape=(64, 64)";
  CHECK(with_op(d, "cp.async bytes=512 dst=s").empty());
  CHECK(with_op(d, "cp.async dst=s src=T box=(4, 64) at=(8, 0)").empty());
  CHECK(with_op(d, "cp.async dst=s src=T box=(4, 64)").empty());  // at= defaults to the origin
  CHECK_THAT(with_op(d, "cp.async dst=s"), Catch::Contains("needs either bytes=N or box=(...) of its src= tensor"));
  CHECK_THAT(with_op(d, "cp.async bytes=512 dst=s src=T box=(4, 64)"), Catch::Contains("not both"));
  CHECK_THAT(with_op(d, "cp.async dst=s box=(4, 64)"), Catch::Contains("box= needs the tensor it is a box of (src=T)"));
  CHECK_THAT(with_op(d, "cp.async bytes=512 dst=s src=T at=(0, 0)"), Catch::Contains("at= goes with box="));
  CHECK_THAT(with_op(d, "cp.async dst=s src=T box=(4, 4, 4)"), Catch::Contains("box has 3 dimensions but tensor 'T' has rank 2"));
  CHECK_THAT(with_op(d, "cp.async dst=s src=T box=(4, 64) at=(0)"), Catch::Contains("at= has 1 coordinates"));
  CHECK_THAT(with_op(d, "cp.async dst=s src=T box=(0, 64)"), Catch::Contains("box dimension 0 = 0 out of range 1..1073741824"));
  CHECK(with_op(d, "cp.async dst=s src=T box=(1, 1)").empty());  // a box may be smaller than a row or larger than the tensor
  // (boxes larger than any smem buffer: ld.global, which has none; a cp.async's box must fit its dst= element)
  CHECK(with_op(d, "ld.global src=T box=(128, 64)").empty());
  CHECK_THAT(with_op(d, "ld.global src=T box=(32768, 32768)"), Catch::Contains("more than 1073741824 bytes"));
  CHECK(with_op(d, "ld.global src=T box=(16384, 32768)").empty());  // exactly 1 GiB
  CHECK_THAT(with_op(d, "cp.async dst=s src=T box=(128, 64)"), Catch::Contains("writes 16384 bytes into 's'"));
  CHECK(with_op(d, "ld.global src=T box=(8, 64) at=(0, 0)").empty());
  CHECK(with_op(d, "ld.global bytes=64").empty());
  CHECK_THAT(with_op(d, "ld.global src=T"), Catch::Contains("needs either bytes=N or box=(...) of its src= tensor"));
  CHECK(with_op(d, "st.global dst=T box=(8, 64) at=(8, 0)").empty());
  CHECK_THAT(with_op(d, "st.global dst=s box=(8, 64)"), Catch::Contains("'s' is an smem buffer, not a tensor"));
  CHECK_THAT(with_op(d, "st.global box=(8, 64)"), Catch::Contains("box= needs the tensor it is a box of (dst=T)"));
}

TEST_CASE("bar.sync and bar.arrive are .aligned: not inside elect", "[isa][boundary]") {
  CHECK(with_op("", "bar.sync 1 threads=128").empty());
  CHECK(with_op("", "bar.arrive 1 threads=128").empty());
  CHECK_THAT(with_op("", "bar.sync 1 threads=128", 4, true), Catch::Contains("'bar.sync' is .aligned"));
  CHECK_THAT(with_op("", "bar.arrive 1 threads=128", 4, true), Catch::Contains("'bar.arrive' is .aligned"));
}

TEST_CASE("the other .sync.aligned warp ops are not inside elect either", "[isa][boundary]") {
  const std::string s = "smem a bytes=1K";
  for (const std::string op : {"ldmatrix bytes=512 src=a", "mma.sync m16n8k16 dtype=bf16", "tmem.ld 32x32b.x32", "tmem.st 32x32b.x32",
                               "tmem.wait ld", "tmem.wait st", "tmem.relinquish"}) {
    INFO(op);
    CHECK(with_op(s, op).empty());
    CHECK_THAT(with_op(s, op, 4, true), Catch::Contains(".sync.aligned): every thread of the warp executes it"));
  }
}

TEST_CASE("wgmma and mma.sync take the PTX operand types only", "[isa][boundary]") {
  const std::string s = "smem a bytes=1K";
  for (const char* t : {"f16", "bf16"}) CHECK(with_op(s, fmt::format("wgmma m64n128k16 dtype={} a=a b=a", t)).empty());
  for (const char* t : {"e4m3", "e5m2", "s8", "u8"}) CHECK(with_op(s, fmt::format("wgmma m64n128k32 dtype={} a=a b=a", t)).empty());
  // 16- and 8-bit types PTX wgmma does not have (they passed when K was chosen from the width alone)
  for (const char* t : {"s16", "u16"}) CHECK_THAT(with_op(s, fmt::format("wgmma m64n128k16 dtype={} a=a b=a", t)), Catch::Contains("wgmma has no dtype"));
  for (const char* t : {"fp8", "ue4m3", "ue8m0"})
    CHECK_THAT(with_op(s, fmt::format("wgmma m64n128k32 dtype={} a=a b=a", t)), Catch::Contains("wgmma has no dtype"));
  CHECK(with_op(s, "mma.sync m16n8k8 dtype=tf32").empty());
  CHECK(with_op(s, "mma.sync m16n8k32 dtype=s8").empty());
  CHECK_THAT(with_op(s, "mma.sync m16n8k8 dtype=f32"), Catch::Contains("mma.sync has no shape"));
  CHECK_THAT(with_op(s, "mma.sync m16n8k16 dtype=u16"), Catch::Contains("mma.sync has no shape"));
}

TEST_CASE("tcgen05.cp shapes are the PTX ones, warpx qualifiers included", "[isa][boundary]") {
  const std::string s = "smem a bytes=4K";
  for (const char* sh : {"128x256b", "4x256b", "128x128b", "64x128b", "32x128b", "64x128b.warpx2", "32x128b.warpx4"})
    CHECK(with_op(s, fmt::format("elect {{ tmem.cp {} src=a }}", sh)).empty());
  for (const char* sh : {"4x256b.anything", "128x256b.warpx2", "64x128b.warpx4", "16x128b"})
    CHECK_THAT(with_op(s, fmt::format("elect {{ tmem.cp {} src=a }}", sh)), Catch::Contains("is not a tcgen05.cp shape"));
}

TEST_CASE("bar_cta is a cluster rank, as cta= is", "[isa][boundary]") {
  const std::string s = "smem a bytes=8K\n  mbarrier b count=1\n  tensor A dtype=bf16 shape=(256, 256)";
  CHECK(with_op(s, "elect { tma.load A box=(32, 64) at=(0, 0) dst=a bar=b bar_cta=0 }").empty());
  CHECK(with_op(s, "elect { tma.load A box=(32, 64) at=(0, 0) dst=a bar=b bar_cta=15 }").empty());
  CHECK_THAT(with_op(s, "elect { tma.load A box=(32, 64) at=(0, 0) dst=a bar=b bar_cta=-1 }"), Catch::Contains("bar_cta=-1 out of range"));
  CHECK_THAT(with_op(s, "elect { tma.load A box=(32, 64) at=(0, 0) dst=a bar=b bar_cta=16 }"), Catch::Contains("bar_cta=16 out of range"));
}

TEST_CASE("one kernel uses one tcgen05 cta_group", "[isa][boundary]") {
  const char* decls = "smem a bytes=32K\n smem b bytes=32K";
  auto two = [&](int g1, int g2) {
    return with_op(decls, fmt::format("umma m128n128k16 kind=f16 a=a b=b cta_group={}\n umma m128n128k16 kind=f16 a=a b=b cta_group={}", g1, g2),
                   4, true);
  };
  CHECK(two(1, 1).empty());
  CHECK(two(2, 2).empty());
  CHECK_THAT(two(1, 2), Catch::Contains("cta_group=2 here, but the tcgen05 op at line 5 uses cta_group=1"));
}

TEST_CASE("a TMA tensor's rows are a multiple of 16 bytes (tensor-map global strides)", "[isa][boundary]") {
  auto load = [](const char* shape, const char* dtype, const char* box) {
    return with_op(fmt::format("mbarrier f count=1\n smem s bytes=64K\n tensor T dtype={} shape={}", dtype, shape),
                   fmt::format("tma.load T box={} dst=s bar=f", box), 4, true);
  };
  CHECK(load("(64, 8)", "bf16", "(64, 8)").empty());        // 16-byte rows
  CHECK_THAT(load("(64, 12)", "bf16", "(64, 8)"), Catch::Contains("a row of 12 x 16 bits is not a multiple of 16 bytes"));
  CHECK(load("(64, 32)", "e2m1", "(64, 32)").empty());      // 32 fp4 = 16 bytes
  CHECK_THAT(load("(64, 40)", "e2m1", "(64, 32)"), Catch::Contains("not a multiple of 16 bytes"));
  CHECK(load("(100)", "bf16", "(8)").empty());              // rank 1: no stride
}

TEST_CASE("constant arithmetic is checked: a result outside the signed 64-bit range is an error, never wrapped", "[compiler]") {
  auto with = [](const std::string& expr) {
    return compile_error("const X = " + expr + "\nkernel k warps=1 {\n warp 0 w { compute cycles=max(1, X % 2) }\n}\n");
  };
  // The edges of the range still fold.
  CHECK(with("9223372036854775806 + 1").empty());
  CHECK(with("-9223372036854775807 - 1").empty());
  CHECK(with("3037000499 * 3037000499").empty());
  CHECK(with("(-9223372036854775807 - 1) / 1").empty());
  CHECK(with("(-9223372036854775807 - 1) % -1").empty());  // 0, where the machine's remainder instruction traps
  // One past them is an input error at the expression.
  for (const char* e : {"9223372036854775807 + 1", "-9223372036854775807 - 2", "3037000500 * 3037000500",
                        "(-9223372036854775807 - 1) / -1", "-(-9223372036854775807 - 1)"}) {
    INFO(e);
    CHECK_THAT(with(e), Catch::Contains("integer overflow"));
    CHECK_THAT(with(e), Catch::Contains("test.pipe:1:"));
  }
  CHECK_THAT(with("1 / 0"), Catch::Contains("division by zero"));
  CHECK_THAT(with("1 % 0"), Catch::Contains("division by zero"));
  // ceil_div rounds towards +infinity for negative dividends too, and cannot overflow.
  CHECK(with("ceil_div(9223372036854775807, 2) - 4611686018427387904").empty());
}

TEST_CASE("two kernels of one name are an error at the second: --kernel could not choose", "[compiler]") {
  const std::string one = "kernel k warps=1 {\n  warp 0 w { compute cycles=1 }\n}\n";
  CHECK_THAT(compile_error(one + one), Catch::Contains("test.pipe:4:1") && Catch::Contains("kernel 'k' is declared twice (first at line 1)"));
  CHECK(compile_error(one + "kernel k2 warps=1 {\n  warp 0 w { compute cycles=1 }\n}\n").find("declared twice") == std::string::npos);
}

TEST_CASE("a proc's result is assigned before it is read, on the body's first pass", "[isa][compiler]") {
  auto prog = [](const std::string& body) {
    return "proc p(a) -> r {\n" + body + "}\nkernel k warps=1 {\n warp 0 w {\n p(3) -> v\n compute cycles=v\n }\n}\n";
  };
  // Never assigned: the caller would get 0 (or the previous call's value).
  CHECK(compile_error(prog(" compute cycles=a\n")) ==
        "test.pipe:1:1: error: proc 'p' never assigns its result 'r' (`let r = ...` or `-> r` in its body)\n  proc p(a) -> r {\n  ^");
  // Read before its first assignment: in an op, in its own `let`, in a loop's condition.
  CHECK_THAT(compile_error(prog(" compute cycles=a + r\n let r = 5\n")),
             Catch::StartsWith("test.pipe:2:21: error: proc 'p' reads its result 'r' before assigning it"));
  CHECK_THAT(compile_error(prog(" let r = r + 1\n")), Catch::Contains("reads its result 'r' before assigning it"));
  CHECK_THAT(compile_error(prog(" while r < a { let r = r + 1 }\n")), Catch::Contains("reads its result 'r' before assigning it"));
  // Assigned first (by a let, in a nested block, or as an op's or a call's result): fine, and read back afterwards.
  for (const char* ok : {" let r = a * 2\n compute cycles=r\n", " if a > 0 { let r = a } else { let r = 1 }\n",
                         " let i = 0\n while i < a { let r = i\n let i = i + 1 }\n", " test_wait b parity=0 -> r\n"}) {
    INFO(ok);
    std::string text = prog(ok);
    text.replace(text.find("warps=1 {\n"), 10, "warps=1 {\n mbarrier b count=1\n");
    CHECK_NOTHROW(test::compile_text(text));
  }
}

TEST_CASE("a param or const cannot take a built-in's name", "[isa][names]") {
  // `param warp = 40` would stand for the built-in in every expression (every warp 40): refused at its place, as a let
  // or a declaration of that name is; another name is fine.
  CHECK(compile_error("param warps_per_cta = 40\nkernel k { }").empty());
  CHECK(compile_error("const sm_ids = 4\nkernel k { }").empty());
  CHECK_THAT(compile_error("param warp = 40\nkernel k { }"),
             Catch::Contains("test.pipe:1:1") && Catch::Contains("'warp' is a built-in name (a value of each warp); a param or const cannot take it"));
  CHECK_THAT(compile_error("const sm = 40\nkernel k { }"), Catch::Contains("'sm' is a built-in name"));
  CHECK_THAT(compile_error("param cluster_rank = 1\nkernel k { }"), Catch::Contains("'cluster_rank' is a built-in name"));
}
