// The state of one mbarrier object and its exact rules (semantics.md §1, PTX ISA §9.7.13.15).
// Pure state: no time, no waiters. Each operation returns what happened; the caller turns errors into
// diagnoses (with the warp, op and line) and wakes waiters when a phase completes.
#pragma once

#include <cstdint>

#include "isa/limits.hpp"

namespace smpipe::models {

class MBarrier {
 public:
  static constexpr std::int64_t kMaxCount = isa::kMaxArrivalCount;  // pending / expected: 0 .. 2^20-1
  static constexpr std::int64_t kMaxTx = isa::kMaxTxCount;          // tx: -(2^20-1) .. 2^20-1

  enum class Result : std::uint8_t {
    kOk,               // applied; the phase did not complete
    kPhaseCompleted,   // applied; the current phase completed (phase += 1, pending = expected)
    kNotInitialised,   // use before init: not applied
    kAlreadyValid,     // init of a valid barrier without inval: not applied
    kBadCount,         // init / arrive count outside 1..2^20-1: not applied
    kArrivalOverflow,  // arrivals would drive pending below 0: not applied
    kTxOutOfRange,     // tx would leave -(2^20-1)..2^20-1: not applied
    kDropToZero,       // arrive.drop would lower expected to 0: not applied
    kNoCompleteWouldComplete,  // arrive.noComplete that would complete the phase: not applied
  };

  bool valid() const { return valid_; }
  std::int64_t phase() const { return phase_; }
  std::int64_t pending() const { return pending_; }
  // What raise_pending (cp.async.mbarrier.arrive without .noinc) added to this phase's pending count.
  std::int64_t raised_this_phase() const { return raised_this_phase_; }
  std::int64_t expected() const { return expected_; }
  std::int64_t tx() const { return tx_; }
  // Per-phase bookkeeping for reports.
  std::int64_t arrivals_this_phase() const { return arrivals_this_phase_; }
  std::int64_t tx_expected_this_phase() const { return tx_expected_this_phase_; }
  std::int64_t tx_completed_this_phase() const { return tx_completed_this_phase_; }
  std::int64_t arrivals_last_phase() const { return arrivals_last_phase_; }

  Result init(std::int64_t count);
  Result inval();
  Result arrive(std::int64_t count);            // pending -= count
  Result arrive_no_complete(std::int64_t count);
  Result arrive_drop(std::int64_t count);       // arrive, and expected -= count for later phases
  Result expect_tx(std::int64_t bytes);         // tx += bytes
  Result complete_tx(std::int64_t bytes);       // tx -= bytes
  Result raise_pending(std::int64_t count);     // cp.async.mbarrier.arrive without .noinc: pending += count

  // try_wait.parity / test_wait.parity: true when the phase with parity P has completed, i.e. the
  // current phase's parity differs from P.
  bool test_parity(std::int64_t parity) const { return (phase_ & 1) != (parity & 1); }

 private:
  Result maybe_complete();

  bool valid_ = false;
  std::int64_t phase_ = 0;
  std::int64_t pending_ = 0;
  std::int64_t raised_this_phase_ = 0;
  std::int64_t expected_ = 0;
  std::int64_t tx_ = 0;
  std::int64_t arrivals_this_phase_ = 0;
  std::int64_t tx_expected_this_phase_ = 0;
  std::int64_t tx_completed_this_phase_ = 0;
  std::int64_t arrivals_last_phase_ = 0;
};

const char* to_string(MBarrier::Result r);

}  // namespace smpipe::models
