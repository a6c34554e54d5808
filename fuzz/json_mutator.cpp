#include "fuzz/json_mutator.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

namespace smpipe::fuzz {

namespace {

using nlohmann::json;
using Rng = std::mt19937;

// Deeper trees are left to the byte mutator (the walk below and json::dump recurse).
constexpr int kMaxDepth = 64;

std::size_t pick(Rng& rng, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

struct Node {
  json* value;
  int depth;
};

// Every value of the tree, iteratively; false when the tree is deeper than kMaxDepth.
bool collect(json& root, std::vector<Node>& nodes, std::vector<std::string>& strings, std::vector<std::string>& keys) {
  std::vector<Node> stack{{&root, 0}};
  while (!stack.empty()) {
    Node n = stack.back();
    stack.pop_back();
    if (n.depth > kMaxDepth) return false;
    nodes.push_back(n);
    if (n.value->is_object()) {
      for (auto it = n.value->begin(); it != n.value->end(); ++it) {
        keys.push_back(it.key());
        stack.push_back({&it.value(), n.depth + 1});
      }
    } else if (n.value->is_array()) {
      for (auto& e : *n.value) stack.push_back({&e, n.depth + 1});
    } else if (n.value->is_string()) {
      strings.push_back(n.value->get<std::string>());
    }
  }
  return true;
}

json interesting_number(Rng& rng, const json& old) {
  constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
  std::int64_t v = 0;
  if (old.is_number_integer()) {
    v = old.get<std::int64_t>();
  } else if (old.is_number_float() && std::isfinite(old.get<double>())) {
    v = static_cast<std::int64_t>(std::fmod(old.get<double>(), 1e18));
  }
  switch (pick(rng, 12)) {
    case 0: {  // a neighbour (no wrap: the mutator itself must not overflow)
      std::int64_t d = static_cast<std::int64_t>(pick(rng, 3)) - 1;
      if (d == 0) d = 1;
      if ((d > 0 && v == i64max) || (d < 0 && v == i64min)) return v;
      return v + d;
    }
    case 1: return v == i64min ? i64max : -v;
    case 2: return v > i64max / 2 || v < i64min / 2 ? v : v * 2;
    case 3: return v / 2;
    case 4: {
      static const std::int64_t edges[] = {0, 1, -1, 2, 3, 7, 8, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, 1023, 1024,
                                           4095, 4096, 65535, 65536, (1 << 20) - 1, 1 << 20, 2147483647, 2147483648LL,
                                           -2147483648LL, 4294967295LL, 4294967296LL, i64max, i64min, i64max / 2 + 1,
                                           1000000000000LL};
      return edges[pick(rng, std::size(edges))];
    }
    case 5: return std::numeric_limits<std::uint64_t>::max();
    case 6: {
      static const double doubles[] = {0.5, -0.0, 1e308, -1e308, 1e-308, 5e-324, 1e19, 9.3e18, 9007199254740993.0,
                                       0.001, 1.5, -1.5, 1e10, 2147483648.5, std::numeric_limits<double>::max()};
      return doubles[pick(rng, std::size(doubles))];
    }
    case 7: {
      static const char* words[] = {"NaN", "inf", "-inf", "1e999", "0x10", "1", ""};
      return words[pick(rng, std::size(words))];
    }
    case 8: return nullptr;
    case 9: return old.is_number() ? json::array({old}) : json(0);
    case 10: return v > i64max / 1000 || v < i64min / 1000 ? v : v * 1000;
    default: return static_cast<std::int64_t>(rng() % 300) - 20;
  }
}

json interesting_string(Rng& rng, const JsonVocabulary& vocab, const std::vector<std::string>& seen, const json& old) {
  switch (pick(rng, 8)) {
    case 0:
    case 1:
    case 2:
      if (!vocab.strings.empty()) return vocab.strings[pick(rng, vocab.strings.size())];
      [[fallthrough]];
    case 3:
    case 4:
      if (!seen.empty()) return seen[pick(rng, seen.size())];
      return "";
    case 5: {
      static const char* words[] = {"", " ", "x", ".end", "wait.end", "\t", "a\nb", "\xc3\xa9", "\xe2\x80\xae", "0",
                                    "-1", "null", "%s%n", "../x"};
      return words[pick(rng, std::size(words))];
    }
    case 6: return json(old.is_string() ? old.get<std::string>() + (pick(rng, 2) ? ".end" : "_") : std::string());
    default: return std::string(1 + pick(rng, 300), 'A');
  }
}

json other_type(Rng& rng) {
  switch (pick(rng, 7)) {
    case 0: return nullptr;
    case 1: return true;
    case 2: return json::array();
    case 3: return json::object();
    case 4: return "7";
    case 5: return json::array({0, 0, 0});
    default: return 0;
  }
}

void mutate_one(Rng& rng, json& v, const JsonVocabulary& vocab, const std::vector<std::string>& seen_strings,
                const std::vector<std::string>& seen_keys) {
  if (pick(rng, 12) == 0) {
    v = other_type(rng);
    return;
  }
  if (v.is_number() || v.is_boolean() || v.is_null()) {
    v = v.is_boolean() && pick(rng, 2) ? json(!v.get<bool>()) : interesting_number(rng, v);
  } else if (v.is_string()) {
    v = interesting_string(rng, vocab, seen_strings, v);
  } else if (v.is_array()) {
    std::size_t n = v.size();
    switch (n == 0 ? 6 : pick(rng, 7)) {
      case 0:
      case 1: v.insert(v.begin() + static_cast<std::ptrdiff_t>(pick(rng, n + 1)), json(v[pick(rng, n)])); break;  // duplicate
      case 2:
      case 3: v.erase(pick(rng, n)); break;
      case 4: std::swap(v[pick(rng, n)], v[pick(rng, n)]); break;
      case 5: {
        std::size_t keep = pick(rng, n);
        while (v.size() > keep) v.erase(v.size() - 1);
        break;
      }
      default: v.push_back(n ? json(v[pick(rng, n)]) : other_type(rng)); break;
    }
  } else if (v.is_object()) {
    std::size_t n = v.size();
    switch (n == 0 ? 2 : pick(rng, 4)) {
      case 0: {  // drop a key
        auto it = v.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(pick(rng, n)));
        v.erase(it);
        break;
      }
      case 1: {  // a key's value replaced by a copy of another's
        auto a = v.begin(), b = v.begin();
        std::advance(a, static_cast<std::ptrdiff_t>(pick(rng, n)));
        std::advance(b, static_cast<std::ptrdiff_t>(pick(rng, n)));
        *a = json(*b);
        break;
      }
      default: {  // a key the format knows, or one seen elsewhere
        const std::vector<std::string>& ks = !vocab.keys.empty() && pick(rng, 2) ? vocab.keys : seen_keys;
        std::string key = ks.empty() ? "x" : ks[pick(rng, ks.size())];
        v[key] = n ? json(v.begin().value()) : other_type(rng);
        if (pick(rng, 2)) mutate_one(rng, v[key], vocab, seen_strings, seen_keys);
        break;
      }
    }
  }
}

}  // namespace

std::size_t mutate_json(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                        const JsonVocabulary& vocab, MutateFn fallback) {
  Rng rng(seed);
  if (size == 0 || pick(rng, 8) == 0) return fallback(data, size, max_size);
  json root = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return fallback(data, size, max_size);
  int rounds = 1 + static_cast<int>(pick(rng, 3));
  for (int r = 0; r < rounds; ++r) {
    std::vector<Node> nodes;
    std::vector<std::string> strings, keys;
    if (!collect(root, nodes, strings, keys)) return fallback(data, size, max_size);
    // Leaves are picked more often than containers: they are most of what a mutation should touch.
    Node n = nodes[pick(rng, nodes.size())];
    if (n.value->is_structured() && pick(rng, 2)) n = nodes[pick(rng, nodes.size())];
    mutate_one(rng, *n.value, vocab, strings, keys);
  }
  std::string out;
  try {
    out = root.dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const json::exception&) {
    return fallback(data, size, max_size);
  }
  if (out.size() > max_size) return fallback(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace smpipe::fuzz
