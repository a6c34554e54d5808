// What the run reports when warps can no longer move: every stuck warp and what it waits for, the
// cycles of the wait-for graph (Boost.Graph), and the likely cause in words.
#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <set>

#include "models/gpu/simulator.hpp"

namespace smpipe::models::detail {

using isa::OpKind;

namespace {

// Ops through which a role can signal an mbarrier declaration (arrive, tx, commits, responses).
bool signals_barrier(const isa::OpDesc& d, int decl) {
  auto bar_attr = [&](int i) { return d.attrs.size() > static_cast<std::size_t>(i) && d.attrs[i].decl == decl; };
  switch (d.kind) {
    case OpKind::kArrive: case OpKind::kArriveExpectTx: case OpKind::kArriveNoComplete: case OpKind::kCompleteTx:
    case OpKind::kArriveDrop: case OpKind::kCpAsyncArrive: case OpKind::kUmmaCommit: case OpKind::kClcTryCancel:
      return bar_attr(0);
    case OpKind::kTmaLoad: return bar_attr(5);
    default: return false;
  }
}

bool uses_named(const isa::OpDesc& d, int id) {
  return (d.kind == OpKind::kBarSync || d.kind == OpKind::kBarArrive) && d.base_values[d.attrs[0].first] == id;
}

}  // namespace

std::string Simulator::describe_wait(const Warp& w) const {
  const Cta& c = ctas_[w.cta];
  switch (w.wait) {
    case WaitKind::kBarrier: {
      const MBarrier& b = c.barriers[w.wait_obj];
      std::int64_t parity = w.wait_value & 1;
      return fmt::format("mbarrier {} to complete phase {} (waits with parity {}); barrier now: {}", barrier_name(w.cta, w.wait_obj),
                         w.wait_value, parity, barrier_state(w.cta, w.wait_obj)) +
             (b.tx_expected_this_phase() || b.tx_completed_this_phase()
                  ? fmt::format(", {} bytes expected / {} delivered this phase", b.tx_expected_this_phase(),
                                b.tx_completed_this_phase())
                  : "");
    }
    case WaitKind::kNamedBarrier: {
      const NamedBarrier& nb = c.named[w.wait_obj];
      return fmt::format("named barrier {}: {}/{} threads arrived (warps {})", w.wait_obj, nb.arrived, nb.expected,
                         fmt::join(nb.arrivers, ", "));
    }
    case WaitKind::kCollective: {
      const WarpgroupState& wg = c.warpgroups[w.wait_obj];
      return fmt::format("the other warps of warpgroup {} to reach this warpgroup op ({} of 4 arrived)", w.wait_obj, wg.arrived);
    }
    case WaitKind::kClusterSync: {
      const Cluster& cl = clusters_[c.cluster];
      return fmt::format("cluster.sync: {} of {} live warps of the cluster arrived", cl.sync_arrived, cl.live_warps);
    }
    case WaitKind::kTmemAlloc: {
      const Sm& sm = sms_[w.wait_obj];
      int used = __builtin_popcount(sm.tmem_used) * 32;
      return fmt::format("tmem.alloc of {} columns on SM {}: {} of {} columns are held", w.wait_value, w.wait_obj, used,
                         machine_.tmem_columns);
    }
    case WaitKind::kTimed: return causes_[w.wait_cause];
    case WaitKind::kNone: return "nothing (running)";
  }
  return "?";
}

DeadlockReport Simulator::analyse_stuck(bool watchdog) {
  DeadlockReport rep;
  rep.unlaunched_ctas = (num_clusters_ - next_cluster_) * program_.cluster_size();
  std::vector<std::uint32_t> stuck;
  std::vector<int> node_of(warps_.size(), -1);
  for (std::uint32_t i = 0; i < warps_.size(); ++i) {
    const Warp& w = warps_[i];
    if (w.state == WarpState::kDone || w.role < 0) continue;
    if (w.state != WarpState::kBlocked && !watchdog) continue;
    node_of[i] = static_cast<int>(stuck.size());
    stuck.push_back(i);
    StuckWarp s;
    s.cta = ctas_[w.cta].id;
    s.warp = w.index;
    s.role = program_.roles[w.role].name;
    if (w.state == WarpState::kBlocked) {
      const isa::OpDesc& d = op_of(w, w.wait_op);
      s.loc = d.loc;
      s.op_text = d.text;
      s.waits_for = describe_wait(w);
      s.since = w.wait_since.v;
    } else if (w.last_op != ~0u) {
      // Still running (watchdog): show the op it executed last, and the barrier it polls, if any.
      const isa::OpDesc& d = op_of(w, w.last_op);
      s.loc = d.loc;
      s.op_text = d.text;
      s.waits_for = "nothing: it keeps running";
      if ((d.kind == OpKind::kTestWait || d.kind == OpKind::kWait) && d.attrs[0].decl >= 0) {
        std::vector<std::uint32_t> flats;
        for (int e = 0; e < program_.mbarriers[d.attrs[0].decl].size; ++e) flats.push_back(barrier_base_[d.attrs[0].decl] + e);
        std::vector<std::string> states;
        for (auto f : flats) states.push_back(fmt::format("{}: {}", barrier_name(w.cta, f), barrier_state(w.cta, f)));
        s.waits_for = fmt::format("nothing: it polls mbarrier {}", fmt::join(states, "; "));
      }
      s.since = now().v;
    } else {
      s.loc = isa::SourceLoc{program_.source.get(), program_.roles[w.role].code[w.pc ? w.pc - 1 : 0].line, 1};
      s.waits_for = "nothing: it keeps running (no op executed yet)";
      s.since = now().v;
    }
    rep.warps.push_back(s);
  }

  // Wait-for graph: an edge u -> v when stuck warp u needs something that stuck warp v would do.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(stuck.size());
  std::vector<std::vector<int>> out(stuck.size());
  auto add_edge = [&](int u, std::uint32_t vw) {
    int v = node_of[vw];
    if (v < 0 || v == u) return;
    if (std::find(out[u].begin(), out[u].end(), v) != out[u].end()) return;
    out[u].push_back(v);
    boost::add_edge(u, v, g);
  };
  // Likely causes, each with the stuck warp it was derived from; when the wait-for graph has cycles, only
  // the causes of warps on a cycle are reported (the others wait downstream of them).
  std::vector<std::pair<std::string, int>> cause_list;
  struct CauseSink {
    std::vector<std::pair<std::string, int>>* list;
    int node = 0;
    void insert(const std::string& c) { list->emplace_back(c, node); }
  } causes{&cause_list};
  std::vector<std::pair<std::string, int>> never_started;  // barriers waited on in phase 0 with nothing arrived
  for (std::size_t u = 0; u < stuck.size(); ++u) {
    const Warp& w = warps_[stuck[u]];
    const Cta& c = ctas_[w.cta];
    if (w.state != WarpState::kBlocked) continue;
    causes.node = static_cast<int>(u);
    switch (w.wait) {
      case WaitKind::kBarrier: {
        int decl = static_cast<int>(barrier_decl(w.wait_obj));
        std::vector<std::uint32_t> signalers;
        for (std::uint32_t peer : clusters_[c.cluster].ctas) {
          const Cta& pc = ctas_[peer];
          for (int i = 0; i < program_.warps; ++i) {
            std::uint32_t wid = pc.first_warp + i;
            const Warp& x = warps_[wid];
            if (x.role < 0) continue;
            bool sig = false;
            for (const auto& d : program_.roles[x.role].ops) sig = sig || signals_barrier(d, decl);
            if (!sig) continue;
            if (x.state != WarpState::kDone) signalers.push_back(wid);
            add_edge(static_cast<int>(u), wid);
          }
        }
        const MBarrier& b = c.barriers[w.wait_obj];
        std::string name = barrier_name(w.cta, w.wait_obj);
        if (b.pending() == 0 && b.tx() != 0) {
          causes.insert(fmt::format("{}: all {} arrivals came but the tx-count is stuck at {}: {} bytes expected, {} delivered in "
                                    "this phase. The transaction bytes do not match what the TMA copies deliver (check "
                                    "arrive.expect_tx tx= against the boxes, and multicast peers)",
                                    name, b.expected(), b.tx(), b.tx_expected_this_phase(), b.tx_completed_this_phase()));
        } else if (signalers.empty()) {
          causes.insert(fmt::format("{}: phase {} needs {} more arrival(s) but no live warp in the cluster arrives on {} "
                                    "(every warp that does has exited)",
                                    name, b.phase(), b.pending(), program_.mbarriers[decl].name));
        } else if (b.phase() == 0 && b.arrivals_this_phase() == 0 && b.tx() == 0 && c.passed_waits[w.wait_obj] == 0) {
          std::string entry = fmt::format("{} (role {} waits with parity {})", name, program_.roles[w.role].name, w.wait_value & 1);
          never_started.emplace_back(entry, static_cast<int>(u));
        } else if (b.arrivals_this_phase() == 0 && b.pending() > 0) {
          // Nothing arrived yet in this phase: say what the warps that would arrive are waiting for.
          std::vector<std::string> blocked_on;
          for (std::uint32_t wid : signalers) {
            const Warp& x = warps_[wid];
            if (x.state != WarpState::kBlocked) continue;
            std::string d = fmt::format("{} ({})", program_.roles[x.role].name, describe_wait(x));
            if (std::find(blocked_on.begin(), blocked_on.end(), d) == blocked_on.end()) blocked_on.push_back(d);
            if (blocked_on.size() >= 3) break;
          }
          if (!blocked_on.empty())
            causes.insert(fmt::format("{}: none of the {} arrivals of phase {} came; the warps that arrive on it are blocked: {}",
                                      name, b.expected(), b.phase(), fmt::join(blocked_on, "; ")));
        } else if (b.arrivals_this_phase() > 0) {
          causes.insert(fmt::format("{}: initialised with count {} but only {} arrival(s) came in phase {} ({} missing). If "
                                    "every warp that arrives per phase already did, the count is larger than the threads "
                                    "that arrive",
                                    name, b.expected(), b.arrivals_this_phase(), b.phase(), b.pending()));
        }
        break;
      }
      case WaitKind::kNamedBarrier: {
        const NamedBarrier& nb = c.named[w.wait_obj];
        std::vector<int> users;
        for (int i = 0; i < program_.warps; ++i) {
          std::uint32_t wid = c.first_warp + i;
          const Warp& x = warps_[wid];
          if (x.role < 0 || x.state == WarpState::kDone) continue;
          if (std::find(nb.arrivers.begin(), nb.arrivers.end(), i) != nb.arrivers.end()) continue;
          add_edge(static_cast<int>(u), wid);
          for (const auto& d : program_.roles[x.role].ops)
            if (uses_named(d, static_cast<int>(w.wait_obj))) {
              users.push_back(i);
              break;
            }
        }
        std::string others;
        for (int i : users) {
          const Warp& x = warps_[c.first_warp + i];
          if (x.state == WarpState::kBlocked && x.wait != WaitKind::kNamedBarrier)
            others = fmt::format("; warp {} ({}), which also uses bar {}, waits on {}", i, program_.roles[x.role].name,
                                 w.wait_obj, describe_wait(x));
        }
        causes.insert(fmt::format("bar {}: {} threads expected, {} arrived (warps {}){}", w.wait_obj, nb.expected, nb.arrived,
                                  fmt::join(nb.arrivers, ", "),
                                  others.empty() ? " and no other live warp will arrive: the thread count is too high" : others));
        break;
      }
      case WaitKind::kCollective: {
        for (int i = 0; i < 4; ++i) {
          std::uint32_t wid = c.first_warp + w.wait_obj * 4 + i;
          if (warps_[wid].wait != WaitKind::kCollective) add_edge(static_cast<int>(u), wid);
        }
        causes.insert(fmt::format("warpgroup {} of CTA {}: some warps wait at a warpgroup-collective op that the others do "
                                  "not reach",
                                  w.wait_obj, c.id));
        break;
      }
      case WaitKind::kClusterSync: {
        for (std::uint32_t peer : clusters_[c.cluster].ctas)
          for (int i = 0; i < program_.warps; ++i) {
            std::uint32_t wid = ctas_[peer].first_warp + i;
            if (warps_[wid].wait != WaitKind::kClusterSync) add_edge(static_cast<int>(u), wid);
          }
        causes.insert(fmt::format("cluster.sync in cluster {}: not every live warp of the cluster reaches it", c.cluster));
        break;
      }
      case WaitKind::kTmemAlloc: {
        std::int64_t holders = 0;
        for (std::uint32_t ci = 0; ci < ctas_.size(); ++ci) {
          const Cta& o = ctas_[ci];
          if (o.exited || o.sm != static_cast<int>(w.wait_obj) || o.tmem.empty()) continue;
          for (const auto& a : o.tmem) holders += a.cols;
          for (int i = 0; i < program_.warps; ++i) add_edge(static_cast<int>(u), o.first_warp + i);
        }
        causes.insert(fmt::format("tmem.alloc of {} columns on SM {}: {} columns are held by CTAs that do not free them "
                                  "({} columns per SM)",
                                  w.wait_value, w.wait_obj, holders, machine_.tmem_columns));
        break;
      }
      default: break;
    }
  }
  // Cycles: strongly connected components with more than one warp.
  std::vector<int> comp(stuck.size());
  int ncomp = stuck.empty() ? 0 : boost::strong_components(g, boost::make_iterator_property_map(comp.begin(),
                                                                                                    boost::get(boost::vertex_index, g)));
  for (int k = 0; k < ncomp; ++k) {
    std::vector<int> members;
    for (std::size_t i = 0; i < comp.size(); ++i)
      if (comp[i] == k) members.push_back(static_cast<int>(i));
    if (members.size() < 2) continue;
    // Walk one simple cycle inside the component, starting at its first member.
    std::vector<int> path{members[0]};
    std::vector<bool> seen(stuck.size(), false);
    seen[members[0]] = true;
    for (;;) {
      int cur = path.back(), next = -1;
      for (int v : out[cur])
        if (comp[v] == k && (v == path.front() || !seen[v])) {
          next = v;
          if (v == path.front()) break;
        }
      if (next < 0 || next == path.front()) break;
      seen[next] = true;
      path.push_back(next);
    }
    rep.cycles.push_back(path);
    if (rep.cycles.size() >= 256) break;
  }
  std::vector<bool> on_cycle(stuck.size(), rep.cycles.empty());
  for (int k = 0; k < ncomp; ++k) {
    int size = static_cast<int>(std::count(comp.begin(), comp.end(), k));
    if (size < 2) continue;
    for (std::size_t i = 0; i < comp.size(); ++i)
      if (comp[i] == k) on_cycle[i] = true;
  }
  std::vector<std::string> starts;
  for (const auto& [entry, node] : never_started)
    if (on_cycle[node] && std::find(starts.begin(), starts.end(), entry) == starts.end()) starts.push_back(entry);
  std::set<std::string> kept;
  for (const auto& [text, node] : cause_list)
    if (on_cycle[node]) kept.insert(text);
  if (!starts.empty())
    kept.insert(fmt::format("nothing has arrived on {}: each side waits for the other before its first arrive. The side "
                            "whose buffers start free must not wait for phase 0: CUTLASS producers start at phase 1 (their "
                            "first wait on an 'empty' barrier uses parity 1 and passes at once)",
                            fmt::join(starts, ", ")));
  rep.causes.assign(kept.begin(), kept.end());
  if (rep.warps.empty() && rep.unlaunched_ctas > 0)
    rep.causes.push_back(fmt::format("{} CTAs were never launched", rep.unlaunched_ctas));
  return rep;
}

}  // namespace smpipe::models::detail
