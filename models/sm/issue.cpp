#include "models/sm/issue.hpp"

#include <fmt/format.h>

#include "models/gpu/simulator.hpp"

namespace smpipe::models {

using isa::Attr;
using isa::OpKind;

IssueUnit::IssueUnit(Simulator& sim) : Unit(sim), cause_sleep_(sim.cause_id("sleep")) {}

std::span<const isa::OpKind> IssueUnit::accepted() {
  static constexpr OpKind kOps[] = {OpKind::kCompute, OpKind::kSleep};
  return kOps;
}

OpResult IssueUnit::execute(OpContext& ctx) {
  std::int64_t cycles = ctx.value(Attr::kCycles);
  bool sleep = ctx.desc.kind == OpKind::kSleep;
  if (cycles < 0) ctx.ub("negative cycles", fmt::format("{} cycles={}", sleep ? "sleep" : "compute", cycles));
  if (cycles == 0) return OpResult{};
  if (!sleep) return ctx.busy(cycles);
  ctx.block(nullptr, 0, 0, cause_sleep_);
  sim_.wake_at(ctx.warp_id, sim_.now() + Cycle(cycles));
  return ctx.blocked();
}

}  // namespace smpipe::models
