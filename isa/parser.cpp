// Recursive-descent parser for the grammar of language.md.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "isa/ast.hpp"
#include "isa/lexer.hpp"
#include "isa/limits.hpp"

namespace smpipe::isa {

namespace {

class Parser {
 public:
  explicit Parser(const SourceFile& file) : toks_(lex(file)) {}

  void parse_file(File& f) {
    skip_newlines();
    while (!at_end()) {
      const Token& t = peek();
      if (is_ident("param") || is_ident("const")) {
        bool overridable = t.text == "param";
        SourceLoc loc = next().loc;
        Definition d{expect_ident("a name after '" + std::string(overridable ? "param" : "const") + "'"),
                     Expr{}, overridable, loc};
        expect_punct("=");
        d.value = parse_expr();
        f.definitions.push_back(std::move(d));
      } else if (is_ident("report")) {
        Report r;
        r.loc = next().loc;
        r.name = expect_ident("a name after 'report'");
        expect_punct("=");
        r.value = parse_expr();
        f.reports.push_back(std::move(r));
      } else if (is_ident("assert")) {
        Assertion a;
        a.loc = next().loc;
        a.condition = parse_expr();
        if (is_punct(",")) next();
        if (peek().kind != Tok::kString) fail(peek().loc, "expected a message string after the assert condition");
        a.message = next().text;
        f.assertions.push_back(std::move(a));
      } else if (is_ident("gpu")) {
        next();
        const Token& g = peek();
        if (g.kind != Tok::kIdent && g.kind != Tok::kString && g.kind != Tok::kWord)
          fail(g.loc, "expected a machine name after 'gpu'");
        // Machine names contain dashes (h100-sxm): glue tokens that touch each other.
        std::string name = next().text;
        while (peek().kind != Tok::kNewline && peek().kind != Tok::kEnd && peek().loc.line == g.loc.line &&
               peek().loc.col == g.loc.col + static_cast<int>(name.size()))
          name += next().text;
        if (f.gpu && f.gpu->second.file == g.loc.file)
          fail(g.loc, fmt::format("a second 'gpu' line (the first, at line {}, names {}): a file names one machine",
                                  f.gpu->second.line, f.gpu->first));
        f.gpu = std::make_pair(name, g.loc);
      } else if (is_ident("kernel")) {
        f.kernels.push_back(parse_kernel());
      } else if (is_ident("proc")) {
        f.procs.push_back(parse_proc());
      } else if (is_ident("import")) {
        SourceLoc loc = next().loc;
        if (peek().kind != Tok::kString) fail(peek().loc, "expected a file name in quotes after 'import'");
        f.imports.push_back(Import{next().text, loc});
      } else {
        fail(t.loc, fmt::format("expected 'param', 'const', 'assert', 'report', 'gpu', 'import', 'proc' or 'kernel', found {}",
                                describe(t)));
      }
      end_statement();
    }
  }

