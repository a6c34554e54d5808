// Synchronisation through global memory: words that CTAs share (flags, counters, locks), read and written
// at the L2 by atomics (atom, red), strong loads and stores (ld.acquire/relaxed, st.release/relaxed),
// spin-waits on a word, and grid.sync (the barrier of every thread of the grid, cooperative launch).
//
// Timing follows the mechanism: a request reaches the L2 half a round trip after its issue, where words
// change in the order requests arrive (same-word atomics one after another); a result comes back in the
// other half. A spinning warp polls back to back: its polls reach the L2 one round trip apart, and it
// sees a new value at its first poll after the change. grid.sync is what CUDA's cooperative groups do: a
// CTA barrier, one atomic per CTA on a counter, a spin on the counter, a CTA barrier.
//
// Ordering (for the hazard checker): an acquire that reads a value written by a release, or by a
// read-modify-write after it (a release sequence, PTX ISA memory model), orders the releasing warp's
// earlier accesses before the acquiring warp's later ones. Relaxed operations order nothing.
#pragma once

#include <unordered_map>
#include <vector>

#include "models/gpu/unit.hpp"
#include "models/memory/hazards.hpp"

namespace smpipe::models {

class TmaUnit;

class LsuUnit;

class AtomicsUnit : public Unit {
 public:
  explicit AtomicsUnit(Simulator& sim);
  std::string_view name() const override { return "atomics"; }
  static std::span<const isa::OpKind> accepted();
  std::span<const isa::OpKind> ops() const override { return accepted(); }
  void connect() override;
  OpResult execute(OpContext& ctx) override;
  void complete(std::uint32_t target, std::uint64_t payload) override;
  void cta_started(std::uint32_t slot) override;
  void cta_exiting(std::uint32_t slot) override;
  void warp_exited(std::uint32_t warp_id) override;
  bool master_alive(std::uint32_t slot) const;
  // Reports: a global word (its declaration's name) that role `writer_role`'s code writes and `reader_role`'s reads;
  // empty when none.
  std::string shared_word(int writer_role, int reader_role) const;
  std::string describe_wait(const Warp& w) const override;
  void explain_wait(const Warp& w, WaitExplanation& e) const override;
  std::string describe_poll(const Warp& w, const isa::OpDesc& d) const override;
  void add_warnings(std::vector<std::string>& warnings) const override;

 private:
  enum Event : std::uint64_t { kArrive, kApply, kPoll, kGridArrive, kGridApply };
  enum class Cond : std::uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
  // A request on its way to the L2.
  struct Request {
    isa::OpKind kind;
    std::uint32_t word = 0;
    std::uint32_t warp = 0;  // warp id of the issuer
    std::uint32_t op = 0;
    std::int64_t cta_id = 0;  // the issuer, for reports (its slot may be reused before the request lands)
    int warp_index = 0, role = 0;
    int lanes = 1;
    std::int64_t val = 0, cmp = 0;
    isa::MemOrder order = isa::MemOrder::kRelaxed;
    HazardUnit::Part release = 0;  // the issuer's clock at issue (or at its fence), for a release
    Cycle back{0};                  // when a result reaches the warp (ops that return one)
  };
  struct Writer {  // the last write of a word (reports)
    std::int64_t cta = -1;
    std::uint32_t slot = 0;  // the CTA slot it ran in (exited when the slot's CTA is another or gone)
    int warp = -1;
    int role = -1;
    std::uint32_t op = 0;
    std::int64_t cycle = -1;
  };
  struct Spin {
    bool active = false, poll_pending = false;
    std::uint32_t word = 0;
    Cond cond = Cond::kEq;
    std::int64_t value = 0;
    Cycle first_poll{0};      // when its first poll reached the L2
    std::int64_t period = 1;  // cycles between polls
    std::int64_t load = 1;    // a poll's round trip
    // Reports: whether the word has met the condition since the warp's last poll (from held_from, at held_value), and
    // the latest time it met it and a write took it back before a poll saw it (the spinner missed it).
    bool held = false;
    std::int64_t held_value = 0, held_from = -1;
    void hold(bool h, std::int64_t value, std::int64_t at) { held = h, held_value = value, held_from = at; }
    std::int64_t missed_value = 0, missed_to = 0, missed_from = -1, missed_at = -1;
    Writer missed_by;
  };
  struct GridCta {
    int arrived = 0;           // warps waiting at grid.sync in this CTA
    bool counted = false;      // its atomic on the counter was sent
    Cycle first_poll{0};       // when its first poll of the counter reached the L2
    std::int64_t period = 1, load = 1;
    Cycle rt{0};               // the atomic's round trip
  };

  static bool holds(Cond c, std::int64_t v, std::int64_t x);
  std::string word_name(std::uint32_t word) const;
  std::string last_write(std::uint32_t word) const;
  std::string cond_words(Cond c, std::int64_t x) const;
  // The request reaches the L2 at `at`, no earlier than the CTA's earlier writes to the word (a thread sees
  // its own writes, and the CTA's once a CTA barrier ordered them).
  void send(const Request& r, Cycle at);
  void arrive(std::uint32_t record);
  void apply(const Request& r);
  void changed(std::uint32_t word);
  void poll(std::uint32_t warp_id);
  void grid_cta_ready(std::uint32_t slot);
  void grid_arrive(std::uint32_t slot);
  void grid_counted(std::uint32_t slot);
  Cycle half(std::int64_t round_trip);
  // The first poll at or after `now` of a warp whose polls reach the L2 at first, first + period, ...
  static Cycle next_poll(Cycle first, std::int64_t period, Cycle now);
  // The earliest a request of CTA slot `slot` to `word` may reach the L2 (after the CTA's pending writes).
  Cycle after_writes(std::uint32_t slot, std::uint32_t word) const;

