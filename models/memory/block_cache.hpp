// A least-recently-used set of fixed-size memory blocks: the L2's contents, as the cached L2 unit sees
// them. Keys are block numbers (models/memory/l2.hpp names how addresses become blocks); every entry
// remembers whether it was written (dirty: its eviction writes it back). O(1) per touch: an open-addressed index (linear probing, deletion by backward
// shift) over a doubly linked recency list kept in flat arrays.
#pragma once

#include <cstdint>
#include <vector>

namespace smpipe::models {

class BlockCache {
 public:
  // Holds at most `capacity` blocks (at least 1).
  explicit BlockCache(std::int64_t capacity);

  struct Touch {
    bool hit = false;           // the block was present
    bool evicted = false;       // a block was evicted to make room
    bool evicted_dirty = false; // ... and it had been written
    std::int32_t node = 0;      // where the block now is: its stamp is stamp(node) until the next touch
  };
  // Looks `key` up, makes it the most recent, inserts it when absent (evicting the least recent when
  // full); `write` marks it dirty.
  Touch touch(std::uint64_t key, bool write);
  bool contains(std::uint64_t key) const { return find(key) >= 0; }
  // Where `key` is without touching it (no recency change, no insertion): its node, or -1 when absent.
  std::int32_t peek(std::uint64_t key) const { return find(key); }
  // A hint that `key` is touched soon: starts loading its index slot (and, when that slot is already in the
  // cache, its node) so that several blocks' misses overlap. Changes nothing.
  void prefetch(std::uint64_t key) const {
    const std::int32_t* slot = &index_[static_cast<std::size_t>(slot_of(key))];
    __builtin_prefetch(slot);
  }
  // A value the user keeps per block (the cached L2: until when a read of it is in flight); 0 for a block
  // just inserted.
  std::int64_t& stamp(std::int32_t node) { return nodes_[static_cast<std::size_t>(node)].stamp; }
  // Another: which parts of the block it holds (the cached L2: a bit per 64-byte half row); 0 for a block just
  // inserted.
  std::uint64_t& parts(std::int32_t node) { return nodes_[static_cast<std::size_t>(node)].parts; }
  // And a third (the cached L2: which of those parts are still coming from HBM); 0 for a block just inserted.
  std::uint64_t& coming(std::int32_t node) { return nodes_[static_cast<std::size_t>(node)].coming; }
  std::int64_t size() const { return size_; }
  std::int64_t capacity() const { return capacity_; }

 private:
  static constexpr std::int32_t kNone = -1;
  struct Node {
    std::uint64_t key = 0;
    std::int64_t stamp = 0;
    std::uint64_t parts = 0, coming = 0;
    std::int32_t prev = kNone, next = kNone;
    bool dirty = false;
  };
  std::int64_t slot_of(std::uint64_t key) const;
  std::int32_t find(std::uint64_t key) const;
  void erase_index(std::uint64_t key);
  void unlink(std::int32_t n);
  void push_front(std::int32_t n);

  std::int64_t capacity_, size_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::int32_t> index_;  // slot -> node, kNone when empty
  std::uint64_t mask_ = 0;
  std::int32_t head_ = kNone, tail_ = kNone;  // most and least recent
};

}  // namespace smpipe::models
