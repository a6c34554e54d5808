#include "fuzz/pipe_vocab.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "isa/lexer.hpp"
#include "isa/ops.hpp"
#include "isa/source.hpp"

namespace smpipe::fuzz {

namespace {

constexpr std::uint8_t kSecondaryFirst = 0xE0;

std::vector<std::string> build_primary() {
  std::vector<std::string> t = {
      "\n", "\n",
      // punctuation and operators (isa/lexer.cpp)
      "(", ")", "[", "]", "{", "}", ",", "=", ";", "..", "->", "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "+", "-",
      "*", "/", "%", "<", ">", "!", "~", "&", "|", "^",
      // file level, declarations, statements
      "param", "const", "gpu", "kernel", "grid", "cluster", "warps", "smem", "regs", "assert", "report", "mbarrier", "tensor",
      "named_barrier", "global", "warp", "warpgroup", "warpgroups", "let", "for", "in", "step", "if", "else", "while",
      "break", "continue", "exit", "elect", "proc", "region", "count", "bytes", "dtype", "shape", "l2_promotion", "id", "init", "whole",
      "parity", "tx", "bar",
      // built-ins and functions
      "warp_in_role", "cta", "cta_x", "cta_y", "cta_z", "cluster_rank", "num_ctas", "sm", "sm_ctas_before", "SM_COUNT", "min", "max",
      "ceil_div",
      // machines
      "h100-sxm", "h200", "b200",
      // identifiers
      "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "full",
      "empty", "sA", "sB", "A", "B", "k", "s", "i", "producer", "consumer", "STAGES",
      // numbers
      "0", "1", "2", "3", "4", "5", "6", "7", "8", "12", "16", "31", "32", "33", "63", "64", "100", "127", "128", "255",
      "256", "512", "1024", "4096", "8K", "16K", "32K", "64K", "1M", "0x10",
      "\"msg\"",
      // the most common ops and attributes
      "wait", "arrive", "arrive.expect_tx", "tma.load", "tma.store", "tma.commit", "tma.wait", "wgmma", "wgmma.fence",
      "wgmma.commit", "wgmma.wait", "compute", "bar.sync", "cluster.sync", "fence.proxy.async", "cp.async",
      "cp.async.wait", "umma", "tmem.alloc", "mbarrier.init", "box", "at", "dst", "src", "threads", "cols", "a", "b",
      "m", "n", "sem", "read", "multicast", "bar_cta", "cycles"};
  if (t.size() > kSecondaryFirst) std::abort();  // the byte codes above 0xDF select the secondary table
  return t;
}

std::vector<std::string> build_secondary() {
  std::vector<std::string> t;
  for (const isa::OpSpec& s : isa::all_ops()) t.emplace_back(s.name);
  for (int a = 0; a < isa::kAttrCount; ++a) t.emplace_back(isa::attr_name(static_cast<isa::Attr>(a)));
  for (const char* w :
       {// dtypes and MMA kinds
        "f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "fp8", "s8", "u8", "ue4m3", "ue8m0", "e2m1", "fp4", "nvfp4",
        "mxfp4", "e3m2", "e2m3", "fp6", "s16", "u16", "s32", "u32", "s64", "u64", "i8", "f8f6f4", "mxf8f6f4", "mxf4",
        "mxf4nvf4",
        // shapes (wgmma, mma.sync, umma, tmem.ld/st, tmem.cp)
        "m64n8k16", "m64n128k16", "m64n256k16", "m64n256k8", "m64n128k32", "m64n264k16", "m16n8k8", "m16n8k16",
        "m16n8k32", "m16n8k4", "m64n64k16", "m128n256k16", "m256n256k16", "m128n128k32", "m128n256k64", "m0n0k0",
        "32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2", "32x32b.x1", "32x32b.x64", "32x32b.x128", "32x32b.x256",
        "16x64b.x8", "128x256b", "4x256b", "128x128b", "64x128b", "32x128b",
        // memory orders, comparisons, other words
        "relaxed", "acquire", "release", "acq_rel", "eq", "ne", "ge", "gt", "le", "lt", "sync", "trailing", "none",
        "cta_group", "noinc", "swizzle",
        // numbers at the edges
        "1048575", "1048576", "2147483647", "2147483648", "4294967295", "4294967296", "3037000499", "3037000500",
        "4611686018427387904", "9223372036854775807", "9223372036854775808", "18446744073709551615",
        "18446744073709551616", "99999999999999999999", "0x7fffffffffffffff", "0x8000000000000000",
        "0xffffffffffffffff", "8191M", "8796093022207K", "8796093022208K", "65536", "65535", "16777216",
        "\"\"", "\"h100-sxm\""})
    t.emplace_back(w);
  if (t.size() > std::size_t{256 - kSecondaryFirst} * 256) std::abort();
  return t;
}

bool is_number(const std::string& s) { return !s.empty() && s[0] >= '0' && s[0] <= '9'; }

}  // namespace

const std::vector<std::string>& primary_tokens() {
  static const std::vector<std::string> t = build_primary();
  return t;
}

const std::vector<std::string>& secondary_tokens() {
  static const std::vector<std::string> t = build_secondary();
  return t;
}

std::string render_tokens(const std::uint8_t* data, std::size_t size) {
  const auto& p = primary_tokens();
  const auto& s = secondary_tokens();
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    const std::string* tok;
    if (data[i] < kSecondaryFirst) {
      tok = &p[data[i] % p.size()];
    } else {
      std::size_t hi = data[i] - kSecondaryFirst;
      std::size_t lo = i + 1 < size ? data[++i] : 0;
      tok = &s[(hi * 256 + lo) % s.size()];
    }
    if (*tok == "\n") {
      out += '\n';
    } else {
      if (!out.empty() && out.back() != '\n') out += ' ';
      out += *tok;
    }
  }
  return out;
}

