#include "sim/check.hpp"

#include <fmt/format.h>

namespace smpipe::sim {

void internal_error(const char* file, int line, const char* condition, const std::string& message) {
  throw InternalError(fmt::format("{}:{}: check `{}` failed: {}", file, line, condition, message));
}

}  // namespace smpipe::sim
