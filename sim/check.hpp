// Internal checks: a condition that only a bug of smpipe can break (never the user's input). Unlike
// assert it stays in release builds: it throws InternalError, which the command line reports as
// "internal error: FILE:LINE: check `COND` failed: MESSAGE" with exit status 4.
#pragma once

#include <stdexcept>
#include <string>

namespace smpipe::sim {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn, gnu::cold, gnu::noinline]] void internal_error(const char* file, int line, const char* condition, const std::string& message);

}  // namespace smpipe::sim

// The message is evaluated only when the check fails.
#define SMPIPE_CHECK(condition, message)                                                 \
  do {                                                                                   \
    if (!(condition)) [[unlikely]]                                                       \
      ::smpipe::sim::internal_error(__FILE__, __LINE__, #condition, (message));          \
  } while (0)
