// Every command the README and docs/ show with its output (a fenced block whose first line is
// `$ build/smpipe ...` or `$ smpipe ...`) is run, and the output shown must be what smpipe prints now:
// - a line `...` alone stands for any number of lines (none included); without one, shown lines are
//   consecutive, and the block's first and last lines are the output's first and last;
// - `...` inside a line stands for any text (`.../x.pipe:14:7`: a path shortened);
// - `$ CMD | grep -E "RE"` keeps the lines that match RE, as the shell would;
// - a block may show several commands, each followed by its output.
// Commands run from the repository's root; `--trace F` writes to a temporary directory.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <unistd.h>

#include "support.hpp"

using namespace smpipe;
namespace fs = std::filesystem;

namespace {

struct Shown {
  std::string file;  // where the block is (for messages)
  int line = 0;
  std::string command;  // without "$ " and the program name
  std::vector<std::string> output;
};

std::string repo_root() { return fs::weakly_canonical(fs::path(SMPIPE_TESTS_DIR) / "..").string(); }

std::vector<Shown> shown_commands() {
  std::vector<std::string> files{repo_root() + "/README.md"};
  for (const auto& e : fs::directory_iterator(repo_root() + "/docs"))
    if (e.path().extension() == ".md") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Shown> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind("```", 0) != 0 || i + 1 >= lines.size()) continue;
      std::size_t end = i + 1;
      while (end < lines.size() && lines[end].rfind("```", 0) != 0) ++end;
      bool shows = lines[i + 1].rfind("$ build/smpipe ", 0) == 0 || lines[i + 1].rfind("$ smpipe ", 0) == 0;
      for (std::size_t j = i + 1; shows && j < end; ++j) {
        const std::string& l = lines[j];
        if (l.rfind("$ ", 0) == 0) {
          Shown s;
          s.file = fs::relative(f, repo_root()).string();
          s.line = static_cast<int>(j + 1);
          s.command = l.substr(l.find("smpipe ") + 7);
          out.push_back(s);
        } else {
          out.back().output.push_back(l);
        }
      }
      i = end;
    }
  }
  return out;
}

// Splits a command line on spaces; "..." quotes are kept together (without the quotes).
std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : s) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

// A shown line as a regex: literal text, `...` any text.
std::regex line_pattern(const std::string& shown) {
  std::string re;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (shown.compare(i, 3, "...") == 0) {
      re += ".*";
      i += 2;
    } else if (std::string("\\^$.|?*+()[]{}").find(shown[i]) != std::string::npos) {
      re += '\\';
      re += shown[i];
    } else {
      re += shown[i];
    }
  }
  return std::regex(re);
}

// Whether `actual` (lines) is what `shown` shows, with `...` lines as gaps. Greedy matching is enough: a
// shown run of consecutive lines is looked for at the first place it fits after the previous run.
bool matches(const std::vector<std::string>& shown, const std::vector<std::string>& actual, std::string& why) {
  std::vector<std::vector<std::string>> runs(1);
  std::vector<bool> gap_before{false};
  for (const auto& l : shown) {
    if (l == "...") {
      runs.emplace_back();
      gap_before.push_back(true);
    } else {
      runs.back().push_back(l);
    }
  }
  bool gap_after = !shown.empty() && shown.back() == "...";
  std::size_t at = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto& run = runs[r];
    if (run.empty()) continue;
    std::vector<std::regex> pats;
    for (const auto& l : run) pats.push_back(line_pattern(l));
    auto fits = [&](std::size_t start) {
      if (start + run.size() > actual.size()) return false;
      for (std::size_t k = 0; k < run.size(); ++k)
        if (!std::regex_match(actual[start + k], pats[k])) return false;
      return true;
    };
    // How many of the run's first lines match from `start`.
    auto leading = [&](std::size_t start) {
      std::size_t k = 0;
      while (k < run.size() && start + k < actual.size() && std::regex_match(actual[start + k], pats[k])) ++k;
      return k;
    };
    std::size_t start = at;
    if (gap_before[r]) {
      while (start + run.size() <= actual.size() && !fits(start)) ++start;
      if (!fits(start)) {  // report the place where most of the run matched
        start = at;
        for (std::size_t s = at; s < actual.size(); ++s)
          if (leading(s) > leading(start)) start = s;
      }
    }
    if (!fits(start)) {
      // Name the first shown line of the run that differs from the output at that place.
      for (std::size_t k = 0; k < run.size(); ++k) {
        if (start + k >= actual.size() || !std::regex_match(actual[start + k], pats[k])) {
          why = "shown:  " + run[k] + "\nprinted: " + (start + k < actual.size() ? actual[start + k] : "(end of output)");
          return false;
        }
      }
    }
    at = start + run.size();
  }
  if (!gap_after && at != actual.size()) {
    why = "the output goes on after the last shown line: " + actual[at];
    return false;
  }
  return true;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("every command shown in the README and docs prints what is shown", "[docs][cli]") {
  auto shown = shown_commands();
  REQUIRE(shown.size() >= 5);
  fs::path tmp = fs::temp_directory_path() / fmt::format("smpipe_docs_{}", ::getpid());
  fs::create_directories(tmp);
  for (const auto& s : shown) {
    DYNAMIC_SECTION(s.file << ":" << s.line << ": " << s.command) {
      std::string command = s.command, grep;
      if (auto p = command.find(" | grep -E "); p != std::string::npos) {
        grep = split_args(command.substr(p + 11)).at(0);
        command = command.substr(0, p);
      }
      std::vector<std::string> args = split_args(command);
      for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--trace") args[i + 1] = (tmp / args[i + 1]).string();
      // Run from the repository's root, as the docs do (paths in the output are the ones given).
      struct InRoot {  // back to the test's directory however the run ends
        fs::path cwd = fs::current_path();
        InRoot() { fs::current_path(repo_root()); }
        ~InRoot() { fs::current_path(cwd); }
      };
      test::CliResult r;
      {
        InRoot here;
        r = test::run_cli(args);
      }
      std::vector<std::string> actual;
      for (const auto& l : lines_of(r.out + r.err))
        if (grep.empty() || std::regex_search(l, std::regex(grep, std::regex::extended))) actual.push_back(l);
      std::string why;
      bool ok = matches(s.output, actual, why);
      INFO("printed (exit " << r.code << "):\n" << r.out << r.err);
      INFO(why);
      CHECK(ok);
    }
  }
  fs::remove_all(tmp);
}

TEST_CASE("the shown-output matcher fails where the output differs", "[docs][cli]") {
  std::string why;
  std::vector<std::string> out{"a 1", "b 2", "c 3", "d 4"};
  CHECK(matches({"a 1", "...", "d 4"}, out, why));
  CHECK(matches({"a ...", "...", "c 3", "..."}, out, why));
  CHECK_FALSE(matches({"a 1", "c 3", "..."}, out, why));  // shown lines are consecutive without a `...`
  CHECK_FALSE(matches({"a 1", "b 2"}, out, why));         // the output goes on
  CHECK_FALSE(matches({"...", "b 3", "..."}, out, why));  // a changed figure
  CHECK_THAT(why, Catch::Contains("shown:  b 3"));
  CHECK_FALSE(matches({"...", "c 3", "d 4", "e 5"}, out, why));  // the output ends before the shown lines do
  CHECK_THAT(why, Catch::Contains("(end of output)"));
  CHECK_FALSE(matches({"x 1", "..."}, out, why));
  CHECK_THAT(why, Catch::Contains("printed: a 1"));
}
