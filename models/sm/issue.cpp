#include "models/sm/issue.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

namespace {
constexpr int kSubPartitions = 4;
__extension__ typedef __int128 Wide;  // (GCC and Clang) products of cycles, units and shares
}

IssueUnit::IssueUnit(Simulator& sim)
    : Unit(sim),
      cause_sleep_(sim.cause_id("sleep")),
      cause_share_(sim.cause_id("a shared SM sub-partition")),
      cause_mma_(sim.cause_id("ALU work beside wgmmas")) {}

std::span<const isa::OpKind> IssueUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kCompute, OpKind::kSleep};
  return kOps;
}

OpResult IssueUnit::execute(OpContext& ctx) {
  std::int64_t cycles = ctx.value(Attr::kCycles);
  bool sleep = ctx.desc.kind == OpKind::kSleep;
  if (cycles < 0) ctx.ub("negative cycles", fmt::format("{} cycles={}", sleep ? "sleep" : "compute", cycles));
  if (cycles == 0) return OpResult{};
  if (!sleep) {
    ctx.warp.reg_work = ctx.op;  // register work (the tensor unit's wgmma.fence check; a sleep touches no register)
    std::int64_t share = ctx.value(Attr::kShare);
    std::int64_t speed = ctx.value(Attr::kMmaSpeed);
    return share > 0 || speed < 100 ? shared_compute(ctx, cycles, share, speed) : ctx.busy(cycles);
  }
  ctx.block(nullptr, 0, 0, cause_sleep_);
  sim_.wake_at(ctx.warp_id, sim_.now() + Cycle(cycles));
  return ctx.blocked();
}

// A compute op whose values are constants, with positive cycles, no share and its full speed beside wgmmas: execute
// would return busy(cycles) and touch nothing else.
std::int64_t IssueUnit::fixed_busy(const isa::OpDesc& d) const {
  if (d.kind != OpKind::kCompute || !d.dynamic_slots.empty()) return 0;
  auto constant = [&](Attr a) {
    const isa::AttrSlot* s = d.slot(a);
    return s != nullptr ? d.base_values[s->first] : -1;
  };
  const std::int64_t cycles = constant(Attr::kCycles), share = constant(Attr::kShare), speed = constant(Attr::kMmaSpeed);
  return cycles > 0 && share == 0 && speed >= 100 ? cycles : 0;
}

std::int64_t IssueUnit::busy_in(std::uint32_t sm, Cycle a, Cycle b) const {
  std::int64_t n = 0;
  if (sm >= pipes_.size()) return 0;
  for (const auto& [s, e] : pipes_[sm]) {
    if (s >= b) break;
    if (e > a) n += (sim::min(e, b) - sim::max(s, a)).v;
  }
  return n;
}

// In percent-cycles (a cycle at full speed is 100), the work is (b - a) x 100 less (100 - speed) per busy cycle;
// units = percent-cycles x kUnit / shared_total. For a job at 100 % with a share this is dt x kUnit x 100 / max(100,
// total), as before mma_speed.
std::int64_t IssueUnit::progress(const SubPartition& s, const Job& j, std::uint32_t sm, Cycle a, Cycle b) const {
  std::int64_t pc = (b - a).v * 100;
  if (j.speed < 100) pc -= busy_in(sm, a, b) * (100 - j.speed);
  return static_cast<std::int64_t>(static_cast<Wide>(pc) * kUnit / shared_total(s, j));
}

std::int64_t IssueUnit::cycles_for(const SubPartition& s, const Job& j, std::uint32_t sm) const {
  if (j.left <= 0) return 0;
  const Wide num = static_cast<Wide>(j.left) * shared_total(s, j);
  std::int64_t need = static_cast<std::int64_t>((num + kUnit - 1) / kUnit);  // percent-cycles still to do
  if (j.speed >= 100 || sm >= pipes_.size()) return (need + 99) / 100;
  const Cycle now = sim_.now();
  Cycle c = now;
  for (const auto& [b0, b1] : pipes_[sm]) {
    if (b1 <= c) continue;
    if (b0 > c) {  // idle until the pipe starts: full speed
      std::int64_t idle = (b0 - c).v;
      if (idle * 100 >= need) return (c - now).v + (need + 99) / 100;
      need -= idle * 100;
      c = b0;
    }
    std::int64_t run = (b1 - c).v;
    if (run * j.speed >= need) return (c - now).v + (need + j.speed - 1) / j.speed;
    need -= run * j.speed;
    c = b1;
  }
  return (c - now).v + (need + 99) / 100;
}

void IssueUnit::advance(std::uint32_t index) {
  SubPartition& s = parts_[index];
  const std::uint32_t sm = index / kSubPartitions;
  for (Job& j : s.jobs) j.left -= progress(s, j, sm, s.since, sim_.now());
  s.since = sim_.now();
}

