// docs/reference.md is checked against the implementation, so that it cannot drift: the ops with their forms,
// attributes, required ones, defaults and ranges (isa/ops.cpp); the built-in variables, operators (with their
// precedence, read from the compiled bytecode) and functions; the file-level statements, kernel attributes,
// declarations and roles (as the parser's own messages list them); the exit codes; and the programs it shows.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <set>

#include "isa/ops.hpp"
#include "isa/pipelines.hpp"
#include "support.hpp"

using namespace smpipe;

namespace {

std::vector<std::string> reference_lines() {
  std::ifstream in(std::string(SMPIPE_TESTS_DIR) + "/../docs/reference.md");
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

int heading_level(const std::string& l) {
  std::size_t n = 0;
  while (n < l.size() && l[n] == '#') ++n;
  return n > 0 && n < l.size() && l[n] == ' ' ? static_cast<int>(n) : 0;
}

// The lines under heading `title` (e.g. "### Operators"), up to the next heading of the same or a higher level.
std::vector<std::string> section(const std::vector<std::string>& lines, const std::string& title) {
  int level = heading_level(title);
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines) {
    int h = heading_level(l);
    if (in && h > 0 && h <= level) break;
    if (in) out.push_back(l);
    if (l == title) in = true;
  }
  REQUIRE(in);
  return out;
}

// A markdown table row's cells, trimmed; `\|` is a literal bar.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (row[i] == '|') {
      auto b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      out.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += row[i];
    }
  }
  return out;
}

// The body rows of the first table in `lines` (after its header and separator).
std::vector<std::vector<std::string>> table(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> rows;
  int seen = 0;
  for (const auto& l : lines) {
    if (l.rfind("|", 0) != 0) {
      if (seen > 0) break;
      continue;
    }
    if (++seen > 2) rows.push_back(cells(l));
  }
  return rows;
}

// `x` -> x; anything else unchanged.
std::string unquote(const std::string& s) {
  return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

// The first word of a cell: "`param NAME = EXPR`" -> "param", "`grid=(X, Y, Z)`" -> "grid".
std::string first_word(const std::string& cell) {
  std::string s = unquote(cell);
  std::size_t e = s.find_first_of(" =(");
  return s.substr(0, e);
}

std::set<std::string> first_words(const std::vector<std::vector<std::string>>& rows) {
  std::set<std::string> out;
  for (const auto& r : rows) out.insert(first_word(r.at(0)));
  return out;
}

// The names a parser message lists: the words in quotes, or the comma-separated words inside (...).
std::set<std::string> listed(const std::string& text) {
  std::set<std::string> out;
  std::regex word("[a-z_]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

// The functions the compiler knows, as its message for an unknown one lists them.
std::set<std::string> compiler_functions() {
  std::string msg = test::compile_error("report r = no_such_fn(1, 2)\nkernel k { }\n");
  REQUIRE(msg.find("built-ins: ") != std::string::npos);
  std::string fns = msg.substr(msg.find("built-ins: ") + 11);
  return listed(fns.substr(0, fns.find(')')));
}

// The value of a constant expression, as the compiler folds it.
std::int64_t value_of(const std::string& expr) {
  isa::Program p = test::compile_text("report r = " + expr + "\nkernel k { }\n");
  REQUIRE(p.reports.size() == 1);
  return p.reports[0].second;
}

struct OpEntry {
  std::string form;
  std::vector<std::vector<std::string>> rows;
  bool no_attributes = false;
};

std::map<std::string, OpEntry> op_entries(const std::vector<std::string>& lines) {
  std::map<std::string, OpEntry> out;
  std::regex heading("^#### `([^`]+)`$");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, heading)) continue;
    std::string name = m[1];
    INFO(name);
    REQUIRE(out.count(name) == 0);  // documented once
    OpEntry e;
    std::vector<std::string> body;
    for (std::size_t j = i + 1; j < lines.size() && heading_level(lines[j]) == 0; ++j) body.push_back(lines[j]);
    REQUIRE(!body.empty());
    e.form = unquote(body[0]);
    e.rows = table(body);
    for (const auto& l : body) e.no_attributes = e.no_attributes || l == "No attributes.";
    out[name] = e;
  }
  return out;
}

