#include "models/sm/issue.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

namespace {
constexpr int kSubPartitions = 4;
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

void IssueUnit::advance(SubPartition& s) {
  const double done = static_cast<double>((sim_.now() - s.since).v) * speed(s);
  for (Job& j : s.jobs) j.left -= done;
  s.since = sim_.now();
}

void IssueUnit::reschedule(std::uint32_t index) {
  SubPartition& s = parts_[index];
  s.gen += 1;
  const double v = speed(s);
  for (const Job& j : s.jobs) {
    // The first whole cycle by which its work is done (never before now).
    auto wait = static_cast<std::int64_t>(std::ceil(std::max(0.0, j.left) / v - 1e-9));
    sim_.schedule(*this, sim_.now() + Cycle(wait), sim::Priority::kCompletion, j.warp,
                  (std::uint64_t{index} << 32) | s.gen);
  }
}

// The warp counts the op's own cycles as busy, as a compute op alone; the time the sharing adds is a wait on
// its sub-partition (from the end its own cycles would have had to its real end: the wait's start moves there
// when the op ends; a run that stops before shows the whole op as the wait).
OpResult IssueUnit::shared_compute(OpContext& ctx, std::int64_t cycles, std::int64_t share) {
  const Cta& cta = ctx.cta();
  const auto index = static_cast<std::uint32_t>(cta.sm * kSubPartitions + ctx.warp.index % kSubPartitions);
  if (index >= parts_.size()) parts_.resize(static_cast<std::size_t>(index) + 1);
  SubPartition& s = parts_[index];
  advance(s);
  s.jobs.push_back(Job{ctx.warp_id, share, cycles, static_cast<double>(cycles)});
  s.total += share;
  reschedule(index);
  Warp& w = ctx.warp;
  w.busy += cycles;
  w.busy_until = sim_.now().v + cycles;
  sim_.observe_busy(w, ctx.desc, cycles);
  ctx.block(this, index, 0, cause_share_);
  return ctx.blocked();
}

void IssueUnit::complete(std::uint32_t warp_id, std::uint64_t payload) {
  const auto index = static_cast<std::uint32_t>(payload >> 32);
  SubPartition& s = parts_[index];
  if (static_cast<std::uint32_t>(payload) != s.gen) return;  // rescheduled since
  advance(s);
  for (std::size_t i = 0; i < s.jobs.size(); ++i)
    if (s.jobs[i].warp == warp_id) {
      s.total -= s.jobs[i].share;
      sim_.warp(warp_id).wait_since += Cycle(s.jobs[i].cycles);
      s.jobs.erase(s.jobs.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  reschedule(index);
  sim_.wake_at(warp_id, sim_.now());
}

std::string IssueUnit::describe_wait(const Warp& w) const {
  const SubPartition& s = parts_[w.wait_obj];
  return fmt::format("its compute op, sharing SM sub-partition {} with {} other warp(s) ({} % together)", w.wait_obj % kSubPartitions,
                     s.jobs.size() - 1, s.total);
}

}  // namespace smpipe::models
