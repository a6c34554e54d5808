// Output files written all or nothing. The file is claimed before any simulation (so a missing directory or
// a read-only place is bad input, exit 1, before anything runs), written to a temporary name beside it, and
// renamed onto its name only once all of it is written; a write error after the run is an output error
// (exit 5) that leaves no file behind. A path that exists and is not a regular file (/dev/stdout,
// /dev/null, a FIFO with a reader) is written in place, its errors checked the same way.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace smpipe::cli {

// Whether a progress line may be drawn on `err`: it is the process's stderr and that is a terminal (never when
// the output is captured, piped or written to a file, so no output depends on it).
bool interactive(const std::ostream& err);

// "[n/N] 12 s left" on a terminal while independent jobs run (sweep points, check seeds); nothing otherwise.
// step() may be called from any thread.
class Progress {
 public:
  Progress(std::ostream& err, std::size_t total, bool may_show);
  void step();
  void clear();  // erases the line once the jobs are done

 private:
  std::ostream& err_;
  std::size_t total_, done_ = 0;
  bool shown_;
  std::chrono::steady_clock::time_point begin_;
  std::mutex mutex_;
};

// JSON as smpipe prints it: two-space indent; bytes that are not UTF-8 (a file name) become U+FFFD instead of
// an exception.
std::string json_text(const nlohmann::json& j);

// A file could not be written after the simulation ran (exit 5).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An input the command reads (`what`: "program file", ...): an error if an output file of this process claimed the same
// file (it would be overwritten by the run's output), and an output claimed later on it is refused (OutputFile). The
// inputs are the current command's: begin_command() forgets them.
void protect_input(const std::string& path, const std::string& what);
void begin_command();

class OutputFile {
 public:
  // Claims `path` now; `what` names it in messages ("trace file"). Throws isa::InputError if it cannot be.
  OutputFile(std::string path, std::string what);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writes `data` now (a trace streamed as the run goes). A write error is kept, not thrown: the run goes on,
  // and commit() reports it.
  void append(std::string_view data);
  // Writes what `write` produces (after what was appended) and puts the file in place. Throws OutputError.
  void commit(const std::function<void(std::ostream&)>& write);
  const std::string& path() const { return path_; }

 private:
  std::string path_, what_, temp_;
  std::string claimed_;  // the path as this process's registry of outputs holds it (empty: not registered)
  int fd_ = -1;
  bool in_place_ = false;
  int append_errno_ = 0;  // the first error of append()
  std::string buffer_;    // appended, not written yet (written in pieces of about 1 MB)
};

}  // namespace smpipe::cli
