// One interface for every primitive of the SM (docs/architecture.md): a unit says which ops it accepts,
// executes one for a warp through an OpContext, completes the events it scheduled itself, says in words
// what a warp blocked on it waits for (and on which warps: the wait-for edges of deadlock reports), and
// adds its statistics. Its state is its own, kept per CTA slot, per warp id or per SM; slots are reused,
// so a unit resets a slot's state in cta_started.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/limits.hpp"
#include "isa/program.hpp"
#include "models/machine.hpp"
#include "models/observe/deadlock.hpp"
#include "models/observe/stats.hpp"
#include "models/gpu/state.hpp"
#include "sim/check.hpp"

namespace smpipe::models {

class Simulator;
class Unit;

struct OpResult {
  enum Kind : std::uint8_t { kContinue, kBusy, kBlocked, kExited } kind = kContinue;
  std::int64_t cycles = 0;  // kBusy: cycles until the warp issues again
};

// The op a warp executes now: the warp and its CTA, the op as compiled, and its argument values, read by
// attribute name.
class OpContext {
 public:
  OpContext(Simulator& sim, std::uint32_t warp_id, Warp& warp, std::uint32_t op, const isa::OpDesc& desc, const std::int64_t* values);

  Simulator& sim;
  const std::uint32_t warp_id;
  Warp& warp;
  const std::uint32_t op;  // index in the role's ops
  const isa::OpDesc& desc;

  std::uint32_t cta_slot() const { return warp.cta; }
  Cta& cta() const;
  Cycle now() const;
  // Lanes that execute the op: 32, or 1 inside elect.
  std::int64_t lanes() const { return desc.lanes; }

  [[gnu::always_inline]] const isa::AttrSlot& attr(isa::Attr a) const {
    const isa::AttrSlot* s = desc.slot(a);
    SMPIPE_CHECK(s != nullptr, fmt_missing(a));
    return *s;
  }
  [[gnu::always_inline]] bool present(isa::Attr a) const { return attr(a).present; }
  // The value of attribute `a` (element `i` of a tuple).
  [[gnu::always_inline]] std::int64_t value(isa::Attr a, int i = 0) const {
    const isa::AttrSlot& s = attr(a);
    SMPIPE_CHECK(i >= 0 && i < s.length, fmt_missing(a));
    return values_[s.first + i];
  }
  // The group count `n=` of a wait (tma.wait, cp.async.wait, wgmma.wait): a value known only at run time
  // is checked as the compiler checks a constant (0..63); outside it is undefined behaviour.
  std::int64_t wait_count() const;
  // The flat index (in the CTA) of the mbarrier / smem element the attribute names; an index out of its
  // array is undefined behaviour.
  std::uint32_t barrier(isa::Attr a) const;
  std::uint32_t smem(isa::Attr a) const;
  std::uint32_t global(isa::Attr a) const;  // a global word (flat index in the grid's words)
  // The bytes the op moves (its box's or bytes=, as compiled, or the value at run time). With `buffer`, the smem
  // element the op writes or reads: bytes known only at run time beyond that element are undefined behaviour (the
  // compiler refuses constant ones).
  std::int64_t bytes() const { return desc.bytes >= 0 ? desc.bytes : value(isa::Attr::kBytes); }
  std::int64_t bytes(isa::Attr buffer) const;
  // The CTA slot of this CTA's peer in its cta_group::2 pair (cluster ranks 2k and 2k+1); none is UB.
  std::uint32_t pair_peer() const;

  OpResult busy(std::int64_t cycles) const { return OpResult{OpResult::kBusy, cycles}; }
  OpResult blocked() const { return OpResult{OpResult::kBlocked, 0}; }
  // Blocks the warp on `owner` (nullptr: a timed wait, ended by wake_at).
  void block(const Unit* owner, std::uint32_t obj, std::int64_t value, std::uint16_t cause) const;
  // Undefined behaviour (or a hazard) at this op: never returns.
  [[noreturn]] void ub(const std::string& title, const std::string& message, bool hazard = false) const;

 private:
  [[gnu::cold, gnu::noinline]] std::string fmt_missing(isa::Attr a) const;
  template <class Decl>
  std::uint32_t element(isa::Attr a, const std::vector<Decl>& decls, const isa::ElementLayout& layout) const;
  const std::int64_t* values_;
};

// What a unit found about one stuck warp blocked on it, for the deadlock report.
class WaitExplanation {
 public:
  explicit WaitExplanation(StuckNode& node, const std::vector<int>& node_of, int self)
      : node_(node), node_of_(node_of), self_(self) {}
  // The warp needs something that warp `warp_id` would do (ignored when that warp is not stuck).
  void waits_on(std::uint32_t warp_id) {
    int v = warp_id < node_of_.size() ? node_of_[warp_id] : -1;
    if (v < 0 || v == self_) return;
    for (int x : node_.waits_on)
      if (x == v) return;
    node_.waits_on.push_back(v);
  }
  void cause(std::string text) { node_.causes.push_back(std::move(text)); }
  // A cause that names the mistake itself (not only its symptom): the report lists these first.
  void lead_cause(std::string text) { node_.lead_causes.push_back(std::move(text)); }
  void never_started(std::string entry) { node_.never_started.push_back(std::move(entry)); }

