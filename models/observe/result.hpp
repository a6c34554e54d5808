// What a run gives back: how it ended, its statistics, and for a run that did not finish cleanly an
// undefined behaviour or hazard at one op, a deadlock (every stuck warp and the wait-for cycles), or the
// watchdog.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/source.hpp"
#include "models/observe/stats.hpp"

namespace smpipe::models {

enum class Outcome : std::uint8_t {
  kFinished,   // every warp exited
  kDeadlock,   // no event left and warps still wait (exit 2)
  kWatchdog,   // --max-cycles reached, or a warp loops without time passing (exit 2)
  kUndefined,  // undefined behaviour or hazard diagnosed (exit 3)
};

// The outcome as the summary's first line and --json's "outcome" write it.
inline const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kFinished: return "finished";
    case Outcome::kDeadlock: return "deadlock";
    case Outcome::kWatchdog: return "watchdog";
    case Outcome::kUndefined: return "undefined-behaviour";
  }
  return "?";
}

struct Diagnosis {
  std::string title;    // short name of the rule, e.g. "arrival overflow"
  std::string message;  // full explanation with the numbers
  std::int64_t cycle = 0;
  std::int64_t cta = -1;
  int warp = -1;
  std::string role;
  isa::SourceLoc loc;
  std::string op_text;
  bool hazard = false;  // a race (missing fence), not a rule of the ISA
};

struct StuckWarp {
  std::int64_t cta = 0;
  int warp = 0;
  std::string role;
  isa::SourceLoc loc;
  std::string op_text;
  std::string waits_for;
  std::string cause;  // the waiting cause as the summary names it ("mbarrier full"); empty for a running warp
  std::int64_t since = 0;
};

struct DeadlockReport {
  std::vector<StuckWarp> warps;
  std::vector<std::vector<int>> cycles;  // indices into warps, each a cycle of the wait-for graph
  std::vector<std::string> causes;      // likely causes in words
  std::int64_t unlaunched_ctas = 0;
  // Watchdog stops: the last cycle at which a barrier phase completed, a named barrier released or a warp
  // exited (-1 for a deadlock). Progress in the last tenth of the run means it was not stuck, only cut short.
  // -1: none before the stop. Only a stop by --max-cycles or --max-ops (limit_stop) is judged this way: an op-less
  // endless loop is stuck whatever the other warps do.
  std::int64_t last_progress = -1;
  bool limit_stop = false;
  std::int64_t tx_in_flight = 0;  // a watchdog stop: bytes of copies still on their way to barriers
  bool progressing(std::int64_t stop) const {
    return limit_stop && last_progress > 0 && stop - last_progress <= stop / 10;
  }
};

struct RunResult {
  Outcome outcome = Outcome::kFinished;
  std::int64_t cycles = 0;
  std::optional<Diagnosis> diagnosis;  // kUndefined
  DeadlockReport deadlock;             // kDeadlock / kWatchdog
  std::string watchdog_reason;
  std::vector<std::string> notes;  // suspicious patterns seen during the run (reported with a problem)
  std::vector<std::string> warnings;  // signs of a bug even in a run that finished (always reported)
  Stats stats;
};

// The outcome in one word, as the summary's first line and --json's "outcome" write it: a hazard (a race found
// by the hazard checker) is "hazard", other undefined behaviour "undefined-behaviour".
inline const char* outcome_word(const RunResult& r) {
  if (r.outcome == Outcome::kUndefined && r.diagnosis && r.diagnosis->hazard) return "hazard";
  return outcome_name(r.outcome);
}

}  // namespace smpipe::models