void IssueUnit::reschedule(std::uint32_t index) {
  SubPartition& s = parts_[index];
  s.gen += 1;
  if (s.jobs.empty()) return;
  const std::uint32_t sm = index / kSubPartitions;
  std::int64_t first = cycles_for(s, s.jobs.front(), sm);
  for (const Job& j : s.jobs) first = std::min(first, cycles_for(s, j, sm));
  sim_.schedule(*this, sim_.now() + Cycle(first), sim::Priority::kCompletion, index, s.gen);
}

bool IssueUnit::alu_beside(std::uint32_t sm) const {
  const std::size_t first = static_cast<std::size_t>(sm) * kSubPartitions;
  for (std::size_t i = first; i < first + kSubPartitions && i < parts_.size(); ++i)
    if (parts_[i].slow > 0) return true;
  return false;
}

void IssueUnit::tensor_busy(std::uint32_t sm, Cycle start, Cycle end) {
  if (end <= start) return;
  if (sm >= pipes_.size()) pipes_.resize(static_cast<std::size_t>(sm) + 1);
  Spans& p = pipes_[sm];
  const std::uint32_t first = sm * kSubPartitions;
  const auto last = static_cast<std::uint32_t>(std::min<std::size_t>(first + kSubPartitions, parts_.size()));
  const bool slow = alu_beside(sm);
  if (slow)
    for (std::uint32_t i = first; i < last; ++i)
      if (parts_[i].slow > 0) advance(i);
  // Every sub-partition of the SM with a job that reads the spans is up to date now (the others' jobs are left as
  // they are timed): what ended before now is no one's history any more.
  std::erase_if(p, [&](const auto& b) { return b.second <= sim_.now(); });
  if (!p.empty() && p.back().second >= start)
    p.back().second = sim::max(p.back().second, end);
  else
    p.emplace_back(start, end);
  if (slow)
    for (std::uint32_t i = first; i < last; ++i)
      if (parts_[i].slow > 0) reschedule(i);
}

// The op's own cycles count as busy and what the sharing adds as waiting, once it ends; a run that stops before
// shows the op so far as the wait (its cause: the shared sub-partition, or the wgmmas beside it without a share).
OpResult IssueUnit::shared_compute(OpContext& ctx, std::int64_t cycles, std::int64_t share, std::int64_t speed) {
  const Cta& cta = ctx.cta();
  const auto index = static_cast<std::uint32_t>(cta.sm * kSubPartitions + ctx.warp.index % kSubPartitions);
  if (index >= parts_.size()) parts_.resize(static_cast<std::size_t>(index) + 1);
  SubPartition& s = parts_[index];
  advance(index);
  s.jobs.push_back(Job{ctx.warp_id, share, speed, cycles, sim_.now(), cycles * kUnit});
  s.total += share;
  if (speed < 100) s.slow += 1;
  reschedule(index);
  ctx.block(this, index, 0, share > 0 ? cause_share_ : cause_mma_);
  return ctx.blocked();
}

// The sub-partition's first job(s) are done: each, in the order they started, counts its busy cycles and continues
// as a warp whose busy op ends now would.
void IssueUnit::complete(std::uint32_t index, std::uint64_t gen) {
  SubPartition& s = parts_[index];
  if (static_cast<std::uint32_t>(gen) != s.gen) return;  // re-timed since
  advance(index);
  std::vector<Job> done;
  std::erase_if(s.jobs, [&](const Job& j) {
    if (j.left > 0) return false;
    done.push_back(j);
    return true;
  });
  for (const Job& j : done) {
    s.total -= j.share;
    if (j.speed < 100) s.slow -= 1;
  }
  reschedule(index);
  for (const Job& j : done) {
    Warp& w = sim_.warp(j.warp);
    w.busy += j.cycles;
    w.wait_since += Cycle(j.cycles);  // the wait is only what the sharing added
    sim_.observe_busy(w, sim_.op_of(w, w.wait_op), j.start.v, j.cycles);
    sim_.continue_now(j.warp);
  }
}

std::string IssueUnit::describe_wait(const Warp& w) const {
  const SubPartition& s = parts_[w.wait_obj];
  for (const Job& j : s.jobs)
    if (j.warp == sim_.warp_id(w))
      return fmt::format("nothing: it computes (share {} %), {} cycles of work left at {} % speed ({} % of SM sub-partition {} "
                         "asked for){}",
                         j.share, (j.left + kUnit - 1) / kUnit, s.total <= 100 ? 100 : 100 * 100 / s.total, s.total,
                         w.wait_obj % kSubPartitions,
                         j.speed < 100 ? fmt::format("; {} % of that while the SM's tensor pipe runs wgmmas", j.speed) : "");
  return "nothing: it computes";
}

}  // namespace smpipe::models