 private:
  StuckNode& node_;
  const std::vector<int>& node_of_;
  int self_;
};

// Records of events in flight, by an index the event carries; freed indices are reused.
template <class T>
class EventRecords {
 public:
  std::uint32_t put(const T& record) {
    if (free_.empty()) {
      records_.push_back(record);
      return static_cast<std::uint32_t>(records_.size() - 1);
    }
    std::uint32_t id = free_.back();
    free_.pop_back();
    records_[id] = record;
    return id;
  }
  T take(std::uint32_t id) {
    free_.push_back(id);
    return records_[id];
  }

 private:
  std::vector<T> records_;
  std::vector<std::uint32_t> free_;
};

class Unit {
 public:
  explicit Unit(Simulator& sim) : sim_(sim) {}
  virtual ~Unit() = default;
  Unit(const Unit&) = delete;
  Unit& operator=(const Unit&) = delete;

  // Its name in the machine file and in messages.
  virtual std::string_view name() const = 0;
  // The ops it executes (each op kind belongs to exactly one unit).
  virtual std::span<const isa::OpKind> ops() const { return {}; }
  // Called once every unit exists: look up the units this one works with.
  virtual void connect() {}
  virtual OpResult execute(OpContext& ctx);
  // Cycles > 0 when executing op `d` can do nothing but keep its warp busy that many cycles, whatever the state of
  // the run (its values all constants; no check that can fail, no jitter, no state read or written): the
  // simulator then runs it as a kBusyOp instruction of its own code, without execute (the same run, less work). 0:
  // ask execute. (Only IssueUnit's compute ops are: the kBusyOp records the warp's register work, Warp::reg_work, as
  // IssueUnit::execute does.)
  virtual std::int64_t fixed_busy(const isa::OpDesc& /*d*/) const { return 0; }
  // An event this unit scheduled (Simulator::schedule) is due.
  virtual void complete(std::uint32_t /*target*/, std::uint64_t /*payload*/) {}
  // A CTA starts in slot `slot` (reset the slot's state), exits (may diagnose), or a warp exits.
  virtual void cta_started(std::uint32_t /*slot*/) {}
  virtual void cta_exiting(std::uint32_t /*slot*/) {}
  virtual void warp_exited(std::uint32_t /*warp_id*/) {}
  // A warp blocked on this unit is about to resume.
  virtual void woken(std::uint32_t /*warp_id*/) {}
  // What a warp blocked on this unit waits for, in words; the wait-for edges and causes of a deadlock.
  virtual std::string describe_wait(const Warp& /*w*/) const { return "?"; }
  virtual void explain_wait(const Warp& /*w*/, WaitExplanation& /*e*/) const {}
  // A warp still running at the watchdog whose last op `d` is one of this unit's: what it polls ("" if nothing).
  virtual std::string describe_poll(const Warp& /*w*/, const isa::OpDesc& /*d*/) const { return ""; }
  // A warp still running at the watchdog that spins on this unit (its latest poll failed, and no poll of it
  // passed since, whatever it ran after it: a backoff `sleep`): sets `spin` to the wait it stands for
  // (wait_obj, wait_value, wait_op, wait_since, wait_cause, as if blocked there) and returns true; false if
  // it does not spin here.
  virtual bool spinning(const Warp& /*w*/, Warp& /*spin*/) const { return false; }
  // Adds its utilisation lines.
  virtual void add_stats(Stats& /*stats*/, std::int64_t /*cycles*/, std::int64_t /*sms_used*/) const {}
  // Suspicious patterns it noticed (reported with a problem).
  virtual void add_notes(std::vector<std::string>& /*notes*/) const {}
  // Signs of a bug it saw even if the run finishes (reported always).
  virtual void add_warnings(std::vector<std::string>& /*warnings*/) const {}
  // Bytes this unit has on their way to a barrier when a run stops (a watchdog report: cut short, not stuck).
  virtual std::int64_t tx_in_flight() const { return 0; }

  std::int16_t index() const { return index_; }
  void set_index(std::int16_t i) { index_ = i; }

 protected:
  Simulator& sim_;

 private:
  std::int16_t index_ = -1;
};

}  // namespace smpipe::models
