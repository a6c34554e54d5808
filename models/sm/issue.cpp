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
    : Unit(sim), cause_sleep_(sim.cause_id("sleep")), cause_share_(sim.cause_id("a shared SM sub-partition")) {}

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
    std::int64_t share = ctx.value(Attr::kShare);
    return share > 0 ? shared_compute(ctx, cycles, share) : ctx.busy(cycles);
  }
  ctx.block(nullptr, 0, 0, cause_sleep_);
  sim_.wake_at(ctx.warp_id, sim_.now() + Cycle(cycles));
  return ctx.blocked();
}

std::int64_t IssueUnit::progress(const SubPartition& s, std::int64_t dt) {
  if (s.total <= 100) return dt * kUnit;
  return static_cast<std::int64_t>(static_cast<Wide>(dt) * kUnit * 100 / s.total);
}

std::int64_t IssueUnit::cycles_for(const SubPartition& s, std::int64_t left) {
  if (left <= 0) return 0;
  const Wide num = static_cast<Wide>(left) * std::max<std::int64_t>(s.total, 100);
  const Wide den = static_cast<Wide>(kUnit) * 100;
  return static_cast<std::int64_t>((num + den - 1) / den);
}

void IssueUnit::advance(SubPartition& s) {
  const std::int64_t done = progress(s, (sim_.now() - s.since).v);
  for (Job& j : s.jobs) j.left -= done;
  s.since = sim_.now();
}

void IssueUnit::reschedule(std::uint32_t index) {
  SubPartition& s = parts_[index];
  s.gen += 1;
  if (s.jobs.empty()) return;
  std::int64_t first = cycles_for(s, s.jobs.front().left);
  for (const Job& j : s.jobs) first = std::min(first, cycles_for(s, j.left));
  sim_.schedule(*this, sim_.now() + Cycle(first), sim::Priority::kCompletion, index, s.gen);
}

// The op's own cycles count as busy and what the sharing adds as waiting, once it ends; a run that stops before
// shows the op so far as the wait (its cause: the shared sub-partition).
OpResult IssueUnit::shared_compute(OpContext& ctx, std::int64_t cycles, std::int64_t share) {
  const Cta& cta = ctx.cta();
  const auto index = static_cast<std::uint32_t>(cta.sm * kSubPartitions + ctx.warp.index % kSubPartitions);
  if (index >= parts_.size()) parts_.resize(static_cast<std::size_t>(index) + 1);
  SubPartition& s = parts_[index];
  advance(s);
  s.jobs.push_back(Job{ctx.warp_id, share, cycles, sim_.now(), cycles * kUnit});
  s.total += share;
  reschedule(index);
  ctx.block(this, index, 0, cause_share_);
  return ctx.blocked();
}

// The sub-partition's first job(s) are done: each, in the order they started, counts its busy cycles and continues
// as a warp whose busy op ends now would.
void IssueUnit::complete(std::uint32_t index, std::uint64_t gen) {
  SubPartition& s = parts_[index];
  if (static_cast<std::uint32_t>(gen) != s.gen) return;  // re-timed since
  advance(s);
  std::vector<Job> done;
  std::erase_if(s.jobs, [&](const Job& j) {
    if (j.left > 0) return false;
    done.push_back(j);
    return true;
  });
  for (const Job& j : done) s.total -= j.share;
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
                         "asked for)",
                         j.share, (j.left + kUnit - 1) / kUnit, s.total <= 100 ? 100 : 100 * 100 / s.total, s.total,
                         w.wait_obj % kSubPartitions);
  return "nothing: it computes";
}

}  // namespace smpipe::models
