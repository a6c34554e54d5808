// A structure-aware mutator for JSON inputs (hardware traces, machine files): when the input parses as JSON,
// one to three values of its tree are changed (numbers to the edges of their ranges or to neighbours, strings
// to words the format knows, array elements duplicated, dropped or swapped, object keys dropped or added,
// a value replaced by one of another type) and the tree is written back; otherwise, and now and then anyway,
// libFuzzer's own byte mutation runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/targets.hpp"

namespace smpipe::fuzz {

struct JsonVocabulary {
  std::vector<std::string> strings;  // values a string may become (op names, unit names, ...)
  std::vector<std::string> keys;     // keys an object may gain
};

std::size_t mutate_json(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed,
                        const JsonVocabulary& vocabulary, MutateFn fallback);

}  // namespace smpipe::fuzz