// How deep inside [ ] the text at `pos` of `form` stands.
int bracket_depth(const std::string& form, std::size_t pos) {
  int d = 0;
  for (std::size_t i = 0; i < pos; ++i) d += form[i] == '[' ? 1 : form[i] == ']' ? -1 : 0;
  return d;
}

// Where `name=` stands in the form as an attribute (after a space or a bracket), or npos.
std::size_t attr_pos(const std::string& form, std::string_view name) {
  std::string key = std::string(name) + "=";
  for (std::size_t p = form.find(key); p != std::string::npos; p = form.find(key, p + 1))
    if (p > 0 && (form[p - 1] == ' ' || form[p - 1] == '[')) return p;
  return std::string::npos;
}

}  // namespace

TEST_CASE("the reference documents every op, once, with its form, attributes, defaults and ranges", "[docs][reference]") {
  auto entries = op_entries(reference_lines());
  std::set<std::string> documented, implemented;
  for (const auto& [name, _] : entries) documented.insert(name);
  for (const auto& spec : isa::all_ops()) implemented.insert(std::string(spec.name));
  CHECK(documented == implemented);

  for (const auto& spec : isa::all_ops()) {
    auto it = entries.find(std::string(spec.name));
    if (it == entries.end()) continue;
    const OpEntry& e = it->second;
    INFO("op " << spec.name << ", form `" << e.form << "`");
    // The form: the op's name, its result, each attribute bare (positional) or as attr=, bracketed when optional.
    CHECK(e.form.rfind(std::string(spec.name), 0) == 0);
    CHECK((e.form.size() > spec.name.size()) == (!spec.attrs.empty() || spec.results > 0));
    CHECK((e.form.find(" -> ") != std::string::npos) == (spec.results > 0));
    for (const auto& a : spec.attrs) {
      INFO("attribute " << a.name);
      bool positional = std::find(spec.positional.begin(), spec.positional.end(), a.name) != spec.positional.end();
      std::size_t p = attr_pos(e.form, a.name);
      if (positional) {
        CHECK(p == std::string::npos);
        continue;
      }
      REQUIRE(p != std::string::npos);
      CHECK((bracket_depth(e.form, p) == 0) == a.required);
    }
    // The table: one row per attribute, its range and its default.
    if (spec.attrs.empty()) {
      CHECK(e.no_attributes);
      CHECK(e.rows.empty());
      continue;
    }
    std::set<std::string> rows, attrs;
    for (const auto& r : e.rows) {
      REQUIRE(r.size() == 4);
      CHECK(rows.insert(unquote(r[0])).second);
    }
    for (const auto& a : spec.attrs) attrs.insert(std::string(a.name));
    CHECK(rows == attrs);
    for (const auto& r : e.rows) {
      std::string name = unquote(r[0]);
      auto a = std::find_if(spec.attrs.begin(), spec.attrs.end(), [&](const isa::AttrSpec& s) { return s.name == name; });
      if (a == spec.attrs.end()) continue;
      INFO("attribute " << name << ": value '" << r[1] << "', required / default '" << r[2] << "'");
      if (auto range = isa::value_range(spec.kind, a->attr))
        CHECK(r[1].find(fmt::format("{}..{}", range->lo, range->hi)) != std::string::npos);
      if (a->required) {
        CHECK(r[2] == "required");
        continue;
      }
      CHECK(r[2] != "required");
      CHECK(!r[2].empty());
      if (a->type == isa::AttrType::kFlag) {
        CHECK(r[2] == "off");
      } else if (a->type == isa::AttrType::kSem) {
        CHECK(r[2] == "relaxed");
      } else if (a->type == isa::AttrType::kInt && a->default_value >= 0) {
        std::smatch m;
        REQUIRE(std::regex_search(r[2], m, std::regex("^-?[0-9]+")));
        CHECK(std::stoll(m[0]) == a->default_value);
      }
    }
  }
}

