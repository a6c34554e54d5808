// Reused slots of a vector: records freed by index are handed out again before the vector grows, so its size
// follows the records alive at once, not all records ever made.
#pragma once

#include <cstdint>
#include <vector>

namespace smpipe::sim {

// The index of a slot of `items` to fill: the slot freed last (its index pushed on `free`), else a new one at the end
// (value-initialised).
template <class T>
std::uint32_t take_slot(std::vector<T>& items, std::vector<std::uint32_t>& free) {
  if (!free.empty()) {
    const std::uint32_t i = free.back();
    free.pop_back();
    return i;
  }
  items.emplace_back();
  return static_cast<std::uint32_t>(items.size() - 1);
}

}  // namespace smpipe::sim
