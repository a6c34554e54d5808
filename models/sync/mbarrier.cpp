#include "models/sync/mbarrier.hpp"

namespace smpipe::models {

using Result = MBarrier::Result;

Result MBarrier::init(std::int64_t count) {
  if (valid_) return Result::kAlreadyValid;
  if (count < 1 || count > kMaxCount) return Result::kBadCount;
  valid_ = true;
  phase_ = 0;
  pending_ = expected_ = count;
  tx_ = 0;
  arrivals_this_phase_ = tx_expected_this_phase_ = tx_completed_this_phase_ = arrivals_last_phase_ = raised_this_phase_ = 0;
  return Result::kOk;
}

Result MBarrier::inval() {
  if (!valid_) return Result::kNotInitialised;
  valid_ = false;
  return Result::kOk;
}

// The phase completes when pending == 0 and tx == 0; then phase += 1 and pending = expected.
Result MBarrier::maybe_complete() {
  if (pending_ != 0 || tx_ != 0) return Result::kOk;
  ++phase_;
  pending_ = expected_;
  arrivals_last_phase_ = arrivals_this_phase_;
  arrivals_this_phase_ = tx_expected_this_phase_ = tx_completed_this_phase_ = raised_this_phase_ = 0;
  return Result::kPhaseCompleted;
}

Result MBarrier::arrive(std::int64_t count) {
  if (!valid_) return Result::kNotInitialised;
  if (count < 1 || count > kMaxCount) return Result::kBadCount;
  if (count > pending_) return Result::kArrivalOverflow;
  pending_ -= count;
  arrivals_this_phase_ += count;
  return maybe_complete();
}

Result MBarrier::arrive_no_complete(std::int64_t count) {
  if (!valid_) return Result::kNotInitialised;
  if (count < 1 || count > kMaxCount) return Result::kBadCount;
  if (count > pending_) return Result::kArrivalOverflow;
  if (count == pending_ && tx_ == 0) return Result::kNoCompleteWouldComplete;
  pending_ -= count;
  arrivals_this_phase_ += count;
  return Result::kOk;
}

Result MBarrier::arrive_drop(std::int64_t count) {
  if (!valid_) return Result::kNotInitialised;
  if (count < 1 || count > kMaxCount) return Result::kBadCount;
  if (count > pending_) return Result::kArrivalOverflow;
  if (count >= expected_) return Result::kDropToZero;
  expected_ -= count;
  pending_ -= count;
  arrivals_this_phase_ += count;
  return maybe_complete();
}

Result MBarrier::expect_tx(std::int64_t bytes) {
  if (!valid_) return Result::kNotInitialised;
  if (bytes < 0 || tx_ + bytes > kMaxTx) return Result::kTxOutOfRange;
  tx_ += bytes;
  tx_expected_this_phase_ += bytes;
  // Bytes that landed before their expect_tx left tx negative: the expect that brings it back to 0 with
  // every arrival in completes the phase (PTX ISA 9.7.13.15.1: the phase completes when both are 0).
  return maybe_complete();
}

Result MBarrier::complete_tx(std::int64_t bytes) {
  if (!valid_) return Result::kNotInitialised;
  if (bytes < 0 || tx_ - bytes < -kMaxTx) return Result::kTxOutOfRange;
  tx_ -= bytes;
  tx_completed_this_phase_ += bytes;
  return maybe_complete();
}

Result MBarrier::raise_pending(std::int64_t count) {
  if (!valid_) return Result::kNotInitialised;
  if (pending_ + count > kMaxCount) return Result::kArrivalOverflow;
  pending_ += count;
  raised_this_phase_ += count;
  return Result::kOk;
}

const char* to_string(MBarrier::Result r) {
  switch (r) {
    case Result::kOk: return "ok";
    case Result::kPhaseCompleted: return "phase completed";
    case Result::kNotInitialised: return "barrier used before init";
    case Result::kAlreadyValid: return "init of a barrier that is already initialised (no inval)";
    case Result::kBadCount: return "count outside 1..2^20-1";
    case Result::kArrivalOverflow: return "arrival overflow";
    case Result::kTxOutOfRange: return "tx-count out of range";
    case Result::kDropToZero: return "arrive.drop lowers the expected count to 0";
    case Result::kNoCompleteWouldComplete: return "arrive.noComplete would complete the phase";
  }
  return "?";
}

}  // namespace smpipe::models
