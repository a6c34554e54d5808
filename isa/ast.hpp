// Syntax tree of a .pipe file, as written (before parameters are bound). Every node keeps its position.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/source.hpp"

namespace smpipe::isa {

struct Expr {
  enum class Kind : std::uint8_t { kInt, kName, kIndex, kUnary, kBinary, kCall, kWord };
  Kind kind = Kind::kInt;
  std::int64_t value = 0;
  std::string name;  // kName / kIndex / kCall: the identifier; kUnary / kBinary: the operator; kWord: text
  std::vector<Expr> args;  // kIndex: [index]; kUnary: [operand]; kBinary: [lhs, rhs]; kCall: arguments
  SourceLoc loc;
  int depth = 1;  // levels of this tree (a leaf is 1), at most kMaxExprDepth
};

// An operand of an op: `key=value`, `key=(a, b)`, or a bare value.
struct Operand {
  std::optional<std::string> key;
  std::vector<Expr> values;  // one value, or the elements of a tuple
  bool tuple = false;
  SourceLoc loc;
};

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  enum class Kind : std::uint8_t { kLet, kFor, kWhile, kIf, kBreak, kContinue, kExit, kElect, kOp, kCall, kRegion };
  Kind kind = Kind::kOp;
  SourceLoc loc;
  std::string name;          // kLet / kFor: the variable; kOp: the op name; kCall: the proc
  std::vector<Expr> exprs;   // kLet: [value]; kFor: [from, to, step?]; kWhile / kIf: [condition]; kCall: arguments
  Block body;                // kFor / kWhile / kIf (then) / kElect / kRegion (name = the region)
  Block else_body;           // kIf
  std::vector<Operand> operands;  // kOp
  std::vector<std::pair<std::string, SourceLoc>> results;  // kOp: "-> a, b"
  std::int32_t origin = -1;  // kOp: an id a program generator gives the op (OpDesc::origin); -1: none
  std::string text;          // kOp made from a pipeline statement: the text reports show (else the source's)
};

struct Decl {
  enum class Kind : std::uint8_t { kMbarrier, kSmem, kTensor, kNamedBarrier, kGlobal, kPipeline };
  Kind kind = Kind::kMbarrier;
  std::string name;
  std::optional<Expr> size;  // array length
  std::optional<Expr> count;  // mbarrier count / smem bytes / named barrier id / global init
  std::string dtype;          // tensor: the dtype; pipeline: the CUTLASS class (PipelineTmaAsync, ...)
  std::vector<Operand> attrs; // pipeline: `key=value` attributes (stages=, consumers=, tx= ...)
  std::vector<Expr> shape;    // tensor
  std::optional<Expr> promotion;  // tensor: l2_promotion= (bytes)
  bool whole = false;         // smem: every access touches the whole buffer (a value, not a tile)
  SourceLoc loc;
};

struct Role {
  std::string unit;  // warp | warps | warpgroup | warpgroups
  Expr from;
  std::optional<Expr> to;
  std::string name;
  Block body;
  SourceLoc loc;
};

// A procedure: a named block with parameters, inlined at every call (`proc name(a, b) { ... }`).
struct Proc {
  std::string name;
  std::vector<std::string> params;
  std::vector<std::string> results;  // `-> a, b`: variables of the body copied to the caller's `-> x, y`
  Block body;
  SourceLoc loc;
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<Expr> grid, cluster;  // empty: default (1,1,1)
  std::optional<Expr> warps, smem, regs;
  SourceLoc grid_loc, cluster_loc;
  std::vector<Decl> decls;
  std::vector<Role> roles;
  std::vector<Proc> procs;
};

struct Definition {  // param / const
  std::string name;
  Expr value;
  bool overridable = false;
  SourceLoc loc;
};

// `assert EXPR "message"`: a check on the parameters, like CUTLASS's static_asserts.
struct Assertion {
  Expr condition;
  std::string message;
  SourceLoc loc;
};

// `report NAME = EXPR`: a derived figure shown in the summary (e.g. the number of tiles).
struct Report {
  std::string name;
  Expr value;
  SourceLoc loc;
};

// `import "name.pipe"`: the params, consts, asserts and procs of another file.
struct Import {
  std::string path;  // as written
  SourceLoc loc;
};

struct File {
  std::shared_ptr<SourceFile> source;
  std::vector<Definition> definitions;  // in order of appearance (those of imported files first)
  std::vector<Assertion> assertions;
  std::vector<Report> reports;
  std::optional<std::pair<std::string, SourceLoc>> gpu;
  std::vector<Kernel> kernels;
  std::vector<Proc> procs;      // file-level procs (every kernel of the file sees them)
  std::vector<Import> imports;  // not resolved yet (parse resolves them and empties this)
  std::vector<std::shared_ptr<SourceFile>> imported;  // the files imported, kept alive for their locations
};

// A program's syntax tree: the file and, depth first, the files it imports (read here). An import names a
// .pipe file by a path relative to the importing file, inside its folder (no absolute path, no `..`); each
// file is read once (a second import of it is ignored); an import cycle, a kernel, gpu line or report in an
// imported file, or more than 16 levels of imports are input errors at the import.
File parse(std::shared_ptr<SourceFile> source);

}  // namespace smpipe::isa