 private:
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw InputError(loc, msg); }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kNewline: return "end of line";
      case Tok::kEnd: return "end of file";
      case Tok::kString: return fmt::format("\"{}\"", t.text);
      default: return fmt::format("'{}'", t.text);
    }
  }

  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool at_end() const { return peek().kind == Tok::kEnd; }
  bool is_ident(const char* s) const { return peek().kind == Tok::kIdent && peek().text == s; }
  bool is_punct(const char* s, std::size_t ahead = 0) const {
    return peek(ahead).kind == Tok::kPunct && peek(ahead).text == s;
  }
  void skip_newlines() {
    while (peek().kind == Tok::kNewline) next();
  }
  std::string expect_ident(const std::string& what) {
    if (peek().kind != Tok::kIdent) fail(peek().loc, fmt::format("expected {}, found {}", what, describe(peek())));
    return next().text;
  }
  SourceLoc expect_punct(const char* s) {
    if (!is_punct(s)) fail(peek().loc, fmt::format("expected '{}', found {}", s, describe(peek())));
    return next().loc;
  }
  void end_statement() {
    if (peek().kind == Tok::kNewline) {
      skip_newlines();
      return;
    }
    if (at_end() || is_punct("}")) return;
    fail(peek().loc, fmt::format("expected end of statement, found {}", describe(peek())));
  }

  // At '(': a tuple has a top-level comma before the matching ')'; otherwise it is a parenthesised expression.
  bool starts_tuple() const {
    int depth = 0;
    for (std::size_t i = pos_; i < toks_.size(); ++i) {
      const Token& t = toks_[i];
      if (t.kind == Tok::kNewline || t.kind == Tok::kEnd) return false;
      if (t.kind != Tok::kPunct) continue;
      if (t.text == "(" || t.text == "[") ++depth;
      if (t.text == ")" || t.text == "]") {
        if (--depth == 0) return false;
      }
      if (t.text == "," && depth == 1) return true;
    }
    return false;
  }

  std::vector<Expr> parse_tuple() {
    expect_punct("(");
    std::vector<Expr> v;
    v.push_back(parse_expr());
    while (is_punct(",")) {
      next();
      v.push_back(parse_expr());
    }
    expect_punct(")");
    return v;
  }

  Kernel parse_kernel() {
    Kernel k;
    k.loc = next().loc;
    k.name = expect_ident("a kernel name");
    std::vector<std::string> given;
    while (peek().kind == Tok::kIdent) {
      const Token& a = next();
      if (std::find(given.begin(), given.end(), a.text) != given.end())
        fail(a.loc, fmt::format("kernel attribute '{}' given twice", a.text));
      given.push_back(a.text);
      expect_punct("=");
      if (a.text == "grid") {
        k.grid_loc = a.loc;
        k.grid = parse_tuple();
      } else if (a.text == "cluster") {
        k.cluster_loc = a.loc;
        k.cluster = parse_tuple();
      } else if (a.text == "warps") {
        k.warps = parse_expr();
      } else if (a.text == "smem") {
        k.smem = parse_expr();
      } else if (a.text == "regs") {
        k.regs = parse_expr();
      } else {
        fail(a.loc, fmt::format("unknown kernel attribute '{}' (expected grid, cluster, warps, smem or regs)", a.text));
      }
    }
    expect_punct("{");
    skip_newlines();
    while (!is_punct("}")) {
      if (at_end()) fail(peek().loc, "missing '}' at the end of kernel '" + k.name + "'");
      const Token& t = peek();
      if (t.kind != Tok::kIdent) fail(t.loc, fmt::format("expected a declaration or a role, found {}", describe(t)));
      if (t.text == "mbarrier" || t.text == "smem" || t.text == "tensor" || t.text == "named_barrier" || t.text == "global" ||
          t.text == "pipeline") {
        k.decls.push_back(parse_decl());
      } else if (t.text == "warp" || t.text == "warps" || t.text == "warpgroup" || t.text == "warpgroups") {
        k.roles.push_back(parse_role());
      } else if (t.text == "proc") {
        k.procs.push_back(parse_proc());
      } else {
        fail(t.loc, fmt::format("expected a declaration (mbarrier, smem, tensor, named_barrier, global, pipeline), a role "
                                "(warp, warps, warpgroup, warpgroups) or a proc, found '{}'",
                                t.text));
      }
      end_statement();
    }
    next();
    return k;
  }

  Decl parse_decl() {
    Decl d;
    const Token& kw = next();
    d.loc = kw.loc;
    d.name = expect_ident("a name");
    if (kw.text == "mbarrier") d.kind = Decl::Kind::kMbarrier;
    if (kw.text == "smem") d.kind = Decl::Kind::kSmem;
    if (kw.text == "tensor") d.kind = Decl::Kind::kTensor;
    if (kw.text == "named_barrier") d.kind = Decl::Kind::kNamedBarrier;
    if (kw.text == "global") d.kind = Decl::Kind::kGlobal;
    if (kw.text == "pipeline") d.kind = Decl::Kind::kPipeline;
    if (is_punct("[")) {
      if (d.kind == Decl::Kind::kTensor || d.kind == Decl::Kind::kNamedBarrier || d.kind == Decl::Kind::kPipeline)
        fail(peek().loc, fmt::format("a {} cannot be an array", kw.text));
      next();
      d.size = parse_expr();
      expect_punct("]");
    }
    auto attr = [&](const char* name) {
      SourceLoc loc = peek().loc;
      if (!is_ident(name)) fail(loc, fmt::format("expected '{}=' in the {} declaration", name, kw.text));
      next();
      expect_punct("=");
    };
    switch (d.kind) {
      case Decl::Kind::kMbarrier:
        if (is_ident("count")) {
          attr("count");
          d.count = parse_expr();
        }
        break;
      case Decl::Kind::kSmem:
        attr("bytes");
        d.count = parse_expr();
        if (is_ident("whole")) {
          next();
          d.whole = true;
        }
        break;
      case Decl::Kind::kTensor: {
        bool have_dtype = false, have_shape = false;
        while (peek().kind == Tok::kIdent && (peek().text == "dtype" || peek().text == "shape" || peek().text == "l2_promotion")) {
          if (peek().text == "dtype") {
            attr("dtype");
            d.dtype = expect_ident("a dtype (e.g. bf16)");
            have_dtype = true;
          } else if (peek().text == "l2_promotion") {
            attr("l2_promotion");
            d.promotion = parse_expr();
          } else {
            attr("shape");
            d.shape = parse_tuple();
            have_shape = true;
          }
        }
        if (!have_dtype) fail(peek().loc, "expected 'dtype=' in the tensor declaration");
        if (!have_shape) fail(peek().loc, "expected 'shape=' in the tensor declaration");
        break;
      }
      case Decl::Kind::kNamedBarrier:
        attr("id");
        d.count = parse_expr();
        break;
      case Decl::Kind::kGlobal:
        if (is_ident("init")) {
          attr("init");
          d.count = parse_expr();
        }
        break;
      case Decl::Kind::kPipeline:
        // pipeline NAME CLASS key=value ...: the attributes are checked by the compiler (isa/pipelines.cpp).
        d.dtype = expect_ident("a pipeline class (PipelineTmaAsync, PipelineTmaUmmaAsync, PipelineTransactionAsync, "
                               "PipelineAsync or OrderedSequenceBarrier)");
        while (peek().kind == Tok::kIdent && is_punct("=", 1)) {
          Operand o;
          o.loc = peek().loc;
          o.key = next().text;
          next();
          o.values.push_back(parse_expr());
          d.attrs.push_back(std::move(o));
        }
        break;
    }
    return d;
  }

  Proc parse_proc() {
    Proc p;
    p.loc = next().loc;
    p.name = expect_ident("a proc name");
    expect_punct("(");
    if (!is_punct(")")) {
      p.params.push_back(expect_ident("a parameter name"));
      while (is_punct(",")) {
        next();
        p.params.push_back(expect_ident("a parameter name"));
      }
    }
    expect_punct(")");
    if (is_punct("->")) {
      next();
      p.results.push_back(expect_ident("a result name"));
      while (is_punct(",")) {
        next();
        p.results.push_back(expect_ident("a result name"));
      }
    }
    p.body = parse_block();
    return p;
  }

  Role parse_role() {
    Role r;
    const Token& kw = next();
    r.unit = kw.text;
    r.loc = kw.loc;
    r.from = parse_expr();
    if (is_punct("..")) {
      next();
      r.to = parse_expr();
    }
    r.name = expect_ident("a role name");
    r.body = parse_block();
    return r;
  }

  // Counts one level of block nesting for as long as it lives.
  struct Nest {
    Parser& p;
    Nest(Parser& parser, const SourceLoc& loc) : p(parser) {
      if (++p.block_depth_ > kMaxBlockDepth)
        p.fail(loc, fmt::format("blocks nested more than {} levels deep", kMaxBlockDepth));
    }
    ~Nest() { --p.block_depth_; }
  };

  // Counts one level of the parser's recursion inside an expression for as long as it lives: the recursion is
  // bounded before it can exhaust the stack, whatever the input.
  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& parser) : p(parser) {
      if (++p.expr_nest_ > kMaxExprDepth)
        p.fail(p.peek().loc, fmt::format("expression nested more than {} levels deep", kMaxExprDepth));
    }
    ~Deeper() { --p.expr_nest_; }
  };

  // The expression `e` with its depth set from its operands; refused beyond kMaxExprDepth.
  Expr& deepen(Expr& e) {
    int d = 0;
    for (const Expr& a : e.args) d = std::max(d, a.depth);
    e.depth = d + 1;
    if (e.depth > kMaxExprDepth) fail(e.loc, fmt::format("expression nested more than {} levels deep", kMaxExprDepth));
    return e;
  }

  Block parse_block() {
    Nest nest(*this, peek().loc);
    expect_punct("{");
    skip_newlines();
    Block b;
    while (!is_punct("}")) {
      if (at_end()) fail(peek().loc, "missing '}'");
      b.push_back(parse_stmt());
      end_statement();
    }
    next();
    return b;
  }

  Stmt parse_stmt() {
    Stmt s;
    const Token& t = peek();
    s.loc = t.loc;
    if (t.kind != Tok::kIdent) fail(t.loc, fmt::format("expected a statement, found {}", describe(t)));
    if (t.text == "let") {
      next();
      s.kind = Stmt::Kind::kLet;
      s.name = expect_ident("a variable name after 'let'");
      expect_punct("=");
      s.exprs.push_back(parse_expr());
    } else if (t.text == "for") {
      next();
      s.kind = Stmt::Kind::kFor;
      s.name = expect_ident("a loop variable after 'for'");
      if (!is_ident("in")) fail(peek().loc, fmt::format("expected 'in', found {}", describe(peek())));
      next();
      s.exprs.push_back(parse_expr());
      expect_punct("..");
      s.exprs.push_back(parse_expr());
      if (is_ident("step")) {
        next();
        s.exprs.push_back(parse_expr());
      }
      s.body = parse_block();
    } else if (t.text == "while") {
      next();
      s.kind = Stmt::Kind::kWhile;
      s.exprs.push_back(parse_expr());
      s.body = parse_block();
    } else if (t.text == "if") {
      next();
      s.kind = Stmt::Kind::kIf;
      s.exprs.push_back(parse_expr());
      s.body = parse_block();
      // `else` may stand on the next line after the closing brace.
      std::size_t save = pos_;
      skip_newlines();
      if (is_ident("else")) {
        next();
        if (is_punct("{")) {
          s.else_body = parse_block();
        } else {
          Nest nest(*this, peek().loc);  // `else if` chains nest like blocks
          s.else_body.push_back(parse_stmt());
        }
      } else {
        pos_ = save;
      }
    } else if (t.text == "break" || t.text == "continue" || t.text == "exit") {
      next();
      s.kind = t.text == "break" ? Stmt::Kind::kBreak : t.text == "continue" ? Stmt::Kind::kContinue : Stmt::Kind::kExit;
    } else if (t.text == "region") {
      next();
      s.kind = Stmt::Kind::kRegion;
      s.name = expect_ident("a region name");
      s.body = parse_block();
    } else if (t.text == "elect") {
      next();
      s.kind = Stmt::Kind::kElect;
      s.body = parse_block();
    } else if (is_punct("(", 1) && peek(1).loc.line == t.loc.line &&
               peek(1).loc.col == t.loc.col + static_cast<int>(t.text.size())) {
      // NAME( directly after the name: a proc call.
      s.kind = Stmt::Kind::kCall;
      s.name = next().text;
      next();
      if (!is_punct(")")) {
        s.exprs.push_back(parse_expr());
        while (is_punct(",")) {
          next();
          s.exprs.push_back(parse_expr());
        }
      }
      expect_punct(")");
      parse_results(s);
    } else {
      s.kind = Stmt::Kind::kOp;
      s.name = next().text;
      parse_operands(s);
    }
    return s;
  }

  void parse_operands(Stmt& s) {
    while (peek().kind != Tok::kNewline && !at_end() && !is_punct("}") && !is_punct("->")) {
      Operand o;
      o.loc = peek().loc;
      if (peek().kind == Tok::kIdent && is_punct("=", 1)) {
        o.key = next().text;
        next();
      }
      if (is_punct("(") && o.key && starts_tuple()) {
        o.values = parse_tuple();
        o.tuple = true;
      } else {
        o.values.push_back(parse_expr());
      }
      s.operands.push_back(std::move(o));
    }
    parse_results(s);
  }

  // "-> a, b" after an op or a proc call: the variables that receive its results.
  void parse_results(Stmt& s) {
    if (!is_punct("->")) return;
    next();
    do {
      if (!s.results.empty()) next();
      SourceLoc loc = peek().loc;
      s.results.emplace_back(expect_ident(s.results.empty() ? "a variable name after '->'" : "a variable name"), loc);
    } while (is_punct(","));
  }

  // Precedence climbing over the C operators of language.md.
  static int precedence(const std::string& op) {
    if (op == "||") return 1;
    if (op == "&&") return 2;
    if (op == "|") return 3;
    if (op == "^") return 4;
    if (op == "&") return 5;
    if (op == "==" || op == "!=") return 6;
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return 7;
    if (op == "<<" || op == ">>") return 8;
    if (op == "+" || op == "-") return 9;
    if (op == "*" || op == "/" || op == "%") return 10;
    return 0;
  }

  Expr parse_expr(int min_prec = 1) {
    Deeper deeper(*this);  // brackets and calls recurse through here
    Expr lhs = parse_unary();
    while (peek().kind == Tok::kPunct) {
      int prec = precedence(peek().text);
      if (prec == 0 || prec < min_prec) break;
      const Token& op = next();
      Expr rhs = parse_expr(prec + 1);
      Expr e;
      e.kind = Expr::Kind::kBinary;
      e.name = op.text;
      e.loc = op.loc;
      e.args.push_back(std::move(lhs));
      e.args.push_back(std::move(rhs));
      deepen(e);
      lhs = std::move(e);
    }
    return lhs;
  }

  Expr parse_unary() {
    if (is_punct("-") || is_punct("!") || is_punct("~")) {
      Deeper deeper(*this);
      const Token& op = next();
      Expr e;
      e.kind = Expr::Kind::kUnary;
      e.name = op.text;
      e.loc = op.loc;
      e.args.push_back(parse_unary());
      return deepen(e);
    }
    return parse_primary();
  }

  Expr parse_primary() {
    const Token& t = peek();
    Expr e;
    e.loc = t.loc;
    switch (t.kind) {
      case Tok::kInt:
        next();
        e.kind = Expr::Kind::kInt;
        e.value = t.value;
        return e;
      case Tok::kWord:
        next();
        e.kind = Expr::Kind::kWord;
        e.name = t.text;
        return e;
      case Tok::kIdent:
        next();
        e.name = t.text;
        if (is_punct("[")) {
          next();
          e.kind = Expr::Kind::kIndex;
          e.args.push_back(parse_expr());
          expect_punct("]");
          deepen(e);
        } else if (is_punct("(")) {
          next();
          e.kind = Expr::Kind::kCall;
          if (!is_punct(")")) {
            e.args.push_back(parse_expr());
            while (is_punct(",")) {
              next();
              e.args.push_back(parse_expr());
            }
          }
          expect_punct(")");
          deepen(e);
        } else {
          e.kind = Expr::Kind::kName;
        }
        return e;
      case Tok::kPunct:
        if (t.text == "(") {
          next();
          e = parse_expr();
          expect_punct(")");
          ++e.depth;  // a bracket is a level of nesting too (it bounds what a chain of them costs)
          return deepen_check(e);
        }
        [[fallthrough]];
      default:
        fail(t.loc, fmt::format("expected an expression, found {}", describe(t)));
    }
  }

  Expr& deepen_check(Expr& e) {
    if (e.depth > kMaxExprDepth) fail(e.loc, fmt::format("expression nested more than {} levels deep", kMaxExprDepth));
    return e;
  }

  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  int block_depth_ = 0;
  int expr_nest_ = 0;
};

}  // namespace

