#include "isa/pipelines.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "isa/limits.hpp"
#include "isa/source.hpp"

// Where each rule comes from (CUTLASS, include/cutlass/pipeline/, at NVIDIA/cutlass 7107b05):
//   sm90_pipeline.hpp  PipelineTmaAsync: init_barriers (full count = num_producers; empty count = num_consumers,
//                      or (cluster x + cluster y - 1) * consumer warpgroups in a cluster), producer_acquire
//                      (wait empty, then the leader's arrive_and_expect_tx on full), producer_commit (a no-op:
//                      the TMA completes the bytes), consumer_wait (wait full), consumer_release (every thread
//                      arrives in a 1-CTA cluster; in a cluster one signalling thread per warp and destination,
//                      spread_arrivals_to_warpgroup / spread_arrivals_to_warp, to the CTAs of the same row or
//                      column), producer_tail (Stages more producer_acquire waits);
//                      PipelineTransactionAsync and PipelineAsync: producer_acquire waits, producer_commit arrives
//                      on full, consumer_release arrives on empty, producer_expect_transaction (one thread);
//                      OrderedSequenceBarrier: barrier[stage][group], group 0 starts at phase 1, wait() on the
//                      group's own barrier, arrive() on the next group's.
//   sm100_pipeline.hpp PipelineTmaUmmaAsync (1-SM MMA): full count 1, empty count cluster x + cluster y - 1;
//                      consumer_release is a tcgen05.commit (umma_arrive, multicast to the same row and column).
//                      PipelineUmmaAsync (the accumulator pipeline, 1-SM MMA): counts producer_arv_count and
//                      consumer_arv_count; producer_commit is a tcgen05.commit on full (umma_arrive), the
//                      consumers release by arriving on empty (PipelineAsync's consumer_release).