TEST_CASE("the reference's operators, functions and built-ins are the language's", "[docs][reference]") {
  auto lines = reference_lines();
  // Operators: every one listed once, its example evaluating to the value shown.
  std::map<std::string, int> binary_prec;
  std::set<std::string> unary;
  for (const auto& r : table(section(lines, "### Operators"))) {
    REQUIRE(r.size() == 5);
    std::string op = unquote(r[0].substr(0, r[0].find(" (unary)")));
    INFO("operator " << op << ": " << r[3] << " = " << r[4]);
    if (r[0].find("(unary)") != std::string::npos || op == "!" || op == "~")
      CHECK(unary.insert(op).second);
    else
      CHECK(binary_prec.emplace(op, std::stoi(r[1])).second);
    CHECK(value_of(unquote(r[3])) == std::stoll(r[4]));
  }
  std::set<std::string> bin_doc, bin_impl, un_impl;
  for (const auto& [op, _] : binary_prec) bin_doc.insert(op);
  for (int i = 0; i <= static_cast<int>(isa::BinOp::kMod); ++i) bin_impl.insert(std::string(isa::bin_op_name(static_cast<isa::BinOp>(i))));
  for (int i = 0; i <= static_cast<int>(isa::UnOp::kBitNot); ++i) un_impl.insert(std::string(isa::un_op_name(static_cast<isa::UnOp>(i))));
  CHECK(bin_doc == bin_impl);
  CHECK(unary == un_impl);
  // Precedence as documented: `warp A warp B warp` groups to the left exactly when A binds at least as tightly.
  for (const auto& [a, pa] : binary_prec) {
    for (const auto& [b, pb] : binary_prec) {
      INFO(a << " (" << pa << ") then " << b << " (" << pb << ")");
      isa::Program p = test::compile_text("kernel k { warp 0 w { let v = warp " + a + " warp " + b + " warp } }\n");
      const auto& code = p.roles.at(0).code;
      // left grouping: builtin builtin A builtin B; right: builtin builtin builtin B A
      std::vector<isa::Opc> seq;
      for (const auto& in : code) seq.push_back(in.opc);
      REQUIRE(seq.size() >= 5);
      bool left = seq[2] == isa::Opc::kBinary;
      CHECK(left == (pa >= pb));
      const auto& first_binary = left ? code[2] : code[4];
      CHECK(isa::bin_op_name(static_cast<isa::BinOp>(first_binary.sub)) == a);
    }
  }
  // Functions: the names the compiler knows (from its own message) and each example's value.
  std::set<std::string> fn_doc;
  for (const auto& r : table(section(lines, "### Functions"))) {
    REQUIRE(r.size() == 4);
    fn_doc.insert(first_word(r[0]));
    INFO(r[2] << " = " << r[3]);
    CHECK(value_of(unquote(r[2])) == std::stoll(r[3]));
  }
  CHECK(fn_doc == compiler_functions());
  // Built-in variables.
  std::set<std::string> b_doc, b_impl;
  for (const auto& r : table(section(lines, "### Built-in variables"))) b_doc.insert(unquote(r.at(0)));
  for (int i = 0; i < static_cast<int>(isa::Builtin::kCount); ++i) b_impl.insert(std::string(isa::builtin_name(static_cast<isa::Builtin>(i))));
  CHECK(b_doc == b_impl);
}

