#include "traces/hwtrace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "isa/source.hpp"

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
    if (!obj.is_object() || !obj.contains(key)) fail(where, fmt::format("missing key '{}'", key));
    return obj.at(key);
  }
  std::int64_t integer(const json& v, const std::string& where) const {
    if (!v.is_number_integer()) fail(where, fmt::format("expected an integer, found {}", v.dump()));
    return v.get<std::int64_t>();
  }
  std::string string(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(where, fmt::format("expected a string, found {}", v.dump()));
    return v.get<std::string>();
  }
  std::string opt_string(const json& obj, const char* key) const {
    return obj.contains(key) && obj.at(key).is_string() ? obj.at(key).get<std::string>() : "";
  }
  std::vector<std::int64_t> ints(const json& v, const std::string& where) const {
    if (!v.is_array()) fail(where, "expected an array of integers");
    std::vector<std::int64_t> out;
    for (const auto& x : v) out.push_back(integer(x, where));
    return out;
  }

 private:
  std::string name_;
};

}  // namespace

bool is_end(const std::string& op) { return op.size() > 4 && op.compare(op.size() - 4, 4, ".end") == 0; }

bool is_blocking_op(const std::string& op) {
  return op == "wait" || op == "tma.wait" || op == "tma.wait.read" || op == "wgmma.wait" || op == "bar.sync";
}

