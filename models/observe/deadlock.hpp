// The deadlock detector's graph part: given every stuck warp, what it waits for in words, the warps it
// waits on (wait-for edges) and the likely causes the units found, it finds the cycles of the wait-for
// graph (Boost.Graph strong components) and keeps the causes of the warps on a cycle (the others wait
// downstream of them). What a warp waits for is decided by the unit that owns the wait.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/observe/result.hpp"

namespace smpipe::models {

struct StuckNode {
  StuckWarp warp;
  std::vector<int> waits_on;               // other nodes, in the order found
  std::vector<std::string> causes;         // likely causes derived from this warp
  std::vector<std::string>
      lead_causes;  // the same, specific enough to name the mistake: listed before all others
  std::vector<std::string> never_started;  // barriers it waits on in phase 0 with nothing arrived ever
};

// The text with every run of digits replaced by '#': texts that differ only in their numbers (CTA, index,
// cycle) have the same shape.
std::string number_shape(const std::string& text);

DeadlockReport analyse_wait_graph(const std::vector<StuckNode>& nodes, std::int64_t unlaunched_ctas);

}  // namespace smpipe::models