TEST_CASE("the reference's statements, kernel attributes, declarations and roles are the parser's", "[docs][reference]") {
  auto lines = reference_lines();
  // The parser lists what it expects when it finds something else.
  auto expected = [](const std::string& source) {
    std::string msg = test::compile_error(source);
    INFO(msg);
    REQUIRE(msg.find("expected") != std::string::npos);
    std::string list = msg.substr(msg.find("expected") + 8);
    list = list.substr(0, list.find('\n'));  // the message's first line, not the source line quoted under it
    list = list.substr(0, list.find(", found"));
    auto words = listed(list);
    for (const char* filler : {"or", "a", "declaration", "role", "found"}) words.erase(filler);
    return words;
  };
  CHECK(first_words(table(section(lines, "## File-level statements"))) == expected("nonsense\n"));
  CHECK(first_words(table(section(lines, "### Kernel attributes"))) == expected("kernel k nonsense=1 { }\n"));
  std::set<std::string> decls = first_words(table(section(lines, "## Declarations")));
  std::set<std::string> roles = first_words(table(section(lines, "## Roles")));
  std::set<std::string> both = decls;
  both.insert(roles.begin(), roles.end());
  CHECK(both == expected("kernel k { nonsense }\n"));
  // Each statement keyword the table names is one the parser takes (a statement that is not one is an op).
  for (const auto& w : first_words(table(section(lines, "## Statements")))) {
    if (w == "NAME" || w == "OPNAME") continue;
    INFO(w);
    std::string msg = test::compile_error("kernel k { warp 0 w { " + w + " } }\n");
    CHECK(msg.find("unknown op") == std::string::npos);
  }
}

TEST_CASE("the reference's exit codes are the command line's", "[docs][reference]") {
  std::set<int> doc;
  for (const auto& r : table(section(reference_lines(), "## Exit codes"))) doc.insert(std::stoi(r.at(0)));
  CHECK(doc == std::set<int>{cli::kOk, cli::kBadInput, cli::kDeadlock, cli::kUndefined, cli::kInternal, cli::kOutputError});
}

TEST_CASE("every complete program in the reference compiles and runs to the end", "[docs][reference]") {
  auto lines = reference_lines();
  int programs = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "```pipe") continue;
    std::string text;
    bool kernel = false;
    for (++i; i < lines.size() && lines[i] != "```"; ++i) {
      text += lines[i] + "\n";
      kernel = kernel || lines[i].rfind("kernel ", 0) == 0;
    }
    if (!kernel) continue;
    ++programs;
    INFO(text);
    auto r = test::run_text(text);
    CHECK(r.outcome == models::Outcome::kFinished);
  }
  CHECK(programs >= 1);
}

TEST_CASE("the editor grammar highlights every op, built-in and keyword of the language", "[docs][reference]") {
  std::ifstream in(std::string(SMPIPE_TESTS_DIR) + "/../editors/vscode-pipe/syntaxes/pipe.tmLanguage.json");
  REQUIRE(in.good());
  nlohmann::json g = nlohmann::json::parse(in);
  // The alternation of words inside the first "(...)" group after `prefix` of a pattern, unescaped.
  auto words = [&](const char* rule, const std::string& prefix) {
    std::string m = g["repository"][rule]["match"].get<std::string>();
    auto b = m.find(prefix);
    REQUIRE(b != std::string::npos);
    b += prefix.size();
    std::string list = m.substr(b, m.find(')', b) - b);
    std::set<std::string> out;
    std::string cur;
    for (std::size_t i = 0; i <= list.size(); ++i) {
      if (i == list.size() || list[i] == '|') {
        out.insert(cur);
        cur.clear();
      } else if (list[i] != '\\') {
        cur += list[i];
      }
    }
    return out;
  };
  std::set<std::string> ops;
  for (const auto& spec : isa::all_ops()) ops.insert(std::string(spec.name));
  CHECK(words("op", "(?<![\\w.])(") == ops);
  std::set<std::string> aliases;
  for (const auto& a : isa::op_aliases()) aliases.insert(std::string(a.alias));
  CHECK(words("ptx_op", "(?<![\\w.])(") == aliases);
  std::set<std::string> pipeline_words;
  for (auto w : isa::pipeline_statements()) pipeline_words.insert(std::string(w));
  for (auto w : isa::pipeline_class_names()) pipeline_words.insert(std::string(w));
  CHECK(words("pipeline", "\\b(") == pipeline_words);
  std::set<std::string> builtins = words("builtin", "\\b(");
  for (int i = 0; i < static_cast<int>(isa::Builtin::kCount); ++i)
    CHECK(builtins.count(std::string(isa::builtin_name(static_cast<isa::Builtin>(i)))) == 1);
  // Every word the parser expects at file level, in a kernel and as a role is a declaration or a keyword.
  std::set<std::string> known = words("declaration", "\\b(");
  for (const auto& w : words("keyword", "\\b(")) known.insert(w);
  auto lines = reference_lines();
  for (const char* title : {"## File-level statements", "## Declarations", "## Roles"})
    for (const auto& w : first_words(table(section(lines, title)))) {
      INFO(title << ": " << w);
      CHECK(known.count(w) == 1);
    }
  CHECK(words("function", "\\b(") == compiler_functions());
}