bool is_marker(const std::string& op) { return op == "tile" || op == "epilogue" || op == "tail" || op == "exit"; }

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
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    r.fail("", fmt::format("not JSON (byte {}): {}", e.byte, e.what()));
  }
  if (!doc.is_object() || doc.value("format", std::string()) != "smpipe-hwtrace")
    r.fail("", "not an smpipe-hwtrace file (its \"format\" is not \"smpipe-hwtrace\")");
  std::int64_t version = r.integer(r.need(doc, "version", ""), "version");
  if (version != 1) r.fail("version", fmt::format("version {} is not supported (this smpipe reads version 1)", version));

  HwTrace t;
  t.path = name;
  t.kernel = r.opt_string(doc, "kernel");
  t.variant = r.opt_string(doc, "variant");
  t.gpu = r.opt_string(doc, "gpu");
  t.date = r.opt_string(doc, "date");
  t.command = r.opt_string(doc, "command");
  if (doc.contains("sm_clock_mhz") && doc["sm_clock_mhz"].is_number()) t.sm_clock_mhz = doc["sm_clock_mhz"].get<double>();

  for (std::size_t i = 0; const auto& b : r.need(doc, "barriers", "")) {
    std::string where = fmt::format("barriers[{}]", i++);
    HwBarrier hb;
    hb.name = r.string(r.need(b, "name", where), where + ".name");
    std::string kind = r.string(r.need(b, "kind", where), where + ".kind");
    if (kind != "mbarrier" && kind != "named") r.fail(where + ".kind", fmt::format("'{}' is neither mbarrier nor named", kind));
    hb.named = kind == "named";
    const json& size = r.need(b, "size", where);
    if (!size.is_null()) {
      std::int64_t s = r.integer(size, where + ".size");
      if (s < 1 || s > 64) r.fail(where + ".size", fmt::format("array length {} is not in 1..64", s));
      hb.size = static_cast<int>(s);
    }
    hb.count = r.integer(r.need(b, "count", where), where + ".count");
    if (hb.count < 1) r.fail(where + ".count", "must be positive");
    if (hb.named) {
      std::int64_t id = r.integer(r.need(b, "named_id", where), where + ".named_id");
      if (id < 0 || id > 15) r.fail(where + ".named_id", fmt::format("{} is not a named barrier id (0..15)", id));
      hb.named_id = static_cast<int>(id);
    }
    if (t.barrier(hb.name)) r.fail(where, fmt::format("barrier '{}' is declared twice", hb.name));
    t.barriers.push_back(hb);
  }
  for (std::size_t i = 0; const auto& s : r.need(doc, "smem", "")) {
    std::string where = fmt::format("smem[{}]", i++);
    HwSmem hs;
    hs.name = r.string(r.need(s, "name", where), where + ".name");
    hs.size = static_cast<int>(r.integer(r.need(s, "size", where), where + ".size"));
    hs.bytes = r.integer(r.need(s, "bytes", where), where + ".bytes");
    if (hs.size < 1 || hs.size > 64 || hs.bytes < 1) r.fail(where, "size must be in 1..64 and bytes positive");
    t.smem.push_back(hs);
  }
  for (std::size_t i = 0; const auto& x : r.need(doc, "tensors", "")) {
    std::string where = fmt::format("tensors[{}]", i++);
    HwTensor ht;
    ht.name = r.string(r.need(x, "name", where), where + ".name");
    ht.dtype = r.string(r.need(x, "dtype", where), where + ".dtype");
    ht.shape = r.ints(r.need(x, "shape", where), where + ".shape");
    ht.box = r.ints(r.need(x, "box", where), where + ".box");
    ht.swizzle = x.contains("swizzle") && x["swizzle"].is_number_integer() ? x["swizzle"].get<int>() : 0;
    ht.smem = r.opt_string(x, "smem");
    if (ht.shape.empty() || ht.box.size() != ht.shape.size())
      r.fail(where, "shape and box must have the same, non-zero number of dimensions");
    if (!ht.smem.empty() && !t.smem_buffer(ht.smem)) r.fail(where + ".smem", fmt::format("no smem buffer '{}'", ht.smem));
    t.tensors.push_back(ht);
  }

  const json& params = r.need(doc, "params", "");
  if (params.contains("grid")) {
    auto g = r.ints(params["grid"], "params.grid");
    for (std::size_t i = 0; i < 3 && i < g.size(); ++i) t.grid[i] = g[i];
  }
  if (params.contains("cluster")) {
    auto c = r.ints(params["cluster"], "params.cluster");
    for (std::size_t i = 0; i < 3 && i < c.size(); ++i) t.cluster[i] = c[i];
  }
  if (params.contains("warps")) t.warps = static_cast<int>(r.integer(params["warps"], "params.warps"));
  if (params.contains("wgmma")) {
    const json& w = params["wgmma"];
    auto shape = r.ints(r.need(w, "shape", "params.wgmma"), "params.wgmma.shape");
    if (shape.size() != 3) r.fail("params.wgmma.shape", "expected [M, N, K]");
    t.wgmma_shape = fmt::format("m{}n{}k{}", shape[0], shape[1], shape[2]);
    t.wgmma_dtype = r.opt_string(w, "dtype").empty() ? "bf16" : r.opt_string(w, "dtype");
    t.wgmma_per_event = r.integer(r.need(w, "per_event", "params.wgmma"), "params.wgmma.per_event");
    t.wgmma_a = r.opt_string(w, "a");
    t.wgmma_b = r.opt_string(w, "b");
  }

  const json& probe = r.need(doc, "probe", "");
  t.cta_first = r.integer(r.need(probe, "cta_first", "probe"), "probe.cta_first");
  t.slots = r.integer(r.need(probe, "slots", "probe"), "probe.slots");
  t.tile_limit = probe.contains("tile_limit") ? r.integer(probe["tile_limit"], "probe.tile_limit") : 0;
  t.truncated = probe.value("truncated", false);
  if (doc.contains("run") && doc["run"].contains("kernel_ms") && doc["run"]["kernel_ms"].is_number())
    t.kernel_ms = doc["run"]["kernel_ms"].get<double>();

  for (std::size_t ci = 0; const auto& c : r.need(doc, "ctas", "")) {
    std::string cw = fmt::format("ctas[{}]", ci++);
    HwCta hc;
    hc.cta = r.integer(r.need(c, "cta", cw), cw + ".cta");
    hc.sm = static_cast<int>(r.integer(r.need(c, "sm", cw), cw + ".sm"));
    hc.clock_start = r.integer(r.need(c, "clock_start", cw), cw + ".clock_start");
    hc.clock_end = r.integer(r.need(c, "clock_end", cw), cw + ".clock_end");
    hc.globaltimer_start = r.integer(r.need(c, "globaltimer_start", cw), cw + ".globaltimer_start");
    hc.globaltimer_end = r.integer(r.need(c, "globaltimer_end", cw), cw + ".globaltimer_end");
    hc.dropped = r.integer(r.need(c, "dropped", cw), cw + ".dropped");
    for (std::size_t wi = 0; const auto& w : r.need(c, "warps", cw)) {
      std::string ww = fmt::format("{}.warps[{}]", cw, wi++);
      HwWarp hw;
      hw.warp = static_cast<int>(r.integer(r.need(w, "warp", ww), ww + ".warp"));
      hw.role = r.string(r.need(w, "role", ww), ww + ".role");
      hw.lanes = static_cast<int>(r.integer(r.need(w, "lanes", ww), ww + ".lanes"));
      if (hw.lanes != 1 && hw.lanes != 32) r.fail(ww + ".lanes", fmt::format("{} is neither 1 nor 32", hw.lanes));
      hw.dropped = r.integer(r.need(w, "dropped", ww), ww + ".dropped");
      hw.window_cut = w.value("window_cut", false);
      hw.end = r.integer(r.need(w, "end", ww), ww + ".end");
      std::int64_t last = 0;
      std::string open;  // the blocking op whose .end must come next
      for (std::size_t ei = 0; const auto& e : r.need(w, "events", ww)) {
        std::string ew = fmt::format("{}.events[{}]", ww, ei++);
        if (!e.is_array() || e.size() != 8) r.fail(ew, "an event is an array of 8 values");
        HwEvent he;
        he.cycle = r.integer(e[0], ew + "[0] (cycle)");
        he.op = r.string(e[1], ew + "[1] (op)");
        if (!e[2].is_null()) he.barrier = r.string(e[2], ew + "[2] (barrier)");
        if (!e[3].is_null()) he.index = r.integer(e[3], ew + "[3] (index)");
        if (!e[4].is_null()) {
          std::int64_t p = r.integer(e[4], ew + "[4] (phase)");
          if (p != 0 && p != 1) r.fail(ew + "[4] (phase)", fmt::format("{} is not a parity (0 or 1)", p));
          he.phase = static_cast<int>(p);
        }
        he.bytes = r.integer(e[5], ew + "[5] (bytes)");
        if (!e[6].is_null()) he.iteration = r.integer(e[6], ew + "[6] (iteration)");
        if (!e[7].is_null()) he.tensor = r.string(e[7], ew + "[7] (tensor)");
        if (he.cycle < last) r.fail(ew, fmt::format("cycle {} is before the previous event's {}", he.cycle, last));
        last = he.cycle;
        const bool end = is_end(he.op);
        const std::string base = end ? he.op.substr(0, he.op.size() - 4) : he.op;
        if (end) {
          if (!is_blocking_op(base)) r.fail(ew, fmt::format("'{}': '{}' is not a blocking op", he.op, base));
          if (open != base) r.fail(ew, fmt::format("'{}' without its '{}' before it", he.op, base));
          open.clear();
        } else {
          if (!open.empty()) r.fail(ew, fmt::format("'{}' before the '{}.end' of the blocking op before it", he.op, open));
          if (!is_marker(he.op) &&
              std::find(vocabulary().begin(), vocabulary().end(), he.op) == vocabulary().end())
            r.fail(ew, fmt::format("op '{}' is not in the smpipe-hwtrace v1 vocabulary", he.op));
          if (is_blocking_op(he.op)) open = he.op;
        }
        if (!he.barrier.empty()) {
          const HwBarrier* b = t.barrier(he.barrier);
          if (!b) r.fail(ew, fmt::format("barrier '{}' is not in the trace's barriers", he.barrier));
          if (!b->named && b->size && (!he.index || *he.index < 0 || *he.index >= *b->size))
            r.fail(ew, fmt::format("index {} is out of range for '{}' (size {})", he.index ? *he.index : -1, b->name, *b->size));
        }
        if (!he.tensor.empty() && !t.tensor(he.tensor))
          r.fail(ew, fmt::format("tensor '{}' is not in the trace's tensors", he.tensor));
        hw.events.push_back(std::move(he));
      }
      if (!open.empty() && !hw.window_cut && hw.dropped == 0)
        r.fail(ww, fmt::format("the warp's last blocking op '{}' has no '.end'", open));
      hc.warps.push_back(std::move(hw));
    }
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