namespace smpipe::isa {

namespace {

struct ClassDesc {
  PipelineClass cls;
  std::string_view name;
  std::vector<std::pair<std::string_view, bool>> attrs;  // (name, required)
  std::vector<std::string_view> statements;
};

const std::vector<ClassDesc>& classes() {
  static const std::vector<ClassDesc> t = {
      {PipelineClass::kTmaAsync, "PipelineTmaAsync",
       {{"stages", true}, {"consumers", true}, {"tx", false}, {"producers", false}, {"empty_count", false}},
       {"producer_acquire", "producer_expect_tx", "producer_commit", "producer_tail", "consumer_wait", "consumer_release"}},
      {PipelineClass::kTmaUmmaAsync, "PipelineTmaUmmaAsync",
       {{"stages", true}, {"tx", false}, {"empty_count", false}},
       {"producer_acquire", "producer_expect_tx", "producer_commit", "producer_tail", "consumer_wait", "consumer_release"}},
      {PipelineClass::kUmmaAsync, "PipelineUmmaAsync",
       {{"stages", true}, {"consumers", true}, {"producers", false}},
       {"producer_acquire", "producer_commit", "producer_tail", "consumer_wait", "consumer_release"}},
      {PipelineClass::kTransactionAsync, "PipelineTransactionAsync",
       {{"stages", true}, {"producers", true}, {"consumers", true}, {"tx", false}},
       {"producer_acquire", "producer_expect_tx", "producer_commit", "producer_tail", "consumer_wait", "consumer_release"}},
      {PipelineClass::kAsync, "PipelineAsync",
       {{"stages", true}, {"producers", true}, {"consumers", true}},
       {"producer_acquire", "producer_commit", "producer_tail", "consumer_wait", "consumer_release"}},
      {PipelineClass::kOrderedSequence, "OrderedSequenceBarrier",
       {{"depth", true}, {"length", true}, {"group_size", true}},
       {"sequence_wait", "sequence_arrive"}},
  };
  return t;
}

const ClassDesc& desc(PipelineClass c) { return classes()[static_cast<std::size_t>(c)]; }

// The classes whose stages a TMA fills (the producer's leader expects the bytes; the TMA commits).
bool tma_class(PipelineClass c) { return c == PipelineClass::kTmaAsync || c == PipelineClass::kTmaUmmaAsync; }

// "a PipelineAsync", "an OrderedSequenceBarrier".
std::string a_class(std::string_view name) { return fmt::format("{} {}", name.front() == 'O' ? "an" : "a", name); }

// ---- building statements ----
Expr finish(Expr e) {
  int d = 0;
  for (const Expr& a : e.args) d = std::max(d, a.depth);
  e.depth = d + 1;
  return e;
}
Expr lit(std::int64_t v, const SourceLoc& loc) {
  Expr e;
  e.kind = Expr::Kind::kInt;
  e.value = v;
  e.loc = loc;
  return e;
}
Expr name(const std::string& n, const SourceLoc& loc) {
  Expr e;
  e.kind = Expr::Kind::kName;
  e.name = n;
  e.loc = loc;
  return e;
}
Expr bin(const char* op, Expr a, Expr b) {
  Expr e;
  e.kind = Expr::Kind::kBinary;
  e.name = op;
  e.loc = a.loc;
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return finish(std::move(e));
}
Expr element(const std::string& array, Expr index) {
  Expr e;
  e.kind = Expr::Kind::kIndex;
  e.name = array;
  e.loc = index.loc;
  e.args.push_back(std::move(index));
  return finish(std::move(e));
}
Operand attr(const char* key, Expr v) {
  Operand o;
  o.key = key;
  o.loc = v.loc;
  o.values.push_back(std::move(v));
  return o;
}
// An op standing for (part of) pipeline statement `at`, shown as "WRITTEN: OP BARRIER".
Stmt op(const Stmt& at, const std::string& written, const char* op_name, std::vector<Operand> operands) {
  Stmt s;
  s.kind = Stmt::Kind::kOp;
  s.loc = at.loc;
  s.origin = at.origin;
  s.name = op_name;
  s.text = fmt::format("{}: {} {}", written, op_name, operands.at(0).values.at(0).name);
  s.operands = std::move(operands);
  return s;
}
Stmt elect(const Stmt& at, Stmt body) {
  Stmt s;
  s.kind = Stmt::Kind::kElect;
  s.loc = at.loc;
  s.body.push_back(std::move(body));
  return s;
}
Stmt when(const Stmt& at, Expr cond, Stmt body) {
  Stmt s;
  s.kind = Stmt::Kind::kIf;
  s.loc = at.loc;
  s.exprs.push_back(std::move(cond));
  s.body.push_back(std::move(body));
  return s;
}

// The operands of a pipeline statement: NAME STATE [key=value ...].
struct Args {
  Expr state;
  std::optional<Expr> tx, group;
};

Args read_args(const Stmt& s, const PipelineInfo& p) {
  std::vector<const Operand*> bare;
  Args a;
  for (const Operand& o : s.operands) {
    if (!o.key) {
      bare.push_back(&o);
      continue;
    }
    bool tx_ok = (s.name == "producer_acquire" && tma_class(p.cls)) || s.name == "producer_expect_tx";
    bool group_ok = s.name == "sequence_wait" || s.name == "sequence_arrive";
    if ((*o.key == "tx" && tx_ok) || (*o.key == "group" && group_ok)) {
      if (o.tuple || o.values.size() != 1) throw InputError(o.loc, fmt::format("'{}=' takes one value", *o.key));
      (*o.key == "tx" ? a.tx : a.group) = o.values[0];
      continue;
    }
    throw InputError(o.loc, fmt::format("unknown attribute '{}' for '{}' (attributes: {})", *o.key, s.name,
                                        tx_ok ? "tx" : group_ok ? "group" : "none"));
  }
  if (!s.results.empty())
    throw InputError(s.results.front().second, fmt::format("'{}' gives no result (a pipeline statement is not an op with '->')", s.name));
  if (bare.size() != 2 || bare[1]->tuple || bare[1]->values.size() != 1)
    throw InputError(s.loc, fmt::format("'{}' takes a pipeline and a state: '{} {} STATE' (the state counts the stages "
                                        "this role has moved through)", s.name, s.name, p.name));
  a.state = bare[1]->values[0];
  return a;
}

}  // namespace

std::vector<PipelineInfo::Barrier> PipelineInfo::barriers() const {
  if (cls == PipelineClass::kOrderedSequence) return {{name + ".bar", stages * length, full_count}};
  return {{name + ".full", stages, full_count}, {name + ".empty", stages, empty_count}};
}

std::string_view pipeline_class_name(PipelineClass c) { return desc(c).name; }

const std::vector<std::string_view>& pipeline_class_names() {
  static const std::vector<std::string_view> v = [] {
    std::vector<std::string_view> r;
    for (const auto& c : classes()) r.push_back(c.name);
    return r;
  }();
  return v;
}

std::vector<std::pair<std::string_view, bool>> pipeline_attributes(PipelineClass c) { return desc(c).attrs; }

std::vector<std::string_view> pipeline_statements_of(PipelineClass c) { return desc(c).statements; }

const std::vector<std::string_view>& pipeline_statements() {
  static const std::vector<std::string_view> v = {"producer_acquire", "producer_expect_tx", "producer_commit", "producer_tail",
                                                  "consumer_wait",    "consumer_release",   "sequence_wait",   "sequence_arrive"};
  return v;
}

bool is_pipeline_statement(std::string_view name) {
  const auto& v = pipeline_statements();
  return std::find(v.begin(), v.end(), name) != v.end();
}

std::string pipeline_named(const Stmt& s) {
  if (s.operands.empty() || s.operands[0].key || s.operands[0].tuple || s.operands[0].values[0].kind != Expr::Kind::kName)
    throw InputError(s.loc, fmt::format("'{}' names a pipeline first: '{} NAME STATE'", s.name, s.name));
  return s.operands[0].values[0].name;
}

PipelineInfo declare_pipeline(const Decl& d, const std::array<std::int64_t, 3>& cluster,
                              const std::function<std::int64_t(const Expr&)>& eval) {
  PipelineInfo p;
  p.name = d.name;
  p.loc = d.loc;
  p.cluster = cluster;
  const ClassDesc* c = nullptr;
  for (const auto& k : classes())
    if (k.name == d.dtype) c = &k;
  if (c == nullptr)
    throw InputError(d.loc, fmt::format("unknown pipeline class '{}' (classes: {})", d.dtype, fmt::join(pipeline_class_names(), ", ")));
  p.cls = c->cls;
  std::vector<std::pair<std::string, std::int64_t>> given;
  for (const Operand& o : d.attrs) {
    auto known = std::find_if(c->attrs.begin(), c->attrs.end(), [&](const auto& a) { return a.first == *o.key; });
    if (known == c->attrs.end()) {
      std::vector<std::string_view> names;
      for (const auto& a : c->attrs) names.push_back(a.first);
      throw InputError(o.loc, fmt::format("unknown attribute '{}' for {} (attributes: {})", *o.key, a_class(c->name), fmt::join(names, ", ")));
    }
    for (const auto& [n, _] : given)
      if (n == *o.key) throw InputError(o.loc, fmt::format("'{}=' given twice", n));
    given.emplace_back(*o.key, eval(o.values[0]));
  }
  auto value = [&](std::string_view key) -> std::optional<std::int64_t> {
    for (const auto& [n, v] : given)
      if (n == key) return v;
    return std::nullopt;
  };
  for (const auto& [n, required] : c->attrs)
    if (required && !value(n)) throw InputError(d.loc, fmt::format("{} needs '{}='", a_class(c->name), n));
  auto loc_of = [&](std::string_view key) {
    for (const Operand& o : d.attrs)
      if (*o.key == key) return o.loc;
    return d.loc;
  };
  auto ranged = [&](std::string_view key, std::int64_t lo, std::int64_t hi, std::string_view why) {
    std::int64_t v = *value(key);
    if (v < lo || v > hi) throw InputError(loc_of(key), fmt::format("{}={} out of range {}..{} ({})", key, v, lo, hi, why));
    return v;
  };
  const std::int64_t cluster_size = cluster[0] * cluster[1] * cluster[2];
  if (cluster[2] != 1 && tma_class(p.cls))
    throw InputError(d.loc, fmt::format("{} in a cluster of depth {}: CUTLASS's counts and multicast rows and columns are of a "
                                        "2-D cluster (cluster=(x, y, 1))", a_class(c->name), cluster[2]));
  if (p.cls == PipelineClass::kOrderedSequence) {
    p.stages = ranged("depth", 1, 4096, "stages of the sequence");
    p.length = ranged("length", 1, 4096 / p.stages, "groups taking turns; depth * length barriers");
    p.full_count = ranged("group_size", 1, kMaxArrivalCount, "threads of a group: the barriers' count");
    p.empty_count = p.full_count;
    return p;
  }
  // 0 stages: a pipeline the configuration leaves out (a void C's load pipeline); its statements must not run.
  p.stages = ranged("stages", 0, 4096, "the pipeline's stages: an mbarrier array of this length");
  if (value("tx")) p.tx = ranged("tx", 0, kMaxTxCount, "bytes a stage expects: PTX's tx-count range");
  switch (p.cls) {
    case PipelineClass::kTmaAsync: {
      p.consumers = ranged("consumers", 1, kMaxArrivalCount, "consumer threads");
      p.full_count = value("producers") ? ranged("producers", 1, kMaxArrivalCount, "producer arrivals per stage") : 1;
      if (cluster_size == 1) {
        p.empty_count = p.consumers;
      } else {
        // A cluster spreads the releases: one signalling thread per warp and destination CTA (warpgroups), or
        // per lane pair (one consumer warp). CUTLASS stops (brkpt) on any other consumer count.
        if (p.consumers % 128 != 0 && p.consumers != 32)
          throw InputError(loc_of("consumers"), fmt::format("consumers={}: in a cluster a PipelineTmaAsync's consumers are whole "
                                                            "warpgroups (a multiple of 128) or one warp (32)", p.consumers));
        p.empty_count = (cluster[0] + cluster[1] - 1) * ((p.consumers + 127) / 128);
      }
      break;
    }
    case PipelineClass::kTmaUmmaAsync:
      p.full_count = 1;
      p.empty_count = cluster[0] + cluster[1] - 1;
      break;
    case PipelineClass::kUmmaAsync:
      p.full_count = value("producers") ? ranged("producers", 1, kMaxArrivalCount, "tcgen05.commit arrivals per stage") : 1;
      p.empty_count = ranged("consumers", 1, kMaxArrivalCount, "consumer arrivals per stage: the empty barriers' count");
      break;
    case PipelineClass::kTransactionAsync:
    case PipelineClass::kAsync:
      p.full_count = ranged("producers", 1, kMaxArrivalCount, "producer arrivals per stage: the full barriers' count");
      p.empty_count = ranged("consumers", 1, kMaxArrivalCount, "consumer arrivals per stage: the empty barriers' count");
      break;
    case PipelineClass::kOrderedSequence:
      break;
  }
  if (value("empty_count") && *value("empty_count") != 0)
    p.empty_count = ranged("empty_count", 0, kMaxArrivalCount, "0: the class's own count; otherwise this count (to reproduce a bug)");
  return p;
}

Block lower_pipeline_statement(const Stmt& s, const PipelineInfo& p, const std::string& written) {
  const ClassDesc& c = desc(p.cls);
  if (std::find(c.statements.begin(), c.statements.end(), s.name) == c.statements.end())
    throw InputError(s.loc, fmt::format("{} has no '{}' (it has {})", a_class(c.name), s.name, fmt::join(c.statements, ", ")));
  Args a = read_args(s, p);
  const SourceLoc& at = s.loc;
  const std::string full = p.name + ".full", empty = p.name + ".empty";
  // A pipeline of 0 stages has arrays of no elements: its index is 0, out of their range when it runs.
  const std::int64_t ring = std::max<std::int64_t>(p.stages, 1);
  auto index = [&](Expr g) { return bin("%", std::move(g), lit(ring, at)); };
  auto phase = [&](Expr g) { return bin("&", bin("/", std::move(g), lit(ring, at)), lit(1, at)); };
  Block out;

  if (p.cls == PipelineClass::kOrderedSequence) {
    if (!a.group) throw InputError(s.loc, fmt::format("'{}' needs 'group=' (this group's id, 0..{})", s.name, p.length - 1));
    if (a.group->kind == Expr::Kind::kInt && (a.group->value < 0 || a.group->value >= p.length))
      throw InputError(a.group->loc, fmt::format("group={} out of range 0..{} (the sequence's groups)", a.group->value, p.length - 1));
    // A computed group outside 0..length-1 names element depth * length, one past the array, so the run
    // reports it instead of using another stage's barrier.
    Expr inside = bin("&&", bin(">=", *a.group, lit(0, at)), bin("<", *a.group, lit(p.length, at)));
    Expr outside = bin("||", bin("<", *a.group, lit(0, at)), bin(">=", *a.group, lit(p.length, at)));
    auto slot = [&](Expr group) {  // element (STATE % depth) * length + group
      Expr here = bin("+", bin("*", index(a.state), lit(p.length, at)), std::move(group));
      return element(p.name + ".bar", bin("+", bin("*", inside, std::move(here)), bin("*", outside, lit(p.stages * p.length, at))));
    };
    if (s.name == "sequence_wait") {
      // Group 0 starts at phase 1: its first wait passes at once.
      Expr parity = bin("^", phase(a.state), bin("==", *a.group, lit(0, at)));
      out.push_back(op(s, written, "wait", {attr("bar", slot(*a.group)), attr("parity", std::move(parity))}));
    } else {
      out.push_back(op(s, written, "arrive", {attr("bar", slot(bin("%", bin("+", *a.group, lit(1, at)), lit(p.length, at))))}));
    }
    return out;
  }

  const bool tma = tma_class(p.cls);
  auto tx_value = [&]() {
    if (a.tx) return *a.tx;
    if (p.tx) return lit(*p.tx, at);
    throw InputError(s.loc, fmt::format("'{}' needs the bytes of a stage: give 'tx=' here or in the pipeline's declaration", s.name));
  };
  auto acquire_wait = [&](Expr g) {
    Expr parity = bin("^", phase(g), lit(1, at));  // the producer starts at phase 1: the first pass is free
    return op(s, written, "wait", {attr("bar", element(empty, index(g))), attr("parity", std::move(parity))});
  };

  if (s.name == "producer_acquire") {
    out.push_back(acquire_wait(a.state));
    if (tma) out.push_back(elect(s, op(s, written, "arrive.expect_tx", {attr("bar", element(full, index(a.state))), attr("tx", tx_value())})));
  } else if (s.name == "producer_expect_tx") {
    out.push_back(elect(s, op(s, written, "expect_tx", {attr("bar", element(full, index(a.state))), attr("tx", tx_value())})));
  } else if (s.name == "producer_commit") {
    if (p.cls == PipelineClass::kUmmaAsync)  // the MMAs issued so far arrive on full when they complete
      out.push_back(elect(s, op(s, written, "umma.commit", {attr("bar", element(full, index(a.state)))})));
    else if (!tma)  // the TMA classes: the TMA commits
      out.push_back(op(s, written, "arrive", {attr("bar", element(full, index(a.state)))}));
  } else if (s.name == "producer_tail") {
    Stmt loop;
    loop.kind = Stmt::Kind::kFor;
    loop.loc = at;
    loop.name = p.name + "#tail";  // '#' starts a comment: no program can name this variable
    loop.exprs = {lit(0, at), lit(p.stages, at)};
    loop.body.push_back(acquire_wait(bin("+", a.state, name(loop.name, at))));
    out.push_back(std::move(loop));
  } else if (s.name == "consumer_wait") {
    out.push_back(op(s, written, "wait", {attr("bar", element(full, index(a.state))), attr("parity", phase(a.state))}));
  } else if (s.name == "consumer_release") {
    const std::int64_t cx = p.cluster[0], cy = p.cluster[1], size = p.cluster[0] * p.cluster[1] * p.cluster[2];
    // Is cluster rank `dst` (an expression) in this CTA's cluster row or column?
    auto same_row_or_col = [&](const Expr& dst) {
      Expr my_x = bin("%", name("cluster_rank", at), lit(cx, at));
      Expr my_y = bin("%", bin("/", name("cluster_rank", at), lit(cx, at)), lit(cy, at));
      return bin("||", bin("==", bin("%", dst, lit(cx, at)), std::move(my_x)), bin("==", bin("/", dst, lit(cx, at)), std::move(my_y)));
    };
    if (p.cls == PipelineClass::kTmaUmmaAsync) {
      std::vector<Operand> ops = {attr("bar", element(empty, index(a.state)))};
      if (size > 1) {
        Expr mask = lit(0, at);
        for (std::int64_t d = 0; d < size; ++d) mask = bin("|", std::move(mask), bin("<<", same_row_or_col(lit(d, at)), lit(d, at)));
        ops.push_back(attr("multicast", std::move(mask)));
      }
      out.push_back(elect(s, op(s, written, "umma.commit", std::move(ops))));
    } else if (p.cls != PipelineClass::kTmaAsync || size == 1) {
      out.push_back(op(s, written, "arrive", {attr("bar", element(empty, index(a.state)))}));
    } else if (p.consumers == 32) {
      // spread_arrivals_to_warp: lane 2j signals cluster rank j (j < 16).
      for (std::int64_t d = 0; d < size; ++d)
        out.push_back(when(s, same_row_or_col(lit(d, at)),
                           elect(s, op(s, written, "arrive", {attr("bar", element(empty, index(a.state))), attr("cta", lit(d, at))}))));
    } else {
      // spread_arrivals_to_warpgroup: in warp w of a warpgroup, lane 8c signals cluster rank ((w ^ c) << 2) | c.
      for (std::int64_t col = 0; col < 4; ++col) {
        Expr dst = bin("|", bin("<<", bin("^", bin("%", name("warp", at), lit(4, at)), lit(col, at)), lit(2, at)), lit(col, at));
        Expr cond = bin("&&", bin("<", dst, lit(size, at)), same_row_or_col(dst));
        out.push_back(when(s, std::move(cond), elect(s, op(s, written, "arrive", {attr("bar", element(empty, index(a.state))), attr("cta", dst)}))));
      }
    }
  }
  return out;
}

}  // namespace smpipe::isa
