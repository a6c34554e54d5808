// The start cycle of every op that warps of chosen CTAs execute, in execution order (smpipe compare sets
// simulated times beside hardware ones with it), and the observer that records it.
#pragma once

#include <cstdint>
#include <vector>

#include "models/observe/observer.hpp"

namespace smpipe::models {

// Entries with op == kExit mark a warp's exit.
struct OpLog {
  static constexpr std::uint32_t kExit = ~0u;
  struct Entry {
    std::int64_t cta = 0;   // linear CTA id
    std::int32_t warp = 0;  // warp index in the CTA
    std::int32_t role = 0;  // role index in the Program
    std::uint32_t op = 0;   // op index in the role's RoleCode::ops, or kExit
    std::int64_t cycle = 0;
  };
  std::int64_t first_cta = 0, end_cta = 0;  // CTAs [first_cta, end_cta) are logged
  std::vector<Entry> entries;
  bool wants(std::int64_t cta) const { return cta >= first_cta && cta < end_cta; }
};

class OpLogObserver : public Observer {
 public:
  explicit OpLogObserver(OpLog& log) : log_(log) {}
  bool wants(std::int64_t cta) const override { return log_.wants(cta); }
  void op_started(std::int64_t cta, int warp, int role, std::uint32_t op, std::int64_t cycle) override {
    log_.entries.push_back({cta, warp, role, op, cycle});
  }
  void warp_exited(std::int64_t cta, int warp, int role, std::int64_t cycle) override {
    log_.entries.push_back({cta, warp, role, OpLog::kExit, cycle});
  }

 private:
  OpLog& log_;
};

}  // namespace smpipe::models