namespace {
// One file's syntax tree; its imports recorded, not read.
File parse_one(std::shared_ptr<SourceFile> source) {
  File f;
  f.source = source;
  Parser p(*source);
  p.parse_file(f);
  return f;
}
}  // namespace

namespace {

constexpr int kMaxImportDepth = 16;

// Moves what an import brings (params and consts, asserts, procs) from `from` to the end of `into`.
void append_shared(File& into, File& from) {
  for (auto& d : from.definitions) into.definitions.push_back(std::move(d));
  for (auto& a : from.assertions) into.assertions.push_back(std::move(a));
  for (auto& pr : from.procs) into.procs.push_back(std::move(pr));
}

void resolve_imports(File& into, const File& f, std::set<std::string>& seen, std::vector<std::string>& chain, int depth) {
  namespace fs = std::filesystem;
  for (const Import& im : f.imports) {
    const std::string& p = im.path;
    fs::path rel(p);
    bool inside = !p.empty() && !rel.is_absolute() && p.find('\\') == std::string::npos;
    for (const auto& part : rel) inside = inside && part != "..";
    if (!inside)
      throw InputError(im.loc, fmt::format("import \"{}\": name a .pipe file by a path relative to this file, inside its folder "
                                           "(no absolute path, no '..')",
                                           printable(p)));
    if (rel.extension() != ".pipe") throw InputError(im.loc, fmt::format("import \"{}\": not a .pipe file", printable(p)));
    if (depth >= kMaxImportDepth)
      throw InputError(im.loc, fmt::format("imports nested more than {} levels deep", kMaxImportDepth));
    std::error_code ec;
    fs::path importer(f.source->name);
    if (!fs::is_regular_file(importer, ec))
      throw InputError(im.loc, fmt::format("import \"{}\": this program is not a file on disk, so it has no folder to import from",
                                           printable(p)));
    fs::path path = importer.parent_path() / rel;
    // Inside the folder for real: a symbolic link (to a file or a folder) must not lead out of it.
    fs::path folder = fs::canonical(importer.parent_path().empty() ? fs::path(".") : importer.parent_path(), ec);
    fs::path real = ec ? fs::path() : fs::canonical(path, ec);
    if (!ec) {
      auto [f_end, r_it] = std::mismatch(folder.begin(), folder.end(), real.begin(), real.end());
      if (f_end != folder.end())
        throw InputError(im.loc, fmt::format("import \"{}\": it leads out of the importing file's folder (through a symbolic link)",
                                             printable(p)));
      path = real;
    }
    std::string id = path.lexically_normal().string();  // canonical when the file exists (else reading it fails)
    if (std::find(chain.begin(), chain.end(), id) != chain.end())
      throw InputError(im.loc, fmt::format("import \"{}\": an import cycle (the file imports itself, through {})", printable(p),
                                           fmt::join(chain, " -> ")));
    if (!seen.insert(id).second) continue;  // imported before: once is enough
    std::shared_ptr<SourceFile> source;
    try {
      source = std::make_shared<SourceFile>(path.string(), read_input_file(path.string(), "imported file", kMaxSourceBytes));
    } catch (const InputError& e) {
      throw InputError(im.loc, e.message());
    }
    File sub = parse_one(source);
    if (!sub.kernels.empty()) throw InputError(sub.kernels.front().loc, "an imported file holds no kernels (params, consts, asserts and procs only)");
    if (sub.gpu) throw InputError(sub.gpu->second, "an imported file names no machine (the program's gpu line does)");
    if (!sub.reports.empty()) throw InputError(sub.reports.front().loc, "an imported file holds no reports");
    chain.push_back(id);
    resolve_imports(into, sub, seen, chain, depth + 1);
    chain.pop_back();
    into.imported.push_back(source);
    append_shared(into, sub);
  }
}

}  // namespace

File parse(std::shared_ptr<SourceFile> source) {
  File f = parse_one(source);
  if (f.imports.empty()) return f;
  File merged;
  std::set<std::string> seen;
  std::error_code ec;
  auto self = std::filesystem::weakly_canonical(source->name, ec);
  std::vector<std::string> chain{ec ? source->name : self.string()};
  seen.insert(chain.front());
  resolve_imports(merged, f, seen, chain, 0);
  // The imported files' params, consts, asserts and procs come first: the program may use them.
  append_shared(merged, f);
  f.definitions = std::move(merged.definitions);
  f.assertions = std::move(merged.assertions);
  f.procs = std::move(merged.procs);
  f.imported = std::move(merged.imported);
  f.imports.clear();
  return f;
}

}  // namespace smpipe::isa
