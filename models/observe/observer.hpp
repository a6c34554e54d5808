// Observers see what happens in a run without being part of it: the Chrome trace, the op log of
// `smpipe compare`, and (next) hazard checkers subscribe here instead of being written into the units.
// Every hook has an empty default; an observer overrides what it needs. The simulator calls the hooks of
// the observers that want the CTA concerned (wants()), in the order they were added, and formats labels
// only when one of them does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/program.hpp"

namespace smpipe::models {

struct CtaStart {
  std::int64_t cta = 0;  // linear CTA id
  int sm = 0;
  std::int64_t cluster = 0;
  int rank = 0;
  const isa::Program* program = nullptr;
  std::vector<std::string> barrier_names;  // per flat mbarrier index ("full[2]")
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual bool wants(std::int64_t cta) const = 0;

  virtual void cta_started(const CtaStart&) {}
  virtual void cta_exited(std::int64_t /*cta*/, std::int64_t /*cycle*/) {}
  // A warp starts an op (`op` indexes its role's RoleCode::ops).
  virtual void op_started(std::int64_t /*cta*/, int /*warp*/, int /*role*/, std::uint32_t /*op*/, std::int64_t /*cycle*/) {}
  // The op keeps the warp issuing for `cycles`.
  virtual void op_busy(std::int64_t /*cta*/, int /*warp*/, const isa::OpDesc&, std::int64_t /*start*/, std::int64_t /*cycles*/) {}
  // A wait (on `cause`, at op `d`) that began at `since` ended after `cycles`.
  virtual void wait_ended(std::int64_t /*cta*/, int /*warp*/, std::string_view /*cause*/, const isa::OpDesc&,
                          std::int64_t /*since*/, std::int64_t /*cycles*/) {}
  virtual void warp_exited(std::int64_t /*cta*/, int /*warp*/, int /*role*/, std::int64_t /*cycle*/) {}
  // Asynchronous work of a unit (a TMA copy, an MMA) running from `start` to `end`; `category` names the unit.
  virtual void async_work(std::int64_t /*cta*/, const std::string& /*label*/, std::string_view /*category*/,
                          std::int64_t /*start*/, std::int64_t /*end*/) {}
  // A signal (arrive, complete_tx) leaves a warp for a barrier of CTA `to`; the token returned comes back
  // with signal_landed (0: no interest).
  virtual std::uint64_t signal_sent(std::int64_t /*from*/, int /*warp*/, std::int64_t /*to*/, std::int64_t /*cycle*/) {
    return 0;
  }
  virtual void signal_landed(std::uint64_t /*token*/, std::int64_t /*cta*/, std::uint32_t /*barrier*/, std::int64_t /*cycle*/) {}
  // A stage's barrier becomes ready (its phase completed) or not (the next arrival came).
  virtual void stage_ready(std::int64_t /*cta*/, std::uint32_t /*barrier*/, std::uint32_t /*decl*/, std::string_view /*decl_name*/,
                           bool /*ready*/, std::int64_t /*cycle*/) {}
  // A phase of barrier `name` completed (`by` the action that completed it); the waiting warps resume at `wake`.
  virtual void phase_completed(std::int64_t /*cta*/, std::uint32_t /*barrier*/, const std::string& /*name*/, std::int64_t /*phase*/,
                               const char* /*by*/, std::span<const int> /*waiter_warps*/, std::int64_t /*wake*/,
                               std::int64_t /*cycle*/) {}
  // The run stopped (deadlock, watchdog, undefined behaviour) at `cycle` while this warp waited since `since`.
  virtual void wait_unfinished(std::int64_t /*cta*/, int /*warp*/, std::string_view /*cause*/, const isa::OpDesc&,
                               std::int64_t /*since*/, std::int64_t /*cycle*/) {}
  // The run ended at `cycle` as `outcome` ("deadlock" ...), with what the report says first (empty when it finished).
  virtual void run_ended(std::int64_t /*cycle*/, std::string_view /*outcome*/, const std::string& /*what*/) {}
};

// The observers of one run.
class Observers {
 public:
  void add(Observer* o) {
    if (o != nullptr) list_.push_back(o);
  }
  bool empty() const { return list_.empty(); }
  bool wants(std::int64_t cta) const {
    for (const Observer* o : list_)
      if (o->wants(cta)) return true;
    return false;
  }
  // Calls f(observer) for each observer that wants `cta`.
  template <class F>
  void each(std::int64_t cta, F&& f) const {
    for (Observer* o : list_)
      if (o->wants(cta)) f(*o);
  }
  // Calls f(observer) for every observer.
  template <class F>
  void each_observer(F&& f) const {
    for (Observer* o : list_) f(*o);
  }
  // The first non-zero token of the observers that want the sender.
  std::uint64_t signal_sent(std::int64_t from, int warp, std::int64_t to, std::int64_t cycle) const {
    std::uint64_t token = 0;
    for (Observer* o : list_)
      if (o->wants(from)) {
        std::uint64_t t = o->signal_sent(from, warp, to, cycle);
        if (token == 0) token = t;
      }
    return token;
  }

 private:
  std::vector<Observer*> list_;
};

}  // namespace smpipe::models
