// The Chrome trace as an observer: turns what happens in a run into sim::TraceWriter events (warp tracks,
// one track per mbarrier at tid 1000 + flat index, async slices for TMA and MMA work, flow arrows from a
// signal to its barrier and from a completion to each woken waiter, and stage-occupancy counters).
#pragma once

#include <map>
#include <unordered_map>
#include <vector>

#include "models/observe/observer.hpp"
#include "sim/trace_writer.hpp"

namespace smpipe::models {

class TraceObserver : public Observer {
 public:
  explicit TraceObserver(sim::TraceWriter& writer) : w_(writer) {}

  bool wants(std::int64_t cta) const override { return w_.wants(cta); }
  void cta_started(const CtaStart& c) override;
  void cta_exited(std::int64_t cta, std::int64_t cycle) override;
  void op_busy(std::int64_t cta, int warp, const isa::OpDesc& d, std::int64_t start, std::int64_t cycles) override;
  void wait_ended(std::int64_t cta, int warp, std::string_view cause, const isa::OpDesc& d, std::int64_t since,
                  std::int64_t cycles) override;
  void async_work(std::int64_t cta, const std::string& label, std::string_view category, std::int64_t start,
                  std::int64_t end) override;
  std::uint64_t signal_sent(std::int64_t from, int warp, std::int64_t to, std::int64_t cycle) override;
  void signal_landed(std::uint64_t token, std::int64_t cta, std::uint32_t barrier, std::int64_t cycle) override;
  void stage_ready(std::int64_t cta, std::uint32_t barrier, std::uint32_t decl, std::string_view decl_name, bool ready,
                   std::int64_t cycle) override;
  void phase_completed(std::int64_t cta, std::uint32_t barrier, const std::string& name, std::int64_t phase, const char* by,
                       std::span<const int> waiter_warps, std::int64_t wake, std::int64_t cycle) override;
  void wait_unfinished(std::int64_t cta, int warp, std::string_view cause, const isa::OpDesc& d, std::int64_t since,
                       std::int64_t cycle) override;
  void run_ended(std::int64_t cycle, std::string_view outcome, const std::string& what) override;

 private:
  static constexpr std::int64_t kBarrierTrack = 1000;  // tid of mbarrier flat index 0
  struct Stages {
    std::vector<std::uint8_t> ready;  // per flat barrier: phase completed, not yet re-armed
    std::map<std::uint32_t, std::int32_t> count;  // per declaration: ready elements
  };
  sim::TraceWriter& w_;
  std::uint64_t next_id_ = 1;  // flow and async-slice ids
  std::map<std::int64_t, Stages> stages_;  // per traced CTA alive
  struct Sent {
    std::int64_t cta;
    int warp;
    std::int64_t cycle;
  };
  std::unordered_map<std::uint64_t, Sent> in_flight_;  // signals sent and not landed yet, by flow id
  struct Woken {
    std::uint64_t id;
    std::int64_t track, cycle, wake;  // the barrier's track, the completion, the waiter's wake-up
  };
  std::map<std::pair<std::int64_t, int>, std::vector<Woken>> woken_;  // (CTA, warp) -> arrows until it wakes
};

}  // namespace smpipe::models