std::vector<std::uint8_t> encode_tokens(const std::string& text) {
  const auto& p = primary_tokens();
  const auto& s = secondary_tokens();
  std::map<std::string, std::vector<std::uint8_t>> code;
  for (std::size_t i = s.size(); i-- > 0;)
    code[s[i]] = {static_cast<std::uint8_t>(kSecondaryFirst + i / 256), static_cast<std::uint8_t>(i % 256)};
  for (std::size_t i = p.size(); i-- > 0;) code[p[i]] = {static_cast<std::uint8_t>(i)};  // primary first
  std::vector<std::pair<std::int64_t, std::uint8_t>> numbers;  // primary numbers, by value
  for (std::size_t i = 0; i < p.size(); ++i)
    if (is_number(p[i])) {
      std::int64_t mult = p[i].back() == 'K' ? 1024 : p[i].back() == 'M' ? 1024 * 1024 : 1;
      numbers.emplace_back(std::strtoll(p[i].c_str(), nullptr, 0) * mult, static_cast<std::uint8_t>(i));
    }

  isa::SourceFile file("seed.pipe", text);
  std::map<std::string, int> renamed;
  std::vector<std::uint8_t> out;
  auto emit = [&](const std::string& t) {
    auto it = code.find(t);
    if (it == code.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  };
  for (const isa::Token& t : isa::lex(file)) {
    switch (t.kind) {
      case isa::Tok::kEnd: break;
      case isa::Tok::kNewline: emit("\n"); break;
      case isa::Tok::kString: emit("\"msg\""); break;
      case isa::Tok::kInt:
        if (!emit(t.text)) {
          auto best = numbers.front();
          for (const auto& n : numbers)
            if (std::llabs(n.first - t.value) < std::llabs(best.first - t.value)) best = n;
          out.push_back(best.second);
        }
        break;
      case isa::Tok::kWord:
        if (!emit(t.text)) emit("32x32b.x64");
        break;
      case isa::Tok::kIdent:
        if (!emit(t.text)) {
          auto [it, fresh] = renamed.emplace(t.text, static_cast<int>(renamed.size()) % 16);
          emit("v" + std::to_string(it->second));
        }
        break;
      case isa::Tok::kPunct: emit(t.text); break;
    }
  }
  return out;
}

std::string pipe_dictionary() {
  std::string out =
      "# libFuzzer dictionary of fuzz_pipe: the .pipe vocabulary of fuzz/pipe_vocab.cpp.\n"
      "# Generated: build/fuzz/smpipe_fuzz_regress --pipe-dict > fuzz/pipe.dict (a test checks it is current).\n";
  std::set<std::string> seen;
  auto add = [&](const std::string& w) {
    if (!seen.insert(w).second) return;
    out += '"';
    for (unsigned char c : w) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c >= 0x7f) {
        static const char* hex = "0123456789ABCDEF";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    out += "\"\n";
  };
  for (const auto& w : primary_tokens()) add(w);
  for (const auto& w : secondary_tokens()) add(w);
  for (int a = 0; a < isa::kAttrCount; ++a) add(std::string(isa::attr_name(static_cast<isa::Attr>(a))) + "=");
  add("..");
  add("# ");
  add("kernel k grid=(1,1,1) cluster=(1,1,1) warps=4 {\n");
  add("warp 0 producer {\n");
  add("for k in 0..4 {\n");
  return out;
}

}  // namespace smpipe::fuzz
