// Output files written all or nothing. The file is claimed before any simulation (so a missing directory or
// a read-only place is bad input, exit 1, before anything runs), written to a temporary name beside it, and
// renamed onto its name only once all of it is written; a write error after the run is an output error
// (exit 5) that leaves no file behind. A path that exists and is not a regular file (/dev/stdout,
// /dev/null, a FIFO with a reader) is written in place, its errors checked the same way.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

namespace smpipe::cli {

// A file could not be written after the simulation ran (exit 5).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputFile {
 public:
  // Claims `path` now; `what` names it in messages ("trace file"). Throws isa::InputError if it cannot be.
  OutputFile(std::string path, std::string what);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writes what `write` produces and puts it in place. Throws OutputError.
  void commit(const std::function<void(std::ostream&)>& write);
  const std::string& path() const { return path_; }

 private:
  std::string path_, what_, temp_;
  int fd_ = -1;
  bool in_place_ = false;
};

}  // namespace smpipe::cli
