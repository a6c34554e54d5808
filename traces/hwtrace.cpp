#include "traces/hwtrace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "isa/limits.hpp"
#include "isa/source.hpp"
#include "models/machine.hpp"

namespace smpipe::traces {

namespace {

using nlohmann::json;

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> ops = {
      "wait",       "arrive",     "arrive.expect_tx", "expect_tx",         "tma.load",  "tma.store",
      "tma.commit", "tma.wait",   "tma.wait.read",    "wgmma.fence",       "wgmma",     "wgmma.commit",
      "wgmma.wait", "bar.sync",   "fence.proxy.async", "ld.shared",        "st.shared", "compute"};
  return ops;
}

class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw isa::InputError(fmt::format("{}: {}{}{}", name_, where, where.empty() ? "" : ": ", what));
  }
  const json& need(const json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) fail(where, fmt::format("expected an object, found {}", shown(obj)));
    if (!obj.contains(key)) fail(where, fmt::format("missing key '{}'", key));
    return obj.at(key);
  }
  // An integer in min..max (checked before it is narrowed or used; `why` says where the bounds come from).
  std::int64_t integer(const json& v, const std::string& where, std::int64_t min, std::int64_t max, const char* why = "") const {
    if (!v.is_number_integer()) fail(where, fmt::format("expected an integer, found {}", shown(v)));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      fail(where, fmt::format("{} is not in {}..{}{}", shown(v), min, max, why));
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min || x > max) fail(where, fmt::format("{} is not in {}..{}{}", x, min, max, why));
    return x;
  }
  const json& array(const json& v, const std::string& where, std::size_t max) const {
    if (!v.is_array()) fail(where, fmt::format("expected an array, found {}", shown(v)));
    if (v.size() > max) fail(where, fmt::format("{} entries, more than the {} a trace may have", v.size(), max));
    return v;
  }
  // A name that becomes part of the replay program (a barrier, buffer, tensor, role, dtype): an identifier.
  std::string name(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(where, fmt::format("expected a string, found {}", shown(v)));
    std::string s = v.get<std::string>();
    if (!is_identifier(s))
      fail(where, fmt::format("'{}' is not a name the replay can use: a letter or '_', then letters, digits or '_', at most {} in all",
                              isa::printable(s.substr(0, 80)), kMaxTraceNameLength));
    return s;
  }
  // A string that is text for people (a kernel name, a command line): at most 4096 bytes, no control characters.
  std::string text(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(where, fmt::format("expected a string, found {}", shown(v)));
    std::string s = v.get<std::string>();
    if (s.size() > 4096) fail(where, fmt::format("{} bytes long, more than 4096", s.size()));
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f) fail(where, fmt::format("'{}' contains a control character", isa::printable(s.substr(0, 80))));
    return s;
  }
  // Optional text: absent or null is "".
  std::string opt_text(const json& obj, const char* key, const std::string& where) const {
    if (!obj.contains(key) || obj.at(key).is_null()) return "";
    return text(obj.at(key), where);
  }
  std::vector<std::int64_t> ints(const json& v, const std::string& where, std::size_t max_size, std::int64_t min, std::int64_t max,
                                 const char* why = "") const {
    array(v, where, max_size);
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(integer(v[i], fmt::format("{}[{}]", where, i), min, max, why));
    return out;
  }
  bool boolean(const json& obj, const char* key, const std::string& where) const {
    if (!obj.contains(key)) return false;
    if (!obj.at(key).is_boolean()) fail(where, fmt::format("expected true or false, found {}", shown(obj.at(key))));
    return obj.at(key).get<bool>();
  }

  // A value as the file has it, cut short (a found value may be a whole array).
  static std::string shown(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 60) + "..." : s;
  }

 private:
  std::string name_;
};

}  // namespace

bool is_identifier(const std::string& s) {
  if (s.empty() || s.size() > kMaxTraceNameLength) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(s[0])) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool is_end(const std::string& op) { return op.size() > 4 && op.compare(op.size() - 4, 4, ".end") == 0; }

