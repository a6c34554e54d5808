#include "cli/output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "isa/source.hpp"

#include <iostream>

namespace smpipe::cli {

bool interactive(const std::ostream& err) { return &err == &std::cerr && isatty(STDERR_FILENO) != 0; }

Progress::Progress(std::ostream& err, std::size_t total, bool may_show)
    : err_(err), total_(total), shown_(may_show && interactive(err)), begin_(std::chrono::steady_clock::now()) {}

void Progress::step() {
  if (!shown_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  double eta = spent / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  err_ << fmt::format("\r[{}/{}] {:.0f} s left   ", done_, total_, eta) << std::flush;
}

void Progress::clear() {
  if (shown_) err_ << "\r\033[K" << std::flush;
}

std::string json_text(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

namespace {
// The output files this process has claimed (by absolute, normalised path) and what each is: two outputs, or an input
// and an output, on one file would overwrite each other.
std::mutex claimed_mutex;
std::vector<std::pair<std::string, std::string>>& claimed_outputs() {
  static std::vector<std::pair<std::string, std::string>> claimed;
  return claimed;
}
// The input files the current command reads (protect_input), forgotten when the next command begins.
std::vector<std::pair<std::string, std::string>>& read_inputs() {
  static std::vector<std::pair<std::string, std::string>> inputs;
  return inputs;
}
std::string normal_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::string() : p.lexically_normal().string();
}
}  // namespace

void begin_command() {
  std::lock_guard lock(claimed_mutex);
  read_inputs().clear();
}

void protect_input(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return;
  const std::string key = normal_path(path);
  if (key.empty()) return;
  std::lock_guard lock(claimed_mutex);
  for (const auto& [p, out] : claimed_outputs())
    if (p == key)
      throw isa::InputError(fmt::format("the {} '{}' is also given as the {}: the output would overwrite it", what,
                                        isa::printable(path), out));
  for (const auto& [p, in] : read_inputs())
    if (p == key) return;  // (a sweep loads its program once per point)
  read_inputs().emplace_back(key, what);
}

OutputFile::OutputFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  auto fail = [&](const std::string& why) {
    throw isa::InputError(fmt::format("cannot write {} '{}': {}", what_, isa::printable(path_), why));
  };
  if (path_.empty()) fail("empty name");
  // (Registered once the file is claimed, at the end: a constructor that throws leaves no claim behind.)
  const std::string key = normal_path(path_);
  if (!key.empty()) {
    std::lock_guard lock(claimed_mutex);
    for (const auto& [p, other] : claimed_outputs())
      if (p == key) fail(fmt::format("the {} is written to the same file", other));
    for (const auto& [p, input] : read_inputs())
      if (p == key) fail(fmt::format("it is the {} this command reads: the output would overwrite it", input));
  }
  auto claim = [&] {
    if (key.empty()) return;
    std::lock_guard lock(claimed_mutex);
    claimed_outputs().emplace_back(key, what_);
    claimed_ = key;
  };
  struct stat st{};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) fail("it is a directory");
    // a device or a FIFO: written in place; O_NONBLOCK so that a FIFO without a reader fails instead of hanging
    fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    in_place_ = true;
    claim();
    return;
  }
  temp_ = path_ + ".tmp-XXXXXX";
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) {
    int e = errno;
    temp_.clear();
    fail(std::strerror(e));
  }
  ::fchmod(fd_, 0644);
  claim();
}

OutputFile::~OutputFile() {
  if (!claimed_.empty()) {
    std::lock_guard lock(claimed_mutex);
    auto& c = claimed_outputs();
    if (auto it = std::find(c.begin(), c.end(), std::pair{claimed_, what_}); it != c.end()) c.erase(it);
  }
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

namespace {
// Writes all of `s` to `fd`; 0, or the error.
int write_all(int fd, std::string_view s) {
  for (std::size_t done = 0; done < s.size();) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}
}  // namespace

void OutputFile::append(std::string_view data) {
  buffer_.append(data);
  if (buffer_.size() < (std::size_t{1} << 20)) return;
  if (append_errno_ == 0 && fd_ >= 0) append_errno_ = write_all(fd_, buffer_);
  buffer_.clear();
}

void OutputFile::commit(const std::function<void(std::ostream&)>& write) {
  std::ostringstream text;
  write(text);
  const std::string s = text.str();
  auto fail = [&](int e) {
    throw OutputError(fmt::format("cannot write {} '{}': {}{}", what_, isa::printable(path_), std::strerror(e),
                                  in_place_ ? "" : " (no file was left)"));
  };
  if (append_errno_ == 0) append_errno_ = write_all(fd_, buffer_);
  buffer_.clear();
  if (append_errno_ != 0) fail(append_errno_);
  if (int e = write_all(fd_, s); e != 0) fail(e);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno);
  if (in_place_) return;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail(errno);
  temp_.clear();
}

}  // namespace smpipe::cli
