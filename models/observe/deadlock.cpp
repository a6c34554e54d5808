#include "models/observe/deadlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <cctype>
#include <set>

namespace smpipe::models {

std::string number_shape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += text[i];
    }
  }
  return out;
}

DeadlockReport analyse_wait_graph(const std::vector<StuckNode>& nodes, std::int64_t unlaunched_ctas) {
  DeadlockReport rep;
  rep.unlaunched_ctas = unlaunched_ctas;
  for (const StuckNode& n : nodes) rep.warps.push_back(n.warp);
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(nodes.size());
  for (std::size_t u = 0; u < nodes.size(); ++u)
    for (int v : nodes[u].waits_on) boost::add_edge(u, v, g);
  // Cycles: strongly connected components with more than one warp.
  std::vector<int> comp(nodes.size());
  int ncomp = nodes.empty() ? 0
                            : boost::strong_components(g, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
  for (int k = 0; k < ncomp; ++k) {
    std::vector<int> members;
    for (std::size_t i = 0; i < comp.size(); ++i)
      if (comp[i] == k) members.push_back(static_cast<int>(i));
    if (members.size() < 2) continue;
    // Walk one simple cycle inside the component, starting at its first member.
    std::vector<int> path{members[0]};
    std::vector<bool> seen(nodes.size(), false);
    seen[members[0]] = true;
    for (;;) {
      int cur = path.back(), next = -1;
      for (int v : nodes[cur].waits_on)
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
  std::vector<bool> on_cycle(nodes.size(), rep.cycles.empty());
  std::vector<bool> in_cycle(nodes.size(), false);  // on a real cycle of the wait-for graph
  for (int k = 0; k < ncomp; ++k) {
    int size = static_cast<int>(std::count(comp.begin(), comp.end(), k));
    if (size < 2) continue;
    for (std::size_t i = 0; i < comp.size(); ++i)
      if (comp[i] == k) on_cycle[i] = in_cycle[i] = true;
  }
  std::vector<std::string> starts;
  // Causes in the order the warps were found (CTA launch order); causes that differ only in their numbers
  // (the same mistake in every CTA: flags[0], flags[1] ...) are given once, with how many there were.
  std::vector<std::string> kept;
  std::vector<std::string> shapes;
  std::vector<std::set<std::string>> alike;  // per kept cause: the other texts of its shape
  // Causes of the warps on a cycle, and of the warps that wait on no live warp at all (what they wait for
  // can never come: a root of the stall, not downstream of another stuck warp).
  // The causes that name a mistake come first (all warps' lead causes, then all warps' others).
  for (int lead = 1; lead >= 0; --lead)
    for (std::size_t u = 0; u < nodes.size(); ++u) {
      if (!on_cycle[u] && !nodes[u].waits_on.empty()) continue;
      // "Each side waits for the other" is only true of barriers waited on inside a cycle.
      if (in_cycle[u] && !lead)
        for (const auto& entry : nodes[u].never_started)
          if (std::find(starts.begin(), starts.end(), entry) == starts.end()) starts.push_back(entry);
      for (const auto& c : lead ? nodes[u].lead_causes : nodes[u].causes) {
        if (std::find(kept.begin(), kept.end(), c) != kept.end()) continue;
        std::string shape = number_shape(c);
        auto it = std::find(shapes.begin(), shapes.end(), shape);
        if (it != shapes.end()) {
          alike[it - shapes.begin()].insert(c);
          continue;
        }
        kept.push_back(c);
        shapes.push_back(shape);
        alike.emplace_back();
      }
    }
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (!alike[i].empty()) kept[i] += fmt::format(" (and {} more of the same form, with other numbers)", alike[i].size());
  // Each side waiting for the other needs two barriers that never started (an 'empty' and a 'full'); waits on one alone
  // (consumers of a ring whose producer stopped for another reason, which its own cause names) are no such start.
  std::set<std::string> start_barriers;
  for (const auto& entry : starts) start_barriers.insert(entry.substr(0, entry.find(" (role ")));
  if (start_barriers.size() >= 2)
    kept.push_back(fmt::format("nothing has arrived on {}: each side waits for the other before its first arrive. The side "
                            "whose buffers start free must not wait for phase 0: CUTLASS producers start at phase 1 (their "
                            "first wait on an 'empty' barrier uses parity 1 and passes at once)",
                            fmt::join(starts, ", ")));
  rep.causes = std::move(kept);
  if (rep.warps.empty() && rep.unlaunched_ctas > 0)
    rep.causes.push_back(fmt::format("{} CTAs were never launched", rep.unlaunched_ctas));
  return rep;
}

}  // namespace smpipe::models