bool is_blocking_op(const std::string& op) {
  return op == "wait" || op == "tma.wait" || op == "tma.wait.read" || op == "wgmma.wait" || op == "bar.sync";
}

bool is_marker(const std::string& op) { return op == "tile" || op == "epilogue" || op == "tail" || op == "exit"; }

std::string event_label(const HwEvent& e, bool with_index) {
  std::string s = e.op;
  if (!e.barrier.empty()) s += " " + e.barrier + (with_index && e.index ? fmt::format("[{}]", *e.index) : "");
  if (!e.tensor.empty() && (e.op == "tma.load" || e.op == "tma.store")) s += " " + e.tensor;
  return s;
}

std::string interval_kind(const HwEvent& e, const HwEvent& f) {
  return is_end(f.op) ? event_label(e, false) : event_label(e, false) + " -> " + f.op;
}

std::map<std::string, double> deferred_barrier_waits(const HwTrace& trace) {
  std::map<std::string, std::pair<double, std::int64_t>> sums;  // kind -> (waits, samples)
  struct Arrival {
    std::int64_t at;
    const HwEvent* end;
    const HwEvent* next;
  };
  for (const HwCta& c : trace.ctas) {
    std::map<std::pair<std::string, std::int64_t>, std::vector<Arrival>> uses;  // (barrier, k-th use) -> arrivals
    for (const HwWarp& w : c.warps) {
      std::map<std::string, std::int64_t> seen;
      const auto& ev = w.events;
      for (std::size_t i = 0; i + 2 < ev.size(); ++i) {
        // (the reader checks that each blocking op is followed by its `.end`)
        if (ev[i].op != "bar.sync" || ev[i + 1].op != "bar.sync.end") continue;
        uses[{ev[i].barrier, seen[ev[i].barrier]++}].push_back({ev[i].cycle, &ev[i + 1], &ev[i + 2]});
      }
    }
    for (const auto& [use, arrivals] : uses) {
      std::int64_t last = 0;
      for (const Arrival& a : arrivals) last = std::max(last, a.at);
      for (const Arrival& a : arrivals) {
        auto& s = sums[interval_kind(*a.end, *a.next)];
        s.first += static_cast<double>(last - a.at);
        s.second += 1;
      }
    }
  }
  std::map<std::string, double> out;
  for (const auto& [kind, s] : sums) out[kind] = s.first / static_cast<double>(s.second);
  return out;
}

