// The data-hazard unit's reports: the words of a race (which ops, which buffer) and the cause and fix it
// names (the barrier, the phase, the missing arrival or wait), built from the unit's records when a race is
// found. The tracking itself is in hazards.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "models/gpu/simulator.hpp"
#include "models/memory/atomics.hpp"
#include "models/memory/hazards.hpp"
#include "models/memory/lsu.hpp"
#include "models/sync/mbarrier_unit.hpp"
#include "models/tensor/tensor_unit.hpp"
#include "models/sync/named_barrier.hpp"

namespace smpipe::models {

namespace {
// An element's index within its declaration (`sA[2]`: 2).
std::int64_t element_index(const isa::ElementLayout& l, std::uint32_t flat) {
  return static_cast<std::int64_t>(flat - l.base[l.decl_of(flat)]);
}
}  // namespace

std::string HazardUnit::tmem_in_use(std::span<const std::uint32_t> warp_ids, std::uint32_t cta, std::uint32_t first,
                                    std::uint32_t end) const {
  if (!tracks_ || cta >= buffers_.size()) return "";
  auto by_none = [&](const Rec& r) {
    return std::none_of(warp_ids.begin(), warp_ids.end(),
                        [&](std::uint32_t w) { return ordered(r, const_cast<HazardUnit*>(this)->vc_of(w)); });
  };
  for (std::uint32_t b = first; b < end && b < buffers_[cta].size(); ++b)
    for (const auto* recs : {&buffers_[cta][b].writes, &buffers_[cta][b].reads})
      for (const Rec& r : *recs)
        if (by_none(r)) {
          const int w = sim_.warp(r.warp).index;
          std::string fix =
              r.via == Via::kTmemMma
                  ? "wait on the barrier its umma.commit arrives on, or be ordered after a warp that did, before tmem.dealloc "
                    "(CUTLASS: the MMA warp's tail waits on the accumulator's empty barrier for every stage, which the "
                    "epilogue released after it waited on the commit's barrier; a 2-SM pair's leader does so before the "
                    "dealloc handshake with its peer)"
              : r.via == Via::kTmemLd || r.via == Via::kTmemSt
                  ? fmt::format("warp {} must wait for it (tmem.wait {}) and then arrive on a barrier the freeing warp waits "
                                "on before tmem.dealloc", w, r.via == Via::kTmemLd ? "ld" : "st")
                  : "order it before tmem.dealloc";
          return fmt::format("{} may still {} {}: {}", op_words(r), r.write ? "write" : "read", buffer_name(b), fix);
        }
  return "";
}

std::string HazardUnit::buffer_name(std::uint32_t buffer) const {
  const auto& p = sim_.program();
  if (buffer < smem_count_) return p.smem_layout.element_name(p.smems, buffer);
  if (buffer >= tmem_base_) {
    std::uint32_t c = (buffer - tmem_base_) * kTmemChunk;
    return fmt::format("the TMEM chunk of columns {}..{}", c, c + kTmemChunk - 1);
  }
  return fmt::format("the CLC response of {}", p.mbarrier_layout.element_name(p.mbarriers, buffer - smem_count_));
}

std::string HazardUnit::op_words(const Rec& r) const {
  const Warp& w = sim_.warp(r.warp);
  const isa::OpDesc& d = sim_.op_of(w, r.op);
  return fmt::format("'{}' at line {} (CTA {} warp {}, {})", d.text, d.loc.line, r.cta_id, w.index, sim_.program().roles[w.role].name);
}

std::string HazardUnit::unobserved_fill_words(std::uint32_t slot, const Rec& r) {
  if (r.bar != kNone && r.bar_cta == slot) {
    if (std::string words = trip_count_words(slot, r.bar, false); !words.empty()) return words;
    const auto& p = sim_.program();
    const std::uint32_t decl = p.mbarrier_layout.decl_of(r.bar);
    if (waiters_of(slot, decl) == 0)
      return fmt::format("No warp of CTA {} waited on a phase of {}: a role that consumes what it loads must wait on {} "
                         "(or the load names the wrong barrier); or wait for it before exiting (a producer tail)",
                         sim_.cta(slot).id, p.mbarriers[decl].name, p.mbarriers[decl].name);
  }
  return "Wait for it before exiting (a producer tail), or do not issue it";
}

std::uint64_t HazardUnit::waiters_of(std::uint32_t slot, std::uint32_t decl) const {
  const auto& p = sim_.program();
  auto waits_on = [&](int role) {
    for (const auto& op : p.roles[static_cast<std::size_t>(role)].ops)
      if (op.kind == isa::OpKind::kWait || op.kind == isa::OpKind::kTestWait)
        if (const isa::AttrSlot* b = op.slot(isa::Attr::kBar); b != nullptr && b->decl == static_cast<int>(decl)) return true;
    return false;
  };
  std::uint64_t mask = 0;
  const Cta& c = sim_.cta(slot);
  for (int i = 0; i < warps_ && i < 64; ++i) {
    const int role = sim_.warp(c.first_warp + static_cast<std::uint32_t>(i)).role;
    if (role >= 0 && waits_on(role)) mask |= std::uint64_t{1} << i;
  }
  return mask;
}

std::string HazardUnit::trip_count_words(std::uint32_t slot, std::uint32_t bar, bool coming) {
  if (!tracks_ || bar == kNone) return "";
  const auto& p = sim_.program();
  const Cta& c = sim_.cta(slot);
  const std::uint32_t decl = p.mbarrier_layout.decl_of(bar);
  const std::uint32_t base = p.mbarrier_layout.base[decl];
  const auto size = static_cast<std::uint32_t>(p.mbarriers[decl].size);
  // The phases the array's elements completed in this CTA (each barrier's own component of its clock counts them), and
  // per warp whose role waits on the array the completions it observed (its clock's components of the same barriers;
  // other warps see its phases only through them, a producer through the releases).
  Domain& d = domain_of_cta(slot);
  std::int64_t completed = 0;
  for (std::uint32_t e = 0; e < size; ++e)
    completed += static_cast<std::int64_t>(row(d.acc, barrier_index(slot, base + e))[comp_bar(c.rank, base + e)]);
  const std::uint64_t waiters = waiters_of(slot, decl);
  std::int64_t most = 0;
  std::uint64_t observers = 0;
  for (int i = 0; i < warps_ && i < 64; ++i) {
    if ((waiters >> i & 1) == 0) continue;
    const Clock* vc = vc_of(c.first_warp + static_cast<std::uint32_t>(i));
    std::int64_t seen = 0;
    for (std::uint32_t e = 0; e < size; ++e) seen += static_cast<std::int64_t>(vc[comp_bar(c.rank, base + e)]);
    if (seen > most) most = seen, observers = 0;
    if (seen == most && seen > 0) observers |= std::uint64_t{1} << i;
  }
  // Phases that completed (or, `coming`, were still being filled) after the last one the waiting warps observed: they
  // left their loop early.
  if (most == 0 || most >= completed + (coming ? 1 : 0)) return "";
  const std::string& name = p.mbarriers[decl].name;
  return fmt::format("{} completed {} phases in CTA {} before the exit{}, and the warps that wait on it observed {} of them "
                     "(warps {}): they left their loop while the producer still filled stages. The roles ran different "
                     "numbers of iterations: make every role count the tiles and k-blocks the same way (a producer tail "
                     "would only hide the stages nobody consumes)",
                     name, completed, c.id, coming ? " and this signal's was still to come" : "", most,
                     MbarrierUnit::arrivers_words(observers));
}

std::string HazardUnit::missing(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now, const Clock* vc) const {
  const auto& p = sim_.program();
  const Warp& pw = sim_.warp(prior.warp);
  int now_index = sim_.warp(now.warp).index;
  if (prior.part != 0 && !landed(prior)) {
    // A read still in flight when the writer went on: when the phase that let the writer go on completed without any
    // of the reader's arrivals, though its role releases the buffer on that barrier, the count is the likelier cause
    // (the reader would have released it later, after its covering wait).
    if (now.write && !prior.write)
      if (std::string note = count_note(prior, now); !note.empty())
        return fmt::format("warp {}'s read was still in flight (before its covering wait); {}", pw.index, note);
    switch (prior.via) {
      case Via::kTmaLoad:
      case Via::kClcResponse:
        if (prior.bar != kNone && prior.bar_cta != kNone) {
          // The reader observed the phase the write was issued in (or a later one), which completed without the write's
          // bytes: the phase's expected bytes were met by other writes (or by none), and this write's complete_tx counts
          // toward a later phase.
          const std::uint32_t comp = comp_bar(sim_.cta(prior.bar_cta).rank, prior.bar);
          if (vc[comp] > prior.issue_phase) {
            std::string name = p.mbarrier_layout.element_name(p.mbarriers, prior.bar);
            const std::string& twice = prior.via == Via::kClcResponse && prior.bar_cta < response_notes_.size()
                                           ? response_notes_[prior.bar_cta]
                                           : kNoNote;
            if (!twice.empty())
              return fmt::format("warp {} did wait on {}, for phase {}, but that phase completed while this response was still "
                                 "in flight. {}",
                                 now_index, name, prior.issue_phase, twice);
            return fmt::format("warp {} did wait on {}{}, for phase {}, but that phase completed while this write was still in "
                               "flight: its expected bytes were reached without the write's, whose complete_tx counts toward a "
                               "later phase. The phase's `arrive.expect_tx` counts fewer bytes than the writes that signal {} "
                               "bring ({})",
                               now_index, name, prior.bar_cta == cta ? "" : " (of another CTA)", prior.issue_phase, name,
                               prior.via == Via::kClcResponse
                                   ? "a CLC response brings 16 bytes: `arrive.expect_tx ... tx=16` on its barrier before `clc.try_cancel`"
                                   : "every box of the stage, the slices peers multicast into this CTA included") +
                   mbar_->stage_mismatch_words(pw.cta, prior.bar);
          }
        }
        return fmt::format("that write is still in flight: it completes with the phase of {}{} its complete_tx lands in, and "
                           "warp {} must wait on that barrier for that phase before touching the buffer",
                           p.mbarrier_layout.element_name(p.mbarriers, prior.bar),
                           prior.bar_cta == cta || prior.bar_cta == kNone ? "" : " (of another CTA)", now_index);
      case Via::kTmaStore:
        return fmt::format("the TMA store reads its source until warp {} waits for its bulk group: a `tma.commit` and then a "
                           "`tma.wait N read` that covers that group must come first (in warp {}, ordered before this op)",
                           pw.index, pw.index);
      case Via::kWgmma: {
        // The warpgroup did wait after this wgmma, with an N that left its group in flight (a wait depth off by one).
        std::string depth;
        const TensorUnit::LastWait lw =
            const_cast<Simulator&>(sim_).find<TensorUnit>().last_wait(pw.cta, pw.index / isa::kWarpsPerWarpgroup);
        if (lw.op != ~0u && lw.n > 0 && lw.cycle >= prior.issued) {
          const isa::OpDesc& wd = sim_.op_of(pw, lw.op);
          depth = fmt::format("; warp {}'s latest '{}' (line {}, cycle {}) came after this wgmma but waits only for the groups "
                              "older than its newest {}, and this one's group is among those: a stage may be released after "
                              "a wait that covers the wgmmas reading it (CUTLASS releases stage k - 1 after `wgmma.wait 1` in "
                              "k-block k, with one group in flight; deeper N keeps more stages busy)",
                              pw.index, wd.text, wd.loc.line, lw.cycle, lw.n);
        }
        return fmt::format("the tensor cores read the operand until warp {} waits for its wgmma group: `wgmma.commit` then a "
                           "`wgmma.wait N` that covers it must come before the barrier arrive that releases the buffer (a wgmma "
                           "never committed is covered by no wait){}",
                           pw.index, depth);
      }
      case Via::kUmma:
      case Via::kTmemCp:
        if (std::string note = commit_note(prior, now); !note.empty()) return note;
        return fmt::format("the tensor cores read the operand until a later `umma.commit` of warp {} arrives on a barrier; "
                           "this op must be ordered after a wait on that barrier",
                           pw.index);
      case Via::kCpAsync: {
        // The warp did wait after this copy, with an N that left its group pending (a wait depth off by one, or fewer
        // groups committed than the N counts on: a commit that a path skips).
        std::string depth;
        const LsuUnit::LastWait lw = const_cast<Simulator&>(sim_).find<LsuUnit>().last_wait(prior.warp);
        if (lw.op != ~0u && lw.cycle >= prior.issued && (lw.committed < prior.issued || lw.n > 0)) {
          const isa::OpDesc& wd = sim_.op_of(pw, lw.op);
          depth = fmt::format("; warp {}'s latest '{}' (line {}, cycle {}) came after this copy", pw.index, wd.text, wd.loc.line,
                              lw.cycle);
          if (lw.committed < prior.issued)
            depth += fmt::format(", but no `cp.async.commit` of warp {} closed the copy's group before it: a wait covers "
                                 "committed groups only",
                                 pw.index);
          else
            depth += fmt::format(" but waits only for the groups older than its newest {}, and this copy's group is among "
                                 "those: N counts committed groups, so it must leave pending only the groups of stages not "
                                 "read yet (CUTLASS's sm80 mainloop waits with STAGES - 2 and commits a group every k-block, "
                                 "an empty one when nothing is left to load)",
                                 lw.n);
        }
        // The reader waited on a barrier the copier's cp.async.arrive signals, and that arrive came before this copy: it
        // tracks only the copies issued before it (PTX cp.async.mbarrier.arrive).
        if (now.warp < last_acquired_.size() && prior.warp != now.warp)
          if (auto [bc, bf] = last_acquired_[now.warp]; bc == pw.cta && bf != kNone) {
            const LsuUnit::LastArrive la = const_cast<Simulator&>(sim_).find<LsuUnit>().last_arrive(prior.warp, bf);
            // (the barrier of the buffer's own stage: a reader that waited on another stage's is another mistake)
            const bool same_stage = buffer >= smem_count_ || !p.smems[p.smem_layout.decl_of(buffer)].array ||
                                    !p.mbarriers[p.mbarrier_layout.decl_of(bf)].array ||
                                    element_index(p.smem_layout, buffer) == element_index(p.mbarrier_layout, bf);
            const isa::OpDesc* ad_p = la.op != ~0u ? &sim_.op_of(pw, la.op) : nullptr;
            const isa::OpDesc& copy = sim_.op_of(pw, prior.op);
            // (the arrive written before the copy in the code: one after it, reached late by the reader's stale parity,
            // is another mistake)
            if (ad_p != nullptr && la.cycle <= prior.issued && same_stage && ad_p->loc.file == copy.loc.file &&
                ad_p->loc.line < copy.loc.line) {
              const isa::OpDesc& ad = *ad_p;
              return fmt::format("warp {} waited on {}, which warp {} signals with `{}` (line {}), and that arrive, at cycle "
                                 "{}, came before this copy (line {}, cycle {}): a cp.async.arrive tracks only the copies "
                                 "its warp issued before it (PTX cp.async.mbarrier.arrive), so the phase completed without "
                                 "waiting for this one. Issue the arrive after the stage's copies",
                                 now_index, p.mbarrier_layout.element_name(p.mbarriers, bf), pw.index, ad.text, ad.loc.line,
                                 la.cycle, copy.loc.line, prior.issued);
            }
          }
        return fmt::format("the copy is in flight until warp {} waits for it (`cp.async.commit` then `cp.async.wait N` "
                           "covering its group, or `cp.async.arrive` on a barrier that is waited for){}{}",
                           pw.index, depth,
                           prior.warp == now.warp
                               ? std::string()
                               : fmt::format("; warp {}'s wait covers its own copies only, so a barrier both warps use must "
                                             "then order it before warp {}'s access (`bar.sync 0`, __syncthreads, after the "
                                             "wait: CUTLASS's sm80 mainloop waits with cp_async_wait, then __syncthreads)",
                                             pw.index, now_index));
      }
      case Via::kTmemMma:
        if (std::string note = overlap_note(cta, prior, now, vc); !note.empty()) return note;
        if (std::string note = commit_note(prior, now); !note.empty()) return note;
        return fmt::format("the tensor cores write the accumulator until a later `umma.commit` of warp {} lands on a "
                           "barrier (tcgen05.commit); warp {} must wait on that barrier's phase (the accumulator's 'full' "
                           "barrier) before touching these columns",
                           pw.index, now_index);
      case Via::kTmemLd:
      case Via::kTmemSt: {
        const char* ls = prior.via == Via::kTmemLd ? "ld" : "st";
        // The warp's own later access: no release is involved, its wait must come first.
        if (prior.warp == now.warp)
          return fmt::format("warp {}'s tcgen05.{} is asynchronous until its `tmem.wait {}` (tcgen05.wait::{}), and this op "
                             "of the same warp touches those columns before that wait: wait first",
                             pw.index, ls, ls, ls);
        return fmt::format("warp {}'s tcgen05.{} is asynchronous until its `tmem.wait {}` (tcgen05.wait::{}); that wait must "
                           "come before the arrive that hands the columns on ({})",
                           pw.index, ls, ls, ls,
                           prior.via == Via::kTmemLd ? "CUTLASS waits for the load before releasing the accumulator stage"
                                                     : "a tcgen05.st's data, such as P written over S for the next MMA, is "
                                                       "there only after the wait");
      }
      case Via::kGeneric: break;
    }
  }
  // A barrier component's words: its name, and the CTA when it is another one of the cluster.
  auto barrier_words = [&](std::uint32_t comp, std::string& name, std::string& where) {
    std::uint32_t rel = comp - static_cast<std::uint32_t>(cluster_size_ * warps_);
    std::uint32_t rank = rel / static_cast<std::uint32_t>(bars_), flat = rel % static_cast<std::uint32_t>(bars_);
    name = p.mbarrier_layout.element_name(p.mbarriers, flat);
    where = rank == static_cast<std::uint32_t>(sim_.cta(sim_.warp(now.warp).cta).rank)
                ? ""
                : fmt::format(" of cluster rank {} (another CTA: its completion must reach this one, e.g. bar_cta=, a remote "
                              "arrive, or a cluster barrier)",
                              rank);
  };
  if (landed(prior) && (prior.via == Via::kUmma || prior.via == Via::kTmemCp)) {
    // An operand read: complete for a warp that observed a phase any commit after it landed in; name the
    // first, one on the CTA of the warp that must wait when there is one (a multicast commit lands in several
    // CTAs).
    const auto& commits = state(prior.part)->commits;
    const std::uint32_t own_rank = static_cast<std::uint32_t>(sim_.cta(sim_.warp(now.warp).cta).rank);
    auto here = std::find_if(commits.begin(), commits.end(), [&](const auto& c) {
      return c.first >= static_cast<std::uint32_t>(cluster_size_ * warps_) &&
             (c.first - static_cast<std::uint32_t>(cluster_size_ * warps_)) /
                     static_cast<std::uint32_t>(bars_) ==
                 own_rank;
    });
    auto [comp, clock] = here != commits.end() ? *here : commits.front();
    std::string name, where;
    barrier_words(comp, name, where);
    std::int64_t phase = static_cast<std::int64_t>(clock) - 1;
    return fmt::format("the tensor cores read the operand until a later `umma.commit` of warp {} lands (each commit tracks "
                       "all the thread's earlier tcgen05 ops); the first that did completed phase {} of {}{}, which warp {} "
                       "has not observed (no wait on that phase, or on a phase a later commit of warp {} completed, by it or "
                       "by a warp that then synchronised with it): wait on {} with parity {} first",
                       pw.index, phase, name, where, now_index, pw.index, name, phase & 1);
  }
  if (landed(prior)) {
    if (std::string note = overlap_note(cta, prior, now, vc); !note.empty()) return note;
    std::uint32_t last = state(prior.part)->commits.back().first - static_cast<std::uint32_t>(cluster_size_ * warps_);
    return fmt::format("the accumulator that warp {}'s tcgen05.mma writes is complete only for a warp that observed a "
                       "barrier phase a later `umma.commit` of warp {} arrived on (the latest: {}), and warp {} observed "
                       "none: wait on the accumulator's 'full' barrier (the one the MMA warp commits each tile to) first",
                       pw.index, pw.index, p.mbarrier_layout.element_name(p.mbarriers, last % static_cast<std::uint32_t>(bars_)),
                       now_index);
  }
  if (prior.done_phase >= 0) {
    if (now.write && prior.write)
      if (std::string note = release_ranks_note(cta, buffer, now, -1); !note.empty()) return note;
    std::string name, where;
    barrier_words(prior.comp[0], name, where);
    const std::uint32_t bar_rank =
        (prior.comp[0] - static_cast<std::uint32_t>(cluster_size_ * warps_)) / static_cast<std::uint32_t>(bars_);
    if (!where.empty() && now.write && prior.comp[0] >= static_cast<std::uint32_t>(cluster_size_ * warps_))
      // The earlier write landed in another CTA, whose warps used it: this warp cannot wait on that CTA's barrier.
      return fmt::format("it completed phase {} of {} of cluster rank {}, and warp {} cannot wait on another CTA's barrier "
                         "(undefined behaviour): the warps of rank {} that use the buffer must tell this CTA when they are "
                         "done with it (consumers of a multicast stage release it on the empty barrier of every CTA that "
                         "multicasts into theirs, e.g. `arrive EMPTY cta=R` for each such rank R, with the empty count "
                         "covering all of them), and warp {} waits on that before writing",
                         prior.done_phase, name, bar_rank, now_index, bar_rank, now_index);
    if (prior.done_phase >= 1 && !now.write && vc[prior.comp[0]] == static_cast<Clock>(prior.done_phase))
      // The reader observed the phase before: it reads the buffer's previous contents too late, after the writer refilled
      // it (a release before the read), or it meant the new contents and skipped their wait.
      return fmt::format("it completed phase {} of {}{}, and warp {} observed phase {} last: the buffer no longer holds what "
                         "phase {} brought. If warp {} reads that, it must read before it releases the buffer (the arrive "
                         "that lets the writer refill it comes after this read); if it reads the new contents, wait on {} "
                         "with parity {} first",
                         prior.done_phase, name, where, now_index, prior.done_phase - 1, prior.done_phase - 1, now_index,
                         name, prior.done_phase & 1);
    // The reader's latest wait was on another element of the same barrier array: the write likely names the wrong one.
    std::string other;
    if (now.warp < last_acquired_.size() && prior.epochs == 1 && prior.comp[0] >= static_cast<std::uint32_t>(cluster_size_ * warps_)) {
      auto [bc, bf] = last_acquired_[now.warp];
      const std::uint32_t flat = (prior.comp[0] - static_cast<std::uint32_t>(cluster_size_ * warps_)) % static_cast<std::uint32_t>(bars_);
      const MbarrierUnit& mb = *mbar_;
      if (bc == cta && bf != kNone && bf != flat && mb.decl_of(bf) == mb.decl_of(flat)) {
        // Which side names the wrong stage: the one whose element index differs from the buffer's (when it is an array).
        const std::int64_t bi = buffer < smem_count_ && p.smems[p.smem_layout.decl_of(buffer)].array ? element_index(p.smem_layout, buffer) : -1;
        const std::int64_t wi = element_index(p.mbarrier_layout, flat), ri = element_index(p.mbarrier_layout, bf);
        const std::string waited = p.mbarrier_layout.element_name(p.mbarriers, bf), buf = buffer_name(buffer);
        if (bi >= 0 && wi == bi && ri != bi)
          other = fmt::format(". Warp {}'s latest wait was on {}, but it reads {}, whose write completes on {}: does it wait "
                              "for the stage it reads?",
                              now_index, waited, buf, name);
        else if (bi >= 0 && ri == bi && wi != bi)
          other = fmt::format(". Warp {}'s latest wait was on {}, which does not cover this write: the write into {} completes "
                              "on {} (its bar=); does it name the stage's barrier?",
                              now_index, waited, buf, name);
        else
          other = fmt::format(". Warp {}'s latest wait was on {}, which does not cover this write, which completes on {}: one "
                              "of the two names the wrong stage",
                              now_index, waited, name);
      }
    }
    if (now.write && prior.write && where.empty() &&
        prior.comp[0] >= static_cast<std::uint32_t>(cluster_size_ * warps_))
      if (std::string note =
              unfilled_release_note(now, cta,
                                    (prior.comp[0] - static_cast<std::uint32_t>(cluster_size_ * warps_)) %
                                        static_cast<std::uint32_t>(bars_),
                                    prior.done_phase);
          !note.empty())
        return note;
    return fmt::format("it completed phase {} of {}{}, which warp {} has not observed (no wait on that phase by it, or by a "
                       "warp that then synchronised with it): wait on {} with parity {} first{}",
                       prior.done_phase, name, where, now_index, name, prior.done_phase & 1, other) +
           (other.empty() ? global_hint(prior, now) : "");
  }
  (void)vc;
  std::string wait = prior.via == Via::kWgmma      ? "`wgmma.wait N`"
                     : prior.via == Via::kTmaStore ? "`tma.wait N read`"
                     : prior.via == Via::kCpAsync  ? "`cp.async.wait N`"
                     : prior.via == Via::kTmemLd   ? "`tmem.wait ld`"
                     : prior.via == Via::kTmemSt   ? "`tmem.wait st`"
                                                   : "";
  if (std::string note = now.write && !prior.write ? count_note(prior, now) : ""; !note.empty()) {
    if (!wait.empty()) return fmt::format("its access ended at the covering {} of warp {}; {}", wait, pw.index, note);
    return note;
  }
  if (std::string note = refill_note(cta, buffer, prior, now); !note.empty()) return note;
  // A writer in another CTA of the cluster (a 2-SM pair's MMA into the peer's TMEM, a multicast refill) whose observed
  // release phase had no arrival of the buffer's CTA.
  if (now.write && sim_.warp(now.warp).cta != cta)
    if (std::string note = release_ranks_note(cta, buffer, now, pw.role); !note.empty()) return note;
  if (!wait.empty())
    return fmt::format("its access ended at the covering {} of warp {}, and nothing orders that wait before this op: warp {} "
                       "must release the buffer (arrive on a barrier that warp {} waits on, or a named barrier both use) "
                       "after that wait, not before it",
                       wait, pw.index, pw.index, now_index) +
           global_hint(prior, now);
  if (std::string note = early_release_note(prior, now); !note.empty()) return note;
  if (std::string note = handback_note(cta, buffer, prior, now); !note.empty()) return note;
  if (std::string note = arrive_only_note(prior, now); !note.empty()) return note;
  return fmt::format("nothing orders warp {}'s op before this one: warp {} must arrive on a barrier after its access (an "
                     "mbarrier that warp {} then waits on, or a named barrier both use)",
                     pw.index, pw.index, now_index) +
         global_hint(prior, now);
}

// When the two warps' roles do signal each other through a global word, what that signal needs to order their accesses.
std::string HazardUnit::global_hint(const Rec& prior, const Rec& now) const {
  if (sim_.program().globals.empty()) return "";
  const Warp& pw = sim_.warp(prior.warp);
  const Warp& nw = sim_.warp(now.warp);
  const std::string word = const_cast<Simulator&>(sim_).find<AtomicsUnit>().shared_word(pw.role, nw.role);
  if (word.empty()) return "";
  return fmt::format(". Warp {}'s role writes the global word {} and warp {}'s reads it, but that signal orders nothing "
                     "here: the write must be a release after the access (st.release, an atomic with sem=release, or "
                     "fence.gpu before a relaxed store) and the read an acquire before this op (ld.acquire, spin, an atomic "
                     "with sem=acquire, or fence.gpu after a relaxed load)",
                     pw.index, word, nw.index);
}

std::int64_t HazardUnit::observed_phase(std::uint32_t warp_id, std::uint32_t bc, std::uint32_t bf) const {
  // (its clock's component of the barrier counts the completions it is after)
  return static_cast<std::int64_t>(const_cast<HazardUnit*>(this)->vc_of(warp_id)[comp_bar(sim_.cta(bc).rank, bf)]) - 1;
}

std::vector<const isa::OpDesc*> HazardUnit::release_ops(int role, std::uint32_t decl) const {
  std::vector<const isa::OpDesc*> out;
  if (role < 0) return out;
  for (const auto& d : sim_.program().roles[static_cast<std::size_t>(role)].ops)
    if (d.kind == isa::OpKind::kArrive && d.signals_barrier(static_cast<int>(decl))) out.push_back(&d);
  return out;
}

// A refill (a write after an earlier write whose completion, phase `phase` of element `flat`, no warp
// observed yet) by a writer whose role never waits on that barrier (a producer): the stage was handed back
// before anyone consumed the earlier fill. The release barrier the writer waited on last, and which warps
// completed that phase, through which ops.
std::string HazardUnit::unfilled_release_note(const Rec& now, std::uint32_t cta, std::uint32_t flat,
                                              std::int64_t phase) const {
  const MbarrierUnit& mb = *mbar_;
  const Warp& ww = sim_.warp(now.warp);
  const auto& p = sim_.program();
  if (ww.role < 0 || now.warp >= last_acquired_.size()) return "";
  for (const auto& d : p.roles[static_cast<std::size_t>(ww.role)].ops)
    if (const isa::AttrSlot* a = d.slot(isa::Attr::kBar);
        a != nullptr && a->decl == static_cast<int>(mb.decl_of(flat)) &&
        (d.kind == isa::OpKind::kWait || d.kind == isa::OpKind::kTestWait))
      return "";
  // The writer's latest wait: on the release barrier of the same stage (an element of the same index; a wait
  // on another stage's is told apart elsewhere).
  const auto [bc, bf] = last_acquired_[now.warp];
  const auto& layout = p.mbarrier_layout;
  if (bc != cta || bf == kNone ||
      bf - layout.base[layout.decl_of(bf)] != flat - layout.base[layout.decl_of(flat)])
    return "";
  const std::int64_t seen = observed_phase(now.warp, bc, bf);
  const std::uint64_t mask = mb.phase_arrivers(bc, bf, seen);
  if (seen < 0 || mask == 0 || (mask >> 32) != 0) return "";
  const Cta& c = sim_.cta(cta);
  int role = -1;
  std::vector<int> others;  // warps of that role that arrive on the barrier too but not in that phase
  for (int i = 0; i < 32 && i < p.warps; ++i)
    if (mask >> i & 1) role = sim_.warp(c.first_warp + static_cast<std::uint32_t>(i)).role;
  if (role < 0) return "";
  for (int i = 0; i < 32 && i < p.warps; ++i)
    if (!(mask >> i & 1) && sim_.warp(c.first_warp + static_cast<std::uint32_t>(i)).role == role &&
        mb.arrives_on(c.first_warp + static_cast<std::uint32_t>(i), bf))
      others.push_back(i);
  std::vector<std::string> ops;
  for (const isa::OpDesc* d : release_ops(role, mb.decl_of(bf)))
    ops.push_back(fmt::format("`{}` at line {}", d->text, d->loc.line));
  const std::string full = layout.element_name(p.mbarriers, flat),
                    empty = layout.element_name(p.mbarriers, bf);
  const std::string head = fmt::format(
      "{}warp {} refilled the stage after its wait on {} (phase {}), which completed with the arrivals of warps {} "
      "({}) alone",
      mb.unobserved(cta, flat, phase)
          ? fmt::format("no warp has waited for the earlier fill's completion (phase {} of {}) yet, and ",
                        phase, full)
          : "",
      ww.index, empty, seen, MbarrierUnit::arrivers_words(mask),
      p.roles[static_cast<std::size_t>(role)].name);
  if (!others.empty())
    return fmt::format(
        "{}, while warps {} of that role release it too: the count ({}) is reached before every releasing "
        "warp arrived; it must cover all the warps that release a stage",
        head, fmt::join(others, ","), mb.count_of(bc, bf));
  return fmt::format(
      "{}: the stage was released more often than it was filled (a release that runs twice for one fill, e.g. once "
      "in the k-loop and again after it at a tile's boundary, or a release of a stage not waited for{}). Each fill is "
      "released once, after its consumer's wait on {}; the writer does not wait on {} itself",
      head, ops.size() > 1 ? fmt::format("; the releases: {}", fmt::join(ops, ", ")) : "", full, full);
}

std::string HazardUnit::count_note(const Rec& prior, const Rec& now) const {
  const Warp& rw = sim_.warp(prior.warp);
  if (rw.index >= 32 || rw.role < 0) return "";
  const auto& p = sim_.program();
  const MbarrierUnit& mb = *mbar_;
  const std::uint32_t wcta = sim_.warp(now.warp).cta;
  // The barriers the reader's role arrives on (its code: it would release the buffer there).
  auto releases = [&](std::uint32_t decl) { return !release_ops(rw.role, decl).empty(); };
  // Whether element `bf` of CTA slot `bc` is the barrier: released by the reader's role, its latest phase completed
  // without any of the reader's warps (bits 0..31 of the masks: warps of the barrier's own CTA; 32..63: a peer's remote
  // arrivals). `waited`: the writer's latest wait was on it (otherwise the writer observed its latest phase).
  auto note_on = [&](std::uint32_t bc, std::uint32_t bf, bool waited) -> std::string {
    const int shift = bc == rw.cta ? 0 : 32;
    if (shift != 0 && sim_.cta(bc).cluster_slot != sim_.cta(rw.cta).cluster_slot) return "";
    if (!releases(mb.decl_of(bf))) return "";
    // The phase the writer observed last (its clock's component of the barrier counts the completions it is after).
    const std::int64_t seen = observed_phase(now.warp, bc, bf);
    const std::uint64_t mask = mb.phase_arrivers(bc, bf, seen);
    // The warps whose arrival would have released the read: a wgmma's, any of its warpgroup (each waits for the group).
    const std::uint64_t readers =
        prior.via == Via::kWgmma
            ? ((std::uint64_t{1} << isa::kWarpsPerWarpgroup) - 1) << (rw.index / isa::kWarpsPerWarpgroup * isa::kWarpsPerWarpgroup + shift)
            : std::uint64_t{1} << (rw.index + shift);
    if (mask == 0 || (mask & readers) != 0) return "";
    // A barrier found by the search below: only one the reader's warps do arrive on (a stage's own barrier, not another
    // stage's that other warps release).
    if (!waited && (mb.recent_arrivers(bc, bf) & readers) == 0) return "";
    std::string name = p.mbarrier_layout.element_name(p.mbarriers, bf);
    if (shift != 0) name += fmt::format(" of CTA {}", sim_.cta(bc).id);
    if (std::string twice = mb.twice_words(bc, bf, seen); !twice.empty())
      return fmt::format(
          "warp {}'s role releases the buffer on {} too, but the phase of {} that warp {} {} (phase {}) completed "
          "with the arrivals of warps {} alone, so the writer went on while warp {} still read{}",
          rw.index, name, name, sim_.warp(now.warp).index, waited ? "waited on last" : "observed", seen,
          MbarrierUnit::arrivers_words(mask), rw.index, twice);
    return fmt::format("warp {}'s role releases the buffer on {} too, but the phase of {} that warp {} {} (phase {}) completed "
                       "with the arrivals of warps {} alone (count {}): the count is reached before every releasing warp "
                       "arrived, so the writer went on while warp {} still read. More threads arrive on {} per phase than its "
                       "count (the arrivals of all the warps that release a stage{}), or those warps release different phases",
                       rw.index, name, name, sim_.warp(now.warp).index, waited ? "waited on last" : "observed", seen,
                       MbarrierUnit::arrivers_words(mask), mb.count_of(bc, bf), rw.index, name,
                       shift != 0 ? ", the peer CTA's remote arrivals included" : "");
  };
  if (now.warp < last_acquired_.size())
    if (auto [bc, bf] = last_acquired_[now.warp]; bc != kNone && bf != kNone)
      if (std::string n = note_on(bc, bf, true); !n.empty()) return n;
  // The writer's latest wait was elsewhere (an MMA warp waits for its stage after it waited for the accumulator to be
  // handed back): any barrier the reader's role arrives on, in the reader's or the writer's CTA, and the phase of it the
  // writer observed last.
  const std::uint32_t ctas[2] = {wcta, rw.cta};
  for (std::uint32_t k = 0; k < (wcta == rw.cta ? 1u : 2u); ++k) {
    const std::uint32_t c = ctas[k];
    for (std::uint32_t d = 0; d < p.mbarriers.size(); ++d) {
      if (!releases(d)) continue;
      for (int e = 0; e < p.mbarriers[d].size; ++e) {
        const std::uint32_t f = p.mbarrier_layout.base[d] + static_cast<std::uint32_t>(e);
        if (std::string n = note_on(c, f, false); !n.empty()) return n;
      }
    }
  }
  return "";
}

std::string HazardUnit::release_ranks_note(std::uint32_t cta, std::uint32_t buffer, const Rec& now, int reader_role) const {
  if (now.warp >= last_acquired_.size()) return "";
  const auto& p = sim_.program();
  const MbarrierUnit& mb = *mbar_;
  const Cta& dcta = sim_.cta(cta);  // the buffer's CTA, whose warps use it
  const std::uint32_t wcta = sim_.warp(now.warp).cta;
  if (sim_.cta(wcta).cluster_slot != dcta.cluster_slot) return "";
  // A barrier the roles release with arrives (an empty barrier), not one the writes complete; with a reader's role, one
  // that role arrives on.
  auto released = [&](std::uint32_t decl) {
    for (int r = 0; r < static_cast<int>(p.roles.size()); ++r)
      if ((reader_role < 0 || r == reader_role) && !release_ops(r, decl).empty()) return true;
    return false;
  };
  const std::uint32_t bit = std::uint32_t{1} << (dcta.rank & 31);
  // The phase of element `bf` of CTA slot `bc` the writer observed last, completed without any warp of the buffer's CTA.
  auto note_on = [&](std::uint32_t bc, std::uint32_t bf, bool waited) -> std::string {
    if (bc == kNone || bf == kNone || !released(mb.decl_of(bf))) return "";
    const Cta& bcta = sim_.cta(bc);
    const std::int64_t seen = observed_phase(now.warp, bc, bf);
    const std::uint32_t ranks = mb.phase_arriver_ranks(bc, bf, seen);
    if (ranks == 0 || (ranks & bit) != 0) return "";
    std::vector<int> list;
    for (int r = 0; r < 32; ++r)
      if (ranks >> r & 1) list.push_back(r);
    const std::string name = p.mbarrier_layout.element_name(p.mbarriers, bf) + (bc == wcta ? "" : fmt::format(" of CTA {}", bcta.id));
    const std::string head =
        fmt::format("warp {} {} {} (phase {}), and that phase completed with the arrivals of cluster rank(s) {} alone (count "
                    "{}), none of rank {} (CTA {}), whose warps use {}",
                    sim_.warp(now.warp).index, waited ? "waited last on" : "observed", name, seen, fmt::join(list, ","),
                    mb.count_of(bc, bf), dcta.rank, dcta.id, buffer_name(buffer));
    if (mb.recent_arriver_ranks(bc, bf) & bit)
      return head + fmt::format(": rank {} does release it, later. More CTAs arrive on {} per phase than its count, so the "
                                "phase completes before every CTA that uses the stage released it (a stage multicast into N "
                                "CTAs is released by each of them: the count covers N times each one's arrivals)",
                                dcta.rank, p.mbarriers[mb.decl_of(bf)].name);
    return head + fmt::format(", and rank {} arrived on it in none of its recent phases: its warps do not release {}. A CTA "
                              "releases the empty barrier of every CTA whose loads or MMAs write its buffers, itself and the "
                              "CTAs that multicast into it or a 2-SM pair's leader (`arrive EMPTY cta=R` for each such rank R, "
                              "with the count covering all of them); where it does, check the ranks its release names",
                              dcta.rank, name);
  };
  auto [lc, lf] = last_acquired_[now.warp];
  if (std::string n = note_on(lc, lf, true); !n.empty()) return n;
  // The writer's latest wait was elsewhere (an MMA warp waits for its stage after the accumulator's empty barrier): the
  // barriers of its own CTA that the reader's role releases.
  if (reader_role < 0) return "";
  for (std::uint32_t d = 0; d < p.mbarriers.size(); ++d) {
    if (!released(d)) continue;
    for (int e = 0; e < p.mbarriers[d].size; ++e) {
      const std::uint32_t f = p.mbarrier_layout.base[d] + static_cast<std::uint32_t>(e);
      if (wcta == lc && f == lf) continue;
      if (std::string n = note_on(wcta, f, false); !n.empty()) return n;
    }
  }
  return "";
}

std::string HazardUnit::early_release_note(const Rec& prior, const Rec& now) const {
  if (now.warp >= last_acquired_.size()) return "";
  auto [bc, bf] = last_acquired_[now.warp];
  if (bc == kNone || bf == kNone) return "";
  const Warp& pw = sim_.warp(prior.warp);
  if (pw.index >= 32 || pw.role < 0) return "";
  const int shift = bc == pw.cta ? 0 : 32;
  if (shift != 0 && sim_.cta(bc).cluster_slot != sim_.cta(pw.cta).cluster_slot) return "";
  const std::int64_t seen = observed_phase(now.warp, bc, bf);
  // (bit 32 + i is warp i of any peer: the peer's rank must have arrived too)
  if ((mbar_->phase_arrivers(bc, bf, seen) >> (pw.index + shift) & 1) == 0 ||
      (mbar_->phase_arriver_ranks(bc, bf, seen) >> (sim_.cta(pw.cta).rank & 31) & 1) == 0)
    return "";
  // The release ops of the earlier warp's role on that barrier (one named with its line; several counted).
  const auto& p = sim_.program();
  const std::vector<const isa::OpDesc*> arrives = release_ops(pw.role, mbar_->decl_of(bf));
  const isa::OpDesc& access = sim_.op_of(pw, prior.op);
  std::string which = arrives.size() == 1 ? fmt::format(" (`{}` at line {})", arrives[0]->text, arrives[0]->loc.line) : "";
  std::string name = p.mbarrier_layout.element_name(p.mbarriers, bf);
  if (shift != 0) name += fmt::format(" of CTA {}", sim_.cta(bc).id);
  return fmt::format("warp {} did release the buffer: it arrived on {}{} in the phase warp {} waited for (phase {}), but "
                     "before its access at line {}, so that release does not cover it. Move the arrive after the buffer's "
                     "last use (for a buffer a TMA store then reads, after the `tma.wait N read` that covers the store)",
                     pw.index, name, which, sim_.warp(now.warp).index, seen, access.loc.line);
}

std::string HazardUnit::arrive_only_note(const Rec& prior, const Rec& now) const {
  const auto& nb = const_cast<Simulator&>(sim_).find<NamedBarrierUnit>();
  const NamedBarrierUnit::LastUse last = nb.last_use_of(now.warp);
  const Warp& nw = sim_.warp(now.warp);
  const Warp& pw = sim_.warp(prior.warp);
  if (last.id < 0 || last.wait || pw.cta != nw.cta || pw.role < 0 || !nb.warp_uses(prior.warp, last.id)) return "";
  const isa::OpDesc& d = sim_.op_of(nw, last.op);
  return fmt::format("warp {}'s latest named-barrier op is `{}` (line {}), which arrives without waiting: it orders warp {}'s "
                     "earlier accesses before the warps that then wait on barrier {}, and warp {} after nothing. Warp {} uses "
                     "barrier {} too: the side that must wait for the other's accesses before it goes on (here warp {}, "
                     "before it {}) needs `bar.sync {}`",
                     nw.index, d.text, d.loc.line, nw.index, last.id, nw.index, pw.index, last.id, nw.index,
                     now.write ? "writes" : "reads", last.id);
}

// A st.shared over what a warp that never writes the buffer read (data another warp handed it through shared memory):
// the reader must hand the buffer back after its read; the barrier that handed the data over does not.
std::string HazardUnit::handback_note(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now) const {
  if (!now.write || prior.write || now.via != Via::kGeneric || !prior.handoff || prior.warp == now.warp) return "";
  const Warp& pw = sim_.warp(prior.warp);
  const Warp& nw = sim_.warp(now.warp);
  const std::string buf = buffer_name(buffer);
  std::string over;
  const auto& nb = const_cast<Simulator&>(sim_).find<NamedBarrierUnit>();
  if (const NamedBarrierUnit::LastUse last = nb.last_use_of(now.warp);
      last.id >= 0 && !last.wait && pw.cta == nw.cta && nb.warp_uses(prior.warp, last.id))
    over = fmt::format(" (warp {}'s `{}` at line {} hands the data over to warp {}; it does not hand the buffer back)", nw.index,
                       sim_.op_of(nw, last.op).text, sim_.op_of(nw, last.op).loc.line, pw.index);
  const std::string reads = prior.reads_more
                                ? fmt::format("warp {} reads other warps' parts of {} (its ld.shared takes more bytes than its "
                                              "own st.shared wrote there)",
                                              pw.index, buf)
                                : fmt::format("warp {} never writes {}: it reads what other warps wrote there with st.shared",
                                              pw.index, buf);
  return fmt::format("{}, and nothing tells warp {} that it has read it{}. After its read (line {}) warp {} must arrive on a "
                     "barrier that warp {} waits on before it writes {} again: a second named barrier (`bar.arrive ID` in the "
                     "reader after its read, `bar.sync ID` in the writer before its write) or an mbarrier; or give the "
                     "hand-off two buffers",
                     reads, nw.index, over, sim_.op_of(pw, prior.op).loc.line, pw.index, nw.index, buf);
}

std::string HazardUnit::refill_note(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now) const {
  if (!now.write || now.via != Via::kCpAsync || prior.write || prior.via != Via::kGeneric) return "";
  const LsuUnit::LastWait lw = const_cast<Simulator&>(sim_).find<LsuUnit>().last_wait(now.warp);
  for (const Rec& r : buffers_[cta][buffer].reads) {
    if (r.warp != now.warp || r.write || r.op != prior.op || (lw.op != ~0u && r.issued < lw.cycle)) continue;
    const isa::OpDesc& write = sim_.op_of(sim_.warp(now.warp), now.op);
    // The same accesses come from a ring index off by one and from a refill of the right stage issued before the barrier
    // that ends the other warps' reads of it (a loop that loads first): which one, the stage indices alone tell.
    return fmt::format("warp {} itself read {} with that op at cycle {}, since its latest `cp.async.wait`, and now refills it "
                       "(`{}`, line {}). Either the refill writes the stage this k-block reads, a ring index error: in a ring "
                       "of STAGES with STAGES - 1 in flight, k-block k reads stage k % STAGES and refills the stage read in "
                       "k-block k - 1, (k + STAGES - 1) % STAGES (a barrier between the reads and the refill would only hide "
                       "it: the stage read next is then never loaded). Or it is that stage of k-block k - 1, refilled before "
                       "the barrier that ends the other warps' reads of it (warp {} read it at line {}): CUTLASS's sm80 "
                       "mainloop refills only after `cp_async_wait` and `__syncthreads` (a `bar.sync` all readers reach "
                       "after their reads)",
                       sim_.warp(now.warp).index, buffer_name(buffer), r.issued, write.text, write.loc.line,
                       sim_.warp(prior.warp).index, sim_.op_of(sim_.warp(prior.warp), prior.op).loc.line);
  }
  return "";
}

std::string HazardUnit::commit_note(const Rec& prior, const Rec& now) const {
  if (now.warp >= last_acquired_.size()) return "";
  auto [bc, bf] = last_acquired_[now.warp];
  if (bc == kNone || bf == kNone) return "";
  auto [sw, sop] = mbar_->last_phase_signal(bc, bf);
  if (sw == ~0u) return "";
  const auto& p = sim_.program();
  const Warp& mw = sim_.warp(prior.warp);
  const Warp& signaller = sim_.warp(sw);
  const isa::OpDesc& sd = sim_.op_of(signaller, sop);
  const isa::OpDesc& mma = sim_.op_of(mw, prior.op);
  const std::string name = p.mbarrier_layout.element_name(p.mbarriers, bf);
  const int now_index = sim_.warp(now.warp).index;
  // (an accumulator's reader only: a stage's empty barrier is committed every k-block, rightly)
  if (sd.kind == isa::OpKind::kUmmaCommit && sw == prior.warp && sd.loc.file == mma.loc.file && sd.loc.line > mma.loc.line &&
      (now.via == Via::kTmemLd || now.via == Via::kTmemSt) && same_loop(mw.role, prior.op, sop))
    // A commit after the MMA in the code, in the innermost loop that holds the MMA: it commits every pass (a k-block's),
    // so the barrier completes a phase per pass and the wait returned on an earlier pass's commit.
    return fmt::format("warp {} did wait on {}, whose latest phase was completed by '{}' at line {} (warp {}), an earlier pass "
                       "of the loop that holds this umma (line {}): that commit runs every pass, so {} completes a phase per "
                       "pass and a wait on it returns before the last umma it should cover. Commit to {} once, after the "
                       "loop (an accumulator's 'full' barrier: once per tile, after the k-loop)",
                       now_index, name, sd.text, sd.loc.line, signaller.index, mma.loc.line, name, name);
  if (sd.kind == isa::OpKind::kUmmaCommit && sw == prior.warp && sd.loc.file == mma.loc.file && sd.loc.line < mma.loc.line)
    // The MMA's write is still in flight, so no commit of its thread after it has landed: the commit that completed the
    // phase came before it, and it stands before the MMA in the code (one after it would be an earlier tile's: a stale
    // parity, which other notes name).
    return fmt::format("warp {} did wait on {}, whose latest phase was completed by '{}' at line {} (warp {}), but warp {} "
                       "issued that commit before this umma (line {}): a `umma.commit` tracks only the tcgen05 ops its thread "
                       "issued before it (tcgen05.commit). Commit to {} after the umma it must cover (an accumulator's: after "
                       "the tile's last umma)",
                       now_index, name, sd.text, sd.loc.line, signaller.index, mw.index, mma.loc.line, name);
  // A plain arrive by the MMA's own thread, or its role's (one that signals its accumulator instead of committing); a
  // barrier other warps complete has nothing to do with the accumulator (the generic words ask for its wait).
  if (sd.kind != isa::OpKind::kArrive || (sw != prior.warp && signaller.role != mw.role)) return "";
  std::vector<std::string> commits;  // where the MMA's role commits instead
  for (const isa::OpDesc& d : p.roles[mw.role].ops)
    if (d.kind == isa::OpKind::kUmmaCommit) commits.push_back(fmt::format("'{}' at line {}", d.text, d.loc.line));
  return fmt::format("warp {} did wait on {}, whose latest phase was completed by the plain '{}' at line {} (warp {}): an "
                     "mbarrier arrive orders nothing of the tensor cores' work, which is complete only at a `umma.commit` of "
                     "warp {} after the umma{}. Complete {} with `umma.commit {}` after the tile's last umma instead of the "
                     "arrive",
                     now_index, name, sd.text, sd.loc.line, signaller.index, mw.index,
                     commits.empty() ? std::string()
                                     : fmt::format(" (its commits: {}, none on a barrier warp {} waited on last)",
                                                   fmt::join(commits, ", "), now_index),
                     name, name);
}

bool HazardUnit::same_loop(int role, std::uint32_t op_a, std::uint32_t op_b) const {
  if (role < 0) return false;
  const auto& code = sim_.program().roles[static_cast<std::size_t>(role)].code;
  auto index_of = [&](std::uint32_t op) -> std::int64_t {
    for (std::size_t i = 0; i < code.size(); ++i)
      if (code[i].opc == isa::Opc::kOp && code[i].a == op) return static_cast<std::int64_t>(i);
    return -1;
  };
  const std::int64_t a = index_of(op_a), b = index_of(op_b);
  if (a < 0 || b < 0) return false;
  // The innermost loop around `a`: the backward jump whose span [target, jump] holds it with the latest target.
  std::int64_t head = -1, tail = -1;
  for (std::size_t j = 0; j < code.size(); ++j) {
    const auto target = static_cast<std::int64_t>(code[j].a);
    if (code[j].opc == isa::Opc::kJump && target <= a && a < static_cast<std::int64_t>(j) && target > head)
      head = target, tail = static_cast<std::int64_t>(j);
  }
  return head >= 0 && head <= b && b < tail;
}

std::string HazardUnit::named_note(const Rec& prior, const Rec& now) const {
  const NamedBarrierUnit& nb = const_cast<Simulator&>(sim_).find<NamedBarrierUnit>();
  for (auto [x, y] : {std::pair{prior.warp, now.warp}, std::pair{now.warp, prior.warp}}) {
    if (x >= last_named_.size() || x == y) continue;
    auto [c, id] = last_named_[x];
    const Warp& wx = sim_.warp(x);
    const Warp& wy = sim_.warp(y);
    if (c == kNone || c != wx.cta || c != wy.cta) continue;
    const std::vector<int>& use = nb.last_use(c, static_cast<int>(id));
    const bool has_x = std::find(use.begin(), use.end(), wx.index) != use.end();
    const bool has_y = std::find(use.begin(), use.end(), wy.index) != use.end();
    if (!has_x || has_y || !nb.warp_uses(y, static_cast<int>(id))) continue;
    return fmt::format(". Note: the latest use of bar {} that warp {} waited on gathered warps {} alone ({} threads), while "
                       "warp {}'s role uses bar {} too: warps meant to meet there came in different uses (a threads= smaller "
                       "than the threads that sync on it together, or two groups of warps sharing one id: give each group "
                       "its own)",
                       id, wx.index, fmt::join(use, ","), nb.last_use_threads(c, static_cast<int>(id)), wy.index, id);
  }
  return "";
}

void HazardUnit::report(std::uint32_t cta, std::uint32_t buffer, const Rec& prior, const Rec& now, const Clock* vc) {
  std::string buf = buffer_name(buffer);
  if (cta != sim_.warp(now.warp).cta) buf += fmt::format(" of CTA {}", sim_.cta(cta).id);  // (a multicast or remote write)
  std::string kind = now.write && prior.write ? "WAW" : now.write ? "WAR" : "RAW";
  std::string title = kind == "RAW"   ? "read before the write is complete (RAW)"
                      : kind == "WAR" ? "buffer overwritten while still read (WAR)"
                                      : "unordered writes (WAW)";
  std::string what = kind == "RAW"   ? fmt::format("{} reads {} while {} may still write it", op_words(now), buf, op_words(prior))
                     : kind == "WAR" ? fmt::format("{} is overwritten by {} while {} may still read it", buf, op_words(now),
                                                   op_words(prior))
                     // Two issues of one op by one warp (a ring's stage written again): told apart by their cycles.
                     : prior.op == now.op && prior.warp == now.warp
                         ? fmt::format("{} is written by {}, issued at cycle {}, while its earlier issue at cycle {} may still "
                                       "write it", buf, op_words(now), now.issued, prior.issued)
                         : fmt::format("{} is written by {} while {} may still write it", buf, op_words(now), op_words(prior));
  // A TMEM access spans chunks (an MMA's accumulator: N columns): the columns each access still in flight covers.
  if (buffer >= tmem_base_)
    for (const Rec* r : {&prior, &now})
      if (const PartState* ps = state(r->part);
          ps != nullptr && ps->buffer >= tmem_base_ && ps->buffer_end != ~0u && ps->buffer_end > ps->buffer + 1)
        what += fmt::format(" (line {} {} TMEM columns {}..{})", sim_.op_of(sim_.warp(r->warp), r->op).loc.line,
                            r->write ? "writes" : "reads", (ps->buffer - tmem_base_) * kTmemChunk,
                            (ps->buffer_end - tmem_base_) * kTmemChunk - 1);
  // A reader whose latest wait passed a fresh barrier at once (parity 1 before phase 0) did wait, for nothing: when it
  // read what nothing had written yet (a WAR at the first write: its wait at that read) or what is still being written
  // (a RAW: its wait now), that wait is the cause, not a missing one. Only a wait on the barrier the write completes on
  // counts, or, for a write that names none, on a barrier the writer's role signals.
  const MbarrierUnit& mb = *mbar_;
  const Rec& reader = kind == "RAW" ? now : prior;
  const Rec& writer = kind == "RAW" ? prior : now;
  auto [skip_bar, skip_op] = kind == "RAW" ? mb.passed_before_phase0(now.warp)
                             : kind == "WAR" && prior.unwritten ? std::pair{prior.skip_bar, prior.skip_op}
                                                                : std::pair{kNone, 0u};
  const bool relevant = skip_bar != kNone && skipped_write(skip_bar, reader, writer);
  const std::string skipped = relevant ? mb.before_phase0_words(reader.warp, skip_bar, skip_op) : std::string();
  std::string why;
  if (!skipped.empty()) {
    why = kind == "WAR" ? fmt::format("nothing had written {} when warp {} read it, so it read before the first write: {}", buf,
                                      sim_.warp(prior.warp).index, skipped)
                        : skipped;
  } else if (std::string stage = kind == "WAR" && prior.unwritten ? tmem_stage_note(cta, buffer, prior) : std::string();
             !stage.empty()) {
    why = stage;
  } else if (std::string again = kind == "WAR" ? free_pass_again(prior, now) : std::string();
             !again.empty()) {
    why = again;
  } else {
    why = missing(cta, buffer, prior, now, vc);
    // A read of what nothing had written yet, then the first write: the reader did not wait for the writer (the
    // missing order is write-then-read, whatever the WAR's own advice about releasing the buffer says).
    if (kind == "WAR" && prior.unwritten)
      why += fmt::format(". Note: nothing had written {} when warp {} read it, so it read before the first write: it must "
                         "wait for the write before reading ({})",
                         buf, sim_.warp(prior.warp).index,
                         now.via == Via::kTmemMma ? "on the barrier the MMA's umma.commit arrives on, before its tmem.ld"
                                                  : "on the barrier the write completes on, or one its writer arrives on after it");
  }
  sim_.ub(now.warp, now.op, title, fmt::format("{}; {}{}", what, why, named_note(prior, now)), true);
}

// A WAR whose writer's latest wait on a barrier the reader's role releases returned at once on it, fresh, a
// second time.
std::string HazardUnit::free_pass_again(const Rec& reader, const Rec& writer) const {
  const int role = sim_.warp(reader.warp).role;
  for (std::uint32_t d = 0; d < sim_.program().mbarriers.size(); ++d)
    if (!release_ops(role, d).empty())
      if (std::string w = mbar_->free_pass_again_words(writer.warp, d); !w.empty()) return w;
  return "";
}

std::string HazardUnit::tmem_stage_note(std::uint32_t cta, std::uint32_t buffer, const Rec& reader) const {
  if (buffer < tmem_base_ || !tracks_tmem_) return "";
  // The chunks whose accumulator writes the reader is ordered after now (the stage its waits covered).
  const Clock* vc = const_cast<HazardUnit*>(this)->vc_of(reader.warp);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;  // columns [first, last]
  for (std::uint32_t c = 0; c < kTmemChunks; ++c) {
    const Buffer& b = buffers_[cta][tmem_base_ + c];
    const bool covered = std::any_of(b.writes.begin(), b.writes.end(),
                                     [&](const Rec& w) { return w.via == Via::kTmemMma && ordered(w, vc); });
    if (!covered) continue;
    if (!ranges.empty() && ranges.back().second + 1 == c * kTmemChunk)
      ranges.back().second = c * kTmemChunk + kTmemChunk - 1;
    else
      ranges.push_back({c * kTmemChunk, c * kTmemChunk + kTmemChunk - 1});
  }
  if (ranges.empty()) return "";
  const std::uint32_t col = (buffer - tmem_base_) * kTmemChunk;
  for (auto [a, z] : ranges)
    if (a <= col && col <= z) return "";
  std::vector<std::string> words;
  for (auto [a, z] : ranges) words.push_back(fmt::format("{}..{}", a, z));
  std::string waited;
  if (reader.warp < last_acquired_.size())
    if (auto [bc, bf] = last_acquired_[reader.warp]; bc != kNone && bf != kNone)
      waited = fmt::format(" (its latest wait: {})", sim_.program().mbarrier_layout.element_name(sim_.program().mbarriers, bf));
  const int r = sim_.warp(reader.warp).index;
  return fmt::format("warp {} is ordered after the accumulator writes to TMEM columns {}, the stage its waits covered{}, but it "
                     "read columns {}..{}, which nothing had written then: its tmem= address names another accumulator stage "
                     "than the barrier it waited on (the columns of stage a start at a x the stage's width)",
                     r, fmt::join(words, ", "), waited, col, col + kTmemChunk - 1);
}

// An MMA in flight over columns of another accumulator (another stage, or another MMA's) that the reader waited for: the
// two overlap in TMEM.
std::string HazardUnit::overlap_note(std::uint32_t cta, const Rec& prior, const Rec& now, const Clock* vc) const {
  const PartState* mine = state(prior.part);
  if (now.write || mine == nullptr || mine->buffer < tmem_base_ || mine->buffer_end == ~0u) return "";
  auto columns = [&](const PartState& ps) {
    return std::pair{(ps.buffer - tmem_base_) * kTmemChunk, (ps.buffer_end - tmem_base_) * kTmemChunk - 1};
  };
  const auto [a0, a1] = columns(*mine);
  for (std::uint32_t c = tmem_base_; c < buffers_[cta].size(); ++c)
    for (const Rec& w : buffers_[cta][c].writes) {
      const PartState* other = state(w.part);
      if (w.via != Via::kTmemMma || other == nullptr || other == mine || other->buffer_end == ~0u || !ordered(w, vc)) continue;
      if (w.op == prior.op && other->buffer == mine->buffer) continue;  // the same accumulator, written again
      const auto [b0, b1] = columns(*other);
      if (b1 < a0 || a1 < b0) continue;
      const isa::OpDesc& in_flight = sim_.op_of(sim_.warp(prior.warp), prior.op);
      const isa::OpDesc& waited = sim_.op_of(sim_.warp(w.warp), w.op);
      return fmt::format("the MMA at line {} writes TMEM columns {}..{}, and warp {} waited for the accumulator at "
                         "columns {}..{} ({}line {}): the two overlap at columns {}..{}. Two accumulators in use at once (the "
                         "stages of an accumulator ring, or two MMAs' accumulators) need columns of their own: stage a of a "
                         "ring of N-column stages starts at a x N (or further), not closer",
                         in_flight.loc.line, a0, a1, sim_.warp(now.warp).index, b0, b1,
                         w.op == prior.op ? "the same MMA at another address, " : "the MMA at ", waited.loc.line,
                         std::max(a0, b0), std::min(a1, b1));
    }
  return "";
}

bool HazardUnit::skipped_write(std::uint32_t skip_bar, const Rec& reader, const Rec& writer) const {
  if (writer.bar != kNone)
    return writer.bar == skip_bar && (writer.bar_cta == kNone || writer.bar_cta == sim_.warp(reader.warp).cta);
  const int decl = static_cast<int>(mbar_->decl_of(skip_bar));
  for (const auto& d : sim_.program().roles[sim_.warp(writer.warp).role].ops)
    if (d.signals_barrier(decl)) return true;
  return false;
}

void HazardUnit::report_read_before_first_write(std::uint32_t cta, std::uint32_t buffer, const Rec& reader, const Rec& writer) {
  std::string buf = buffer_name(buffer);
  if (cta != sim_.warp(reader.warp).cta) buf += fmt::format(" of CTA {}", sim_.cta(cta).id);
  // Reported at the reader's op (where the fix goes), at the cycle of the first write that shows it.
  sim_.ub(reader.warp, reader.op, "read before the first write",
          fmt::format("{} read {} at cycle {}, before anything had written it; its first write is {}, issued at cycle {} (ordered "
                      "after that read, so not a race: the read took what the buffer held before the kernel wrote it). {}",
                      op_words(reader), buf, reader.issued, op_words(writer), writer.issued,
                      mbar_->before_phase0_words(reader.warp, reader.skip_bar, reader.skip_op)),
          true);
}

// A read of a shared-memory element that nothing of its CTA has written: which elements of its array writes reached
// so far (a ring index that skips a stage leaves one unwritten and refills another while it is read). A warning, once
// per array, not a stop: the same accesses come from a correct mainloop that restarts its ring per tile and reads the
// next stage's fragments after the last k-tile, unused (CUTLASS's sm80 mainloop with fewer k-tiles than stages, in a
// persistent loop); whether the data is used, the simulator cannot tell.
void HazardUnit::note_unwritten_read(std::uint32_t cta, std::uint32_t buffer, const Rec& reader) {
  const auto& p = sim_.program();
  const std::uint32_t decl = p.smem_layout.decl_of(buffer);
  if (decl < unwritten_noted_.size() && unwritten_noted_[decl]) return;
  if (decl >= unwritten_noted_.size()) unwritten_noted_.resize(p.smems.size(), false);
  unwritten_noted_[decl] = true;
  std::string buf = buffer_name(buffer);
  if (cta != sim_.warp(reader.warp).cta) buf += fmt::format(" of CTA {}", sim_.cta(cta).id);
  std::string others;
  if (p.smems[decl].array) {
    std::vector<std::string> written, refilled;
    const std::uint32_t first = p.smem_layout.base[decl];
    for (std::uint32_t e = first; e < first + static_cast<std::uint32_t>(p.smems[decl].size); ++e) {
      if (buffers_[cta][e].written) written.push_back(p.smem_layout.element_name(p.smems, e));
      if (buffers_[cta][e].refilled) refilled.push_back(p.smem_layout.element_name(p.smems, e));
    }
    others = fmt::format(" Writes reached {} only, and {} came round again (written after a read): the ring's writes skip "
                         "{}. Check the stage index its writes use: a refill that writes the stage being read (the same "
                         "k-block's) leaves another stage never written, and a barrier between the reads and that refill "
                         "only hides it",
                         fmt::join(written, ", "), fmt::join(refilled, ", "), buf);
  }
  const isa::OpDesc& d = sim_.op_of(sim_.warp(reader.warp), reader.op);
  unwritten_warnings_.push_back(
      fmt::format("{}: read of unwritten shared memory: {} reads {} at cycle {}, but nothing of its CTA has written it: "
                  "the read takes what the shared memory held before the kernel.{}. If the data is never used (a "
                  "mainloop's prefetch of the next stage after its last k-tile) this is harmless",
                  d.loc.str(), op_words(reader), buf, reader.issued, others));
}

}  // namespace smpipe::models
