// fuzz_machine: arbitrary bytes as a machine file (models/machines/*.json, docs/models.md), read by
// parse_machine, then built-in example programs compiled and simulated on the machine it describes, with
// every report. Structure-aware: mutate_machine changes values of the JSON tree (json_mutator.hpp).
#include <memory>
#include <string>
#include <vector>

#include "fuzz/common.hpp"
#include "fuzz/json_mutator.hpp"
#include "fuzz/targets.hpp"
#include "isa/ast.hpp"

namespace smpipe::fuzz {

namespace {

// Small examples that together use the units a machine file describes: the Hopper mainloop (TMA, wgmma,
// mbarriers), every Hopper op, every Blackwell op (tensor memory, CLC) and global-memory synchronisation.
const std::vector<isa::File>& programs() {
  static const std::vector<isa::File> files = [] {
    std::vector<isa::File> v;
    for (const char* name : {"mainloop", "all_ops_sm90", "all_ops_sm100", "global_sync"}) {
      std::string path = models::kernels_dir() + "/examples/" + name + ".pipe";
      try {
        v.push_back(isa::parse(isa::load_source(path)));
      } catch (const std::exception& e) {
        fail("fuzz setup", "cannot read " + path + " (set SMPIPE_KERNELS to models/kernels): " + e.what());
      }
    }
    return v;
  }();
  return files;
}

const JsonVocabulary& machine_vocabulary() {
  static const JsonVocabulary v = [] {
    JsonVocabulary v;
    for (const models::UnitChoice& u : models::known_units()) {
      v.strings.emplace_back(u.impl);
      v.keys.emplace_back(u.unit);
    }
    for (const models::MachineParam& p : models::machine_params()) v.keys.emplace_back(p.name);
    for (const char* k : {"name", "description", "gpu_names", "units", "impl", "params", "value", "source", "note", "gpcs", "sms",
                          "hbm_loaded_latency", "utilisation", "cycles"})
      v.keys.emplace_back(k);
    for (const char* w : {"h100-sxm", "h200", "b200", "H100", "H200", "B200", "published: x", "measured: x",
                          "derived: x", "estimate: x"})
      v.strings.emplace_back(w);
    return v;
  }();
  return v;
}

}  // namespace

int fuzz_one_machine(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxFuzzInput) return 0;
  const auto& files = programs();
  std::string text(reinterpret_cast<const char*>(data), size);
  guarded("fuzz_machine", [&] {
    models::Machine machine = models::parse_machine(text, "fuzz.machine.json");
    auto predefined = models::predefined_constants(machine);
    std::uint64_t variant = input_hash(data, size) | 1;  // not jittered: the machine is what varies
    for (const isa::File& file : files)
      guarded("fuzz_machine", [&] { run_program("fuzz_machine", isa::compile(file, {}, "", predefined), machine, variant); });
  });
  return 0;
}

std::size_t mutate_machine(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed, MutateFn fallback) {
  return mutate_json(data, size, max_size, seed, machine_vocabulary(), fallback);
}

}  // namespace smpipe::fuzz
