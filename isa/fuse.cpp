#include "isa/fuse.hpp"

#include <limits>

namespace smpipe::isa {

namespace {

bool slot16(std::uint32_t s) { return s <= std::numeric_limits<std::uint16_t>::max(); }

}  // namespace

void fuse(RoleCode& role) {
  const std::vector<Instr>& code = role.code;
  std::size_t n = code.size();
  // A run may start at a jump target but not contain one after its first instruction.
  std::vector<bool> target(n + 1, false);
  for (const Instr& in : code)
    if ((in.opc == Opc::kJump || in.opc == Opc::kJumpIfZero) && in.a <= n) target[in.a] = true;
  auto is = [&](std::size_t i, Opc o) { return i < n && code[i].opc == o && !target[i]; };

  std::vector<Instr> fast;
  std::vector<std::uint32_t> orig;
  std::vector<std::uint32_t> at(n + 1, 0);  // code index -> fast index (of the run it starts)
  for (std::size_t i = 0; i < n;) {
    const Instr& c0 = code[i];
    Instr f = c0;
    std::size_t len = 1;
    if (c0.opc == Opc::kLoad && is(i + 1, Opc::kLoad) && is(i + 2, Opc::kBinary) && slot16(code[i + 1].a)) {
      // load a; load b; binary op [; jz T]
      f = code[i + 2];
      f.a = c0.a;
      f.b = static_cast<std::uint16_t>(code[i + 1].a);
      if (is(i + 3, Opc::kJumpIfZero)) {
        f.opc = Opc::kLoadLoadBinJz;
        f.imm = code[i + 3].a;  // fixed below
        len = 4;
      } else {
        f.opc = Opc::kLoadLoadBin;
        len = 3;
      }
    } else if (c0.opc == Opc::kLoad && is(i + 1, Opc::kPush) && is(i + 2, Opc::kBinary)) {
      // load a; push c; binary op [; store d]
      f = code[i + 2];
      f.a = c0.a;
      f.imm = code[i + 1].imm;
      if (is(i + 3, Opc::kStore) && slot16(code[i + 3].a)) {
        f.opc = Opc::kLoadBinImmStore;
        f.b = static_cast<std::uint16_t>(code[i + 3].a);
        len = 4;
      } else {
        f.opc = Opc::kLoadBinImm;
        len = 3;
      }
    } else if (c0.opc == Opc::kPush && is(i + 1, Opc::kBinary)) {
      // push c; binary op [; store d]
      f = code[i + 1];
      f.imm = c0.imm;
      if (is(i + 2, Opc::kStore)) {
        f.opc = Opc::kBinImmStore;
        f.a = code[i + 2].a;
        len = 3;
      } else {
        f.opc = Opc::kBinImm;
        len = 2;
      }
    } else if (c0.opc == Opc::kLoad && is(i + 1, Opc::kBinary)) {
      f = code[i + 1];
      f.opc = Opc::kBinLoad;
      f.a = c0.a;
      len = 2;
    } else if (c0.opc == Opc::kPush && is(i + 1, Opc::kStore)) {
      f = code[i + 1];
      f.opc = Opc::kSet;
      f.imm = c0.imm;
      len = 2;
    }
    for (std::size_t k = 0; k < len; ++k) at[i + k] = static_cast<std::uint32_t>(fast.size());
    fast.push_back(f);
    orig.push_back(static_cast<std::uint32_t>(i));
    i += len;
  }
  at[n] = static_cast<std::uint32_t>(fast.size());
  orig.push_back(static_cast<std::uint32_t>(n));
  for (Instr& f : fast) {
    if (f.opc == Opc::kJump || f.opc == Opc::kJumpIfZero) f.a = at[f.a];
    if (f.opc == Opc::kLoadLoadBinJz) f.imm = at[static_cast<std::size_t>(f.imm)];
  }
  role.fast = std::move(fast);
  role.fast_orig = std::move(orig);
}

}  // namespace smpipe::isa