namespace {
// The body rows of the n-th table (0-based) in `lines`.
std::vector<std::vector<std::string>> nth_table(const std::vector<std::string>& lines, int n) {
  std::vector<std::string> rest = lines;
  for (int i = 0; i < n; ++i) {
    std::size_t at = 0;
    while (at < rest.size() && rest[at].rfind("|", 0) != 0) ++at;  // this table's first row
    while (at < rest.size() && rest[at].rfind("|", 0) == 0) ++at;  // past it
    rest.erase(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(at));
  }
  return table(rest);
}

// "`a`, [`b`]" -> {a: required, b: optional}.
std::vector<std::pair<std::string, bool>> attribute_list(const std::string& cell) {
  std::vector<std::pair<std::string, bool>> out;
  std::regex item("(\\[?)`([a-z_]+)`\\]?");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), item); it != std::sregex_iterator(); ++it)
    out.emplace_back((*it)[2].str(), (*it)[1].str().empty());
  return out;
}
}  // namespace

TEST_CASE("the reference's pipeline classes, attributes, statements and PTX spellings are the compiler's", "[docs][reference]") {
  auto lines = section(reference_lines(), "## Pipelines");
  auto classes = nth_table(lines, 0);
  std::vector<std::string> doc_classes;
  for (const auto& r : classes) {
    REQUIRE(r.size() == 4);
    std::string name = unquote(r[0]);
    doc_classes.push_back(name);
    auto it = std::find(isa::pipeline_class_names().begin(), isa::pipeline_class_names().end(), name);
    REQUIRE(it != isa::pipeline_class_names().end());
    auto cls = static_cast<isa::PipelineClass>(it - isa::pipeline_class_names().begin());
    INFO(name);
    std::vector<std::pair<std::string, bool>> impl;
    for (const auto& [a, req] : isa::pipeline_attributes(cls)) impl.emplace_back(std::string(a), req);
    CHECK(attribute_list(r[1]) == impl);
    std::set<std::string> doc_stmts = listed(r[3]), impl_stmts;
    for (auto st : isa::pipeline_statements_of(cls)) impl_stmts.insert(std::string(st));
    CHECK(doc_stmts == impl_stmts);
  }
  CHECK(doc_classes == std::vector<std::string>(isa::pipeline_class_names().begin(), isa::pipeline_class_names().end()));
  std::set<std::string> doc_statements = first_words(nth_table(lines, 1));
  CHECK(doc_statements == std::set<std::string>(isa::pipeline_statements().begin(), isa::pipeline_statements().end()));

  // PTX spellings: each row is an alias the compiler takes, for the op (and flag) shown.
  std::set<std::string> doc_aliases;
  for (const auto& r : table(section(reference_lines(), "### PTX spellings"))) {
    REQUIRE(r.size() == 2);
    std::string alias = unquote(r[0]);
    doc_aliases.insert(alias);
    const isa::OpAlias* a = isa::find_alias(alias);
    REQUIRE(a != nullptr);
    std::smatch m;
    REQUIRE(std::regex_match(r[1], m, std::regex("`([a-z0-9_.]+)`(?: with `([a-z_]+)`)?")));
    CHECK(m[1].str() == a->op);
    CHECK(m[2].str() == a->flag);
    CHECK(isa::find_op(a->op).has_value());
  }
  std::set<std::string> impl_aliases;
  for (const auto& a : isa::op_aliases()) impl_aliases.insert(std::string(a.alias));
  CHECK(doc_aliases == impl_aliases);
}