const HwBarrier* HwTrace::barrier(const std::string& name) const {
  for (const auto& b : barriers)
    if (b.name == name) return &b;
  return nullptr;
}
const HwTensor* HwTrace::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}
const HwSmem* HwTrace::smem_buffer(const std::string& name) const {
  for (const auto& s : smem)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {

HwTrace parse_checked(const std::string& text, const std::string& name) {
  Reader r(name);
  json doc;
  // The document is read into memory whole: bound its nesting and its number of values as it is read (a 64 MB
  // file of "[[[[..." would otherwise take gigabytes).
  std::int64_t values = 0;
  json::parser_callback_t bound = [&](int depth, json::parse_event_t event, json&) {
    if (depth > kMaxTraceJsonDepth)
      r.fail("", fmt::format("JSON nested deeper than {} levels (a trace's events are at level 7)", kMaxTraceJsonDepth));
    if (event != json::parse_event_t::key && event != json::parse_event_t::object_end && event != json::parse_event_t::array_end &&
        ++values > kMaxTraceJsonValues)
      r.fail("", fmt::format("more than {} JSON values, more than a trace may have (an event is 9 values; the committed "
                             "traces have at most 0.7 million)", kMaxTraceJsonValues));
    return true;
  };
  try {
    doc = json::parse(text, bound);
  } catch (const json::parse_error& e) {
    r.fail("", fmt::format("not JSON (byte {}): {}", e.byte, e.what()));
  } catch (const json::exception& e) {
    r.fail("", fmt::format("not JSON: {}", e.what()));  // e.g. a number beyond a double's range (1e400)
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != "smpipe-hwtrace")
    r.fail("", "not an smpipe-hwtrace file (its \"format\" is not \"smpipe-hwtrace\")");
  std::int64_t version = r.integer(r.need(doc, "version", ""), "version", INT64_MIN, INT64_MAX);
  if (version != 1) r.fail("version", fmt::format("version {} is not supported (this smpipe reads version 1)", version));

  HwTrace t;
  t.path = name;
  t.kernel = r.opt_text(doc, "kernel", "kernel");
  t.variant = r.opt_text(doc, "variant", "variant");
  t.gpu = r.opt_text(doc, "gpu", "gpu");
  t.date = r.opt_text(doc, "date", "date");
  t.command = r.opt_text(doc, "command", "command");
  if (doc.contains("sm_clock_mhz") && !doc["sm_clock_mhz"].is_null()) {
    const json& c = doc["sm_clock_mhz"];
    if (!c.is_number() || !(c.get<double>() >= models::kMinClockMhz && c.get<double>() <= models::kMaxClockMhz))
      r.fail("sm_clock_mhz", fmt::format("{} is not an SM clock in {}..{} MHz (or null: not measured)", Reader::shown(c),
                                         models::kMinClockMhz, models::kMaxClockMhz));
    t.sm_clock_mhz = c.get<double>();
  }

  // Barriers, buffers and tensors become declarations of the program: one namespace, identifiers.
  std::set<std::string> declared;
  auto declare = [&](const std::string& n, const std::string& where) {
    if (!declared.insert(n).second) r.fail(where, fmt::format("'{}' is declared twice (barriers, smem and tensors share one namespace)", n));
  };
  const json& barriers = r.array(r.need(doc, "barriers", ""), "barriers", kMaxTraceDecls);
  for (std::size_t i = 0; i < barriers.size(); ++i) {
    const json& b = barriers[i];
    std::string where = fmt::format("barriers[{}]", i);
    HwBarrier hb;
    hb.name = r.name(r.need(b, "name", where), where + ".name");
    std::string kind = r.text(r.need(b, "kind", where), where + ".kind");
    if (kind != "mbarrier" && kind != "named") r.fail(where + ".kind", fmt::format("'{}' is neither mbarrier nor named", kind));
    hb.named = kind == "named";
    const json& size = r.need(b, "size", where);
    if (!size.is_null()) hb.size = static_cast<int>(r.integer(size, where + ".size", 1, 64, " (an array of barriers)"));
    if (hb.named) {
      hb.count = r.integer(r.need(b, "count", where), where + ".count", 32, 1024, " (the threads of a bar.sync)");
      if (hb.count % 32 != 0) r.fail(where + ".count", fmt::format("{} threads is not a multiple of 32 (whole warps)", hb.count));
      hb.named_id = static_cast<int>(r.integer(r.need(b, "named_id", where), where + ".named_id", 0, 15, " (a named barrier id)"));
    } else {
      hb.count = r.integer(r.need(b, "count", where), where + ".count", 1, isa::kMaxArrivalCount, " (an mbarrier's arrival count)");
    }
    declare(hb.name, where);
    t.barriers.push_back(hb);
  }
  const json& smem = r.array(r.need(doc, "smem", ""), "smem", kMaxTraceDecls);
  for (std::size_t i = 0; i < smem.size(); ++i) {
    const json& x = smem[i];
    std::string where = fmt::format("smem[{}]", i);
    HwSmem hs;
    hs.name = r.name(r.need(x, "name", where), where + ".name");
    hs.size = static_cast<int>(r.integer(r.need(x, "size", where), where + ".size", 1, 64, " (an array of buffers)"));
    hs.bytes = r.integer(r.need(x, "bytes", where), where + ".bytes", 1, kMaxTraceBytes);
    declare(hs.name, where);
    t.smem.push_back(hs);
  }
  const json& tensors = r.array(r.need(doc, "tensors", ""), "tensors", kMaxTraceDecls);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const json& x = tensors[i];
    std::string where = fmt::format("tensors[{}]", i);
    HwTensor ht;
    ht.name = r.name(r.need(x, "name", where), where + ".name");
    ht.dtype = r.name(r.need(x, "dtype", where), where + ".dtype");
    ht.shape = r.ints(r.need(x, "shape", where), where + ".shape", 5, 1, std::int64_t{1} << 32, " (cuTensorMapEncodeTiled globalDim)");
    ht.box = r.ints(r.need(x, "box", where), where + ".box", 5, 1, 256, " (cuTensorMapEncodeTiled boxDim)");
    if (ht.shape.empty() || ht.box.size() != ht.shape.size())
      r.fail(where, "shape and box must have the same, non-zero number of dimensions");
    std::int64_t elements = 1;
    for (std::int64_t d : ht.shape) {
      if (elements > (std::int64_t{1} << 48) / d) r.fail(where + ".shape", "more than 2^48 elements");
      elements *= d;
    }
    if (x.contains("swizzle") && !x["swizzle"].is_null()) {
      ht.swizzle = static_cast<int>(r.integer(x["swizzle"], where + ".swizzle", 0, 128));
      if (ht.swizzle != 0 && ht.swizzle != 32 && ht.swizzle != 64 && ht.swizzle != 128)
        r.fail(where + ".swizzle", fmt::format("{} is not a swizzle (0, 32, 64 or 128 bytes)", ht.swizzle));
    }
    if (x.contains("l2_promotion") && !x["l2_promotion"].is_null()) {
      ht.l2_promotion = static_cast<int>(r.integer(x["l2_promotion"], where + ".l2_promotion", 0, 256));
      if (ht.l2_promotion != 0 && ht.l2_promotion != 64 && ht.l2_promotion != 128 && ht.l2_promotion != 256)
        r.fail(where + ".l2_promotion", fmt::format("{} is not an L2 promotion (0, 64, 128 or 256 bytes)", ht.l2_promotion));
    }
    if (x.contains("smem") && !x["smem"].is_null()) {
      ht.smem = r.name(x["smem"], where + ".smem");
      if (!t.smem_buffer(ht.smem)) r.fail(where + ".smem", fmt::format("no smem buffer '{}'", ht.smem));
    }
    declare(ht.name, where);
    t.tensors.push_back(ht);
  }

  const json& params = r.need(doc, "params", "");
  if (!params.is_object()) r.fail("params", fmt::format("expected an object, found {}", Reader::shown(params)));
  if (params.contains("grid")) {
    // CUDA's limits: x < 2^31, y and z < 2^16; the whole grid at most kMaxTraceGrid CTAs.
    auto g = r.ints(params["grid"], "params.grid", 3, 1, kMaxTraceGrid - 1);
    if (g.empty()) r.fail("params.grid", "expected [x, y, z]");
    std::int64_t total = 1;
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (i > 0 && g[i] > 65535) r.fail(fmt::format("params.grid[{}]", i), fmt::format("{} is not in 1..65535", g[i]));
      total *= g[i];  // < 2^31 * 2^16 * 2^16: no overflow
      t.grid[i] = g[i];
    }
    if (total > kMaxTraceGrid) r.fail("params.grid", fmt::format("{} CTAs, more than {}", total, kMaxTraceGrid));
  }
  if (params.contains("cluster")) {
    auto c = r.ints(params["cluster"], "params.cluster", 3, 1, isa::kMaxClusterSize);
    std::int64_t total = 1;
    for (std::size_t i = 0; i < c.size(); ++i) {
      total *= c[i];
      t.cluster[i] = c[i];
    }
    if (total > isa::kMaxClusterSize) r.fail("params.cluster", fmt::format("a cluster of {} CTAs, more than {}", total, isa::kMaxClusterSize));
  }
  if (params.contains("warps"))
    t.warps = static_cast<int>(r.integer(params["warps"], "params.warps", 1, kMaxTraceWarps, " (warps per CTA)"));
  if (params.contains("wgmma")) {
    const json& w = params["wgmma"];
    auto shape = r.ints(r.need(w, "shape", "params.wgmma"), "params.wgmma.shape", 3, 1, 256);
    if (shape.size() != 3) r.fail("params.wgmma.shape", "expected [M, N, K]");
    t.wgmma_shape = fmt::format("m{}n{}k{}", shape[0], shape[1], shape[2]);
    if (w.contains("dtype") && !w["dtype"].is_null()) t.wgmma_dtype = r.name(w["dtype"], "params.wgmma.dtype");
    t.wgmma_per_event = r.integer(r.need(w, "per_event", "params.wgmma"), "params.wgmma.per_event", 1, 64);
    for (const char* key : {"a", "b"}) {
      if (!w.contains(key) || w[key].is_null()) continue;
      std::string where = fmt::format("params.wgmma.{}", key);
      std::string buffer = r.name(w[key], where);
      if (!t.smem_buffer(buffer)) r.fail(where, fmt::format("no smem buffer '{}'", buffer));
      (std::string(key) == "a" ? t.wgmma_a : t.wgmma_b) = buffer;
    }
  }

  // K2's problem and tiling (docs/trace-format.md, "K2 specifics"): all of M, N, K, tile, epilogue_tile and group_m, or
  // none of them is used; another kernel's params are its own.
  bool gemm = t.kernel == "k2_gemm";
  for (const char* key : {"M", "N", "K", "tile", "epilogue_tile", "group_m"}) gemm = gemm && params.contains(key) && !params[key].is_null();
  if (gemm) {
    HwGemm g;
    constexpr std::int64_t kDim = INT32_MAX;  // a TMA coordinate is 32-bit
    g.m = r.integer(params["M"], "params.M", 1, kDim);
    g.n = r.integer(params["N"], "params.N", 1, kDim);
    g.k = r.integer(params["K"], "params.K", 1, kDim);
    auto tile = r.ints(params["tile"], "params.tile", 3, 1, 256, " (a CTA tile's box rows)");
    if (tile.size() != 3) r.fail("params.tile", "expected [BM, BN, BK]");
    auto epi = r.ints(params["epilogue_tile"], "params.epilogue_tile", 2, 1, 256, " (a TMA box's rows)");
    if (epi.size() != 2) r.fail("params.epilogue_tile", "expected [EM, EN]");
    g.bm = tile[0], g.bn = tile[1], g.bk = tile[2], g.em = epi[0], g.en = epi[1];
    if (g.bm % g.em != 0 || g.bn % g.en != 0)
      r.fail("params.epilogue_tile", fmt::format("[{}, {}] does not divide the tile [{}, {}]", g.em, g.en, g.bm, g.bn));
    g.group_m = r.integer(params["group_m"], "params.group_m", INT32_MIN, INT32_MAX);
    t.gemm = g;
  }

  const json& probe = r.need(doc, "probe", "");
  t.cta_first = r.integer(r.need(probe, "cta_first", "probe"), "probe.cta_first", 0, kMaxTraceGrid - 1);
  t.slots = r.integer(r.need(probe, "slots", "probe"), "probe.slots", 0, kMaxTraceGrid);
  t.tile_limit = probe.contains("tile_limit") ? r.integer(probe["tile_limit"], "probe.tile_limit", 0, INT32_MAX) : 0;
  t.truncated = r.boolean(probe, "truncated", "probe.truncated");
  // A trace that kept only every N-th k-block's records (the probe's k-block sampling) lacks the ops in between: what it
  // says is the sampled k-blocks' intervals, not a program to replay.
  if (probe.contains("kb_sample")) {
    const std::int64_t n = r.integer(probe["kb_sample"], "probe.kb_sample", 0, INT32_MAX);
    if (n > 1)
      r.fail("probe.kb_sample", fmt::format("the probe kept the records of every {}-th k-block only: the ops in between are "
                                            "missing, so the trace cannot be replayed or compared (analyse its intervals instead)",
                                            n));
  }
  if (doc.contains("run") && doc["run"].is_object() && doc["run"].contains("kernel_ms") && !doc["run"]["kernel_ms"].is_null()) {
    const json& ms = doc["run"]["kernel_ms"];
    if (!ms.is_number() || !(ms.get<double>() >= 0 && ms.get<double>() <= 1e9))
      r.fail("run.kernel_ms", fmt::format("{} is not a time in 0..1e9 ms", Reader::shown(ms)));
    t.kernel_ms = ms.get<double>();
  }

  const json& ctas = r.array(r.need(doc, "ctas", ""), "ctas", kMaxTraceCtas);
  for (std::size_t ci = 0; ci < ctas.size(); ++ci) {
    const json& c = ctas[ci];
    std::string cw = fmt::format("ctas[{}]", ci);
    HwCta hc;
    hc.cta = r.integer(r.need(c, "cta", cw), cw + ".cta", 0, kMaxTraceGrid - 1);
    hc.sm = static_cast<int>(r.integer(r.need(c, "sm", cw), cw + ".sm", 0, 1023, " (an SM index)"));
    hc.clock_start = r.integer(r.need(c, "clock_start", cw), cw + ".clock_start", 0, kMaxTraceClock);
    hc.clock_end = r.integer(r.need(c, "clock_end", cw), cw + ".clock_end", hc.clock_start, kMaxTraceClock, " (not before clock_start)");
    hc.globaltimer_start = r.integer(r.need(c, "globaltimer_start", cw), cw + ".globaltimer_start", 0, kMaxTraceClock);
    hc.globaltimer_end = r.integer(r.need(c, "globaltimer_end", cw), cw + ".globaltimer_end", hc.globaltimer_start, kMaxTraceClock,
                                   " (not before globaltimer_start)");
    hc.dropped = r.integer(r.need(c, "dropped", cw), cw + ".dropped", 0, kMaxTraceClock);
    const json& warps = r.array(r.need(c, "warps", cw), cw + ".warps", kMaxTraceWarps);
    for (std::size_t wi = 0; wi < warps.size(); ++wi) {
      const json& w = warps[wi];
      std::string ww = fmt::format("{}.warps[{}]", cw, wi);
      HwWarp hw;
      hw.warp = static_cast<int>(r.integer(r.need(w, "warp", ww), ww + ".warp", 0, kMaxTraceWarps - 1));
      hw.role = r.name(r.need(w, "role", ww), ww + ".role");
      hw.lanes = static_cast<int>(r.integer(r.need(w, "lanes", ww), ww + ".lanes", 1, 32));
      if (hw.lanes != 1 && hw.lanes != 32) r.fail(ww + ".lanes", fmt::format("{} is neither 1 nor 32", hw.lanes));
      hw.dropped = r.integer(r.need(w, "dropped", ww), ww + ".dropped", 0, kMaxTraceClock);
      hw.window_cut = r.boolean(w, "window_cut", ww + ".window_cut");
      hw.end = r.integer(r.need(w, "end", ww), ww + ".end", 0, kMaxTraceCycle, " (cycles)");
      std::int64_t last = 0;
      std::string open;  // the blocking op whose .end must come next
      const json& events = r.array(r.need(w, "events", ww), ww + ".events", SIZE_MAX);
      hw.events.reserve(events.size());
      for (std::size_t ei = 0; ei < events.size(); ++ei) {
        const json& e = events[ei];
        std::string ew = fmt::format("{}.events[{}]", ww, ei);
        if (!e.is_array() || e.size() != 8) r.fail(ew, "an event is an array of 8 values");
        HwEvent he;
        he.cycle = r.integer(e[0], ew + "[0] (cycle)", 0, kMaxTraceCycle);
        if (!e[1].is_string()) r.fail(ew + "[1] (op)", fmt::format("expected a string, found {}", Reader::shown(e[1])));
        he.op = e[1].get<std::string>();
        if (!e[2].is_null()) he.barrier = r.name(e[2], ew + "[2] (barrier)");
        if (!e[3].is_null()) he.index = r.integer(e[3], ew + "[3] (index)", 0, INT32_MAX);
        if (!e[4].is_null()) {
          std::int64_t p = r.integer(e[4], ew + "[4] (phase)", INT64_MIN, INT64_MAX);
          if (p != 0 && p != 1) r.fail(ew + "[4] (phase)", fmt::format("{} is not a parity (0 or 1)", p));
          he.phase = static_cast<int>(p);
        }
        he.bytes = r.integer(e[5], ew + "[5] (bytes)", 0, kMaxTraceBytes);
        if (!e[6].is_null()) he.iteration = r.integer(e[6], ew + "[6] (iteration)", INT64_MIN, INT64_MAX);
        if (!e[7].is_null()) he.tensor = r.name(e[7], ew + "[7] (tensor)");
        if (he.cycle < last) r.fail(ew, fmt::format("cycle {} is before the previous event's {}", he.cycle, last));
        last = he.cycle;
        const bool end = is_end(he.op);
        const std::string base = end ? he.op.substr(0, he.op.size() - 4) : he.op;
        if (end) {
          if (!is_blocking_op(base))
            r.fail(ew, fmt::format("'{}': '{}' is not a blocking op", isa::printable(he.op.substr(0, 80)), isa::printable(base.substr(0, 80))));
          if (open != base) r.fail(ew, fmt::format("'{}' without its '{}' before it", he.op, base));
          open.clear();
        } else {
          if (!open.empty()) r.fail(ew, fmt::format("'{}' before the '{}.end' of the blocking op before it", isa::printable(he.op.substr(0, 80)), open));
          if (!is_marker(he.op) &&
              std::find(vocabulary().begin(), vocabulary().end(), he.op) == vocabulary().end())
            r.fail(ew, fmt::format("op '{}' is not in the smpipe-hwtrace v1 vocabulary", isa::printable(he.op.substr(0, 80))));
          if (is_blocking_op(he.op)) open = he.op;
        }
        if (!he.barrier.empty()) {
          const HwBarrier* b = t.barrier(he.barrier);
          if (!b) r.fail(ew, fmt::format("barrier '{}' is not in the trace's barriers", he.barrier));
          if (!b->named && b->size && (!he.index || *he.index < 0 || *he.index >= *b->size))
            r.fail(ew, fmt::format("index {} is out of range for '{}' (size {})", he.index ? *he.index : -1, b->name, *b->size));
        }
        if (!end) {
          // The barrier an op of the replay program needs, of the kind it needs.
          const HwBarrier* b = he.barrier.empty() ? nullptr : t.barrier(he.barrier);
          const bool wants_mbarrier = he.op == "wait" || he.op == "arrive" || he.op == "arrive.expect_tx" || he.op == "expect_tx" ||
                                      he.op == "tma.load";
          if (wants_mbarrier && (b == nullptr || b->named))
            r.fail(ew, fmt::format("'{}' needs an mbarrier (a barriers[] entry of kind mbarrier)", he.op));
          if (he.op == "bar.sync" && (b == nullptr || !b->named))
            r.fail(ew, "'bar.sync' needs a named barrier (a barriers[] entry of kind named)");
          if ((he.op == "tma.load" || he.op == "tma.store") && he.tensor.empty())
            r.fail(ew, fmt::format("'{}' needs a tensor", he.op));
        }
        if (!he.tensor.empty() && !t.tensor(he.tensor))
          r.fail(ew, fmt::format("tensor '{}' is not in the trace's tensors", he.tensor));
        hw.events.push_back(std::move(he));
      }
      if (!open.empty() && !hw.window_cut && hw.dropped == 0)
        r.fail(ww, fmt::format("the warp's last blocking op '{}' has no '.end'", open));
      hc.warps.push_back(std::move(hw));
    }
    if (hc.warps.empty()) r.fail(cw + ".warps", "the CTA records no warp");
    t.ctas.push_back(std::move(hc));
  }
  if (t.ctas.empty()) r.fail("ctas", "the trace records no CTA");
  if (t.warps == 0) t.warps = static_cast<int>(t.ctas.front().warps.size());
  return t;
}

}  // namespace

HwTrace parse_hwtrace(const std::string& text, const std::string& name) {
  try {
    return parse_checked(text, name);
  } catch (const nlohmann::json::exception& e) {
    // a value of the wrong JSON type somewhere the checks above do not look at it key by key
    throw isa::InputError(fmt::format("{}: not a valid smpipe-hwtrace file: {}", name, e.what()));
  }
}

HwTrace read_hwtrace(const std::string& path) {
  return parse_hwtrace(isa::read_input_file(path, "trace file"), path);
}

}  // namespace smpipe::traces