  // Read-modify-writes of a word since its latest plain store (the first kMaxRmws), and the first store that overwrote
  // some a warp of another CTA made after the storer's own: arrivals a reset erased (deadlock reports).
  struct Rmw {
    std::int64_t cta = -1;
    std::uint32_t warp = 0;  // warp id
    int warp_index = 0, role = -1;
    std::uint32_t op = 0;
    std::int64_t cycle = -1;
  };
  struct Erase {
    std::uint32_t word = 0;
    Rmw store, own, first;  // the store, the storer's own latest RMW of the word before it, the first it erased
    std::int64_t erased = 0;
    Rmw release;  // the storer's latest st.release (of another word) between its RMW and the store (cta -1: none)
  };
  static constexpr std::size_t kMaxRmws = 256;
  std::unordered_map<std::uint32_t, std::vector<Rmw>> rmws_;
  std::unordered_map<std::uint32_t, Rmw> last_release_;  // warp id -> its latest release write
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> last_read_;  // warp id -> (word, cycle) it read last
  std::optional<Erase> erase_;
  void note_erase(const Request& r);
  std::string erase_words() const;

  std::vector<std::int64_t> words_;   // by flat word index
  std::vector<Writer> writers_;       // by flat word index
  std::unordered_map<std::uint32_t, double> busy_until_;  // per word: the L2 applies atomics on one word in turn
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> spinners_;  // word -> warps spinning on it
  std::vector<std::vector<std::pair<std::uint32_t, Cycle>>> pending_writes_;  // by CTA slot: word -> arrival at the L2
  std::vector<Spin> spins_;           // by warp id
  std::vector<std::uint32_t> last_word_;  // by warp id: the word its last load read (watchdog reports)
  std::vector<HazardUnit::Part> fence_;   // by warp id: the clock of its last fence.gpu (hazard checks)
  EventRecords<Request> in_flight_;
  std::vector<bool> writes_decl_;      // per global declaration: some op writes it
  std::vector<std::vector<bool>> role_writes_;  // [role][decl]: the role's code has an op that writes it
  // What a warp's code may still write from where it stands (deadlock reports, isa/reach.hpp): the global elements its
  // reachable write ops name, (decl, element), the element -1 where the walk does not know it; `any`: the walk gave
  // up (anything may be written). Filled when a report asks; valid while the warp's pc and op count stay.
  struct Reach {
    std::uint32_t pc = 0;
    std::int64_t ops = -1;
    bool any = false;
    std::vector<std::pair<int, std::int64_t>> writes;
  };
  mutable std::vector<Reach> reach_;  // by warp id
  // What the walks of one run's reports may cost in all (isa/reach.hpp: values copied, ~1 s at most); then warps count as
  // possible writers, as their roles' code says.
  mutable std::uint64_t walk_budget_ = std::uint64_t{1} << 26;
  // Some write of the word is on its way to the L2 (a watchdog stop).
  bool write_in_flight(std::uint32_t word) const;
  std::vector<std::int32_t> writes_in_flight_;  // by flat word index: writes sent and not applied yet
  enum class Writes { kNo, kMaybe, kThis };  // whether a warp may still write a word: not, perhaps (index unknown), that element
  Writes may_write(std::uint32_t warp_id, std::uint32_t word) const;
  // "of flags[0..5], 1, 2 and 3 were written" for an array element never written while others were; else empty.
  std::string written_elements(std::uint32_t word) const;
  std::vector<std::vector<bool>> role_reads_;   // [role][decl]: loads, spins, atomics that return a value
  // grid.sync
  std::vector<GridCta> grid_ctas_;    // by CTA slot
  std::int64_t grid_counted_ = 0;     // CTAs whose atomic reached the counter in this use
  std::vector<std::uint32_t> grid_waiting_slots_;
  std::vector<std::int64_t> grid_exited_;  // CTA ids that exited (they never arrive again): the first few
  std::int64_t grid_exited_count_ = 0;
  bool uses_grid_sync_ = false;
  std::int64_t cta_barrier_ = 0;  // grid.sync's CTA barrier (bar.sync of all the CTA's warps)
  double grid_counter_busy_ = 0;
  HazardUnit* hazards_ = nullptr;
  LsuUnit* lsu_ = nullptr;
  TmaUnit* tma_ = nullptr;
  // Release ops issued while their warp's TMA stores had not completed their global writes (once per op).
  std::vector<std::pair<const isa::OpDesc*, std::string>> unfinished_;
  // The relaxed-publish warning: per warp id, one past the cycle of the latest release (fence.gpu or a release op) of
  // its CTA; per global declaration, whether some op acquires it (a spin, ld.acquire, an atom that acquires).
  std::vector<std::int64_t> released_at_;
  std::vector<bool> acquired_decl_;
  void check_relaxed_publish(const OpContext& ctx);
  void released(const OpContext& ctx);
  void check_unfinished_stores(const OpContext& ctx);
  std::uint16_t cause_spin_, cause_atom_, cause_load_, cause_grid_;
};

}  // namespace smpipe::models
