#include "models/memory/block_cache.hpp"

#include <algorithm>

namespace smpipe::models {

BlockCache::BlockCache(std::int64_t capacity) : capacity_(std::max<std::int64_t>(1, capacity)) {
  std::uint64_t slots = 16;
  while (slots < static_cast<std::uint64_t>(capacity_) * 2) slots <<= 1;
  index_.assign(slots, kNone);
  mask_ = slots - 1;
  nodes_.reserve(static_cast<std::size_t>(std::min<std::int64_t>(capacity_, 1 << 20)));
}

std::int64_t BlockCache::slot_of(std::uint64_t key) const {
  // A 64-bit mix (splitmix64's finaliser) so that neighbouring blocks spread over the table.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  return static_cast<std::int64_t>(key & mask_);
}

std::int32_t BlockCache::find(std::uint64_t key) const {
  for (std::uint64_t s = static_cast<std::uint64_t>(slot_of(key));; s = (s + 1) & mask_) {
    std::int32_t n = index_[s];
    if (n == kNone) return kNone;
    if (nodes_[static_cast<std::size_t>(n)].key == key) return n;
  }
}

void BlockCache::erase_index(std::uint64_t key) {
  std::uint64_t s = static_cast<std::uint64_t>(slot_of(key));
  while (nodes_[static_cast<std::size_t>(index_[s])].key != key) s = (s + 1) & mask_;
  // Backward-shift deletion: move later entries of the probe run into the hole when their home slot
  // does not lie cyclically in (hole, their slot].
  std::uint64_t hole = s;
  for (std::uint64_t j = (hole + 1) & mask_; index_[j] != kNone; j = (j + 1) & mask_) {
    std::uint64_t home = static_cast<std::uint64_t>(slot_of(nodes_[static_cast<std::size_t>(index_[j])].key));
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    index_[hole] = index_[j];
    hole = j;
  }
  index_[hole] = kNone;
}

void BlockCache::unlink(std::int32_t n) {
  Node& x = nodes_[static_cast<std::size_t>(n)];
  if (x.prev != kNone) nodes_[static_cast<std::size_t>(x.prev)].next = x.next;
  else head_ = x.next;
  if (x.next != kNone) nodes_[static_cast<std::size_t>(x.next)].prev = x.prev;
  else tail_ = x.prev;
  x.prev = x.next = kNone;
}

void BlockCache::push_front(std::int32_t n) {
  Node& x = nodes_[static_cast<std::size_t>(n)];
  x.prev = kNone;
  x.next = head_;
  if (head_ != kNone) nodes_[static_cast<std::size_t>(head_)].prev = n;
  head_ = n;
  if (tail_ == kNone) tail_ = n;
}

BlockCache::Touch BlockCache::touch(std::uint64_t key, bool write) {
  Touch t;
  std::int32_t n = find(key);
  if (n != kNone) {
    t.hit = true;
    if (n != head_) {
      unlink(n);
      push_front(n);
    }
    nodes_[static_cast<std::size_t>(n)].dirty |= write;
    t.node = n;
    return t;
  }
  if (size_ == capacity_) {
    // Reuse the least recent node for the new block.
    n = tail_;
    Node& old = nodes_[static_cast<std::size_t>(n)];
    t.evicted = true;
    t.evicted_dirty = old.dirty;
    erase_index(old.key);
    unlink(n);
  } else {
    n = static_cast<std::int32_t>(nodes_.size());
    nodes_.emplace_back();
    ++size_;
  }
  Node& x = nodes_[static_cast<std::size_t>(n)];
  x.key = key;
  x.dirty = write;
  x.stamp = 0;
  x.parts = 0;
  x.coming = 0;
  t.node = n;
  std::uint64_t s = static_cast<std::uint64_t>(slot_of(key));
  while (index_[s] != kNone) s = (s + 1) & mask_;
  index_[s] = n;
  push_front(n);
  return t;
}

}  // namespace smpipe::models
