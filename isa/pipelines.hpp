// CUTLASS's pipeline classes in the language: `pipeline NAME CLASS attr=...` declares the pair of mbarrier
// arrays a class owns (NAME.full, NAME.empty; NAME.bar for OrderedSequenceBarrier) with the counts CUTLASS
// gives them, and the pipeline statements (producer_acquire NAME STATE ...) are lowered to the mbarrier ops
// the class's member functions execute. A state is an integer: the number of stages the role has moved
// through; its index is STATE % stages and its phase (STATE / stages) & 1, as cutlass::PipelineState counts.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/ast.hpp"

namespace smpipe::isa {

enum class PipelineClass : std::uint8_t { kTmaAsync, kTmaUmmaAsync, kUmmaAsync, kTransactionAsync, kAsync, kOrderedSequence };

struct PipelineInfo {
  std::string name;
  PipelineClass cls = PipelineClass::kAsync;
  std::int64_t stages = 1;     // OrderedSequenceBarrier: its depth
  std::int64_t length = 0;     // OrderedSequenceBarrier: the number of groups
  std::int64_t consumers = 0;  // PipelineTmaAsync: consumer threads (how a cluster's releases are spread)
  std::optional<std::int64_t> tx;  // bytes a stage expects (producer_acquire / producer_expect_tx)
  std::int64_t full_count = 1, empty_count = 1;  // OrderedSequenceBarrier: full_count is the group size
  std::array<std::int64_t, 3> cluster{1, 1, 1};
  SourceLoc loc;

  struct Barrier {
    std::string name;   // NAME.full, NAME.empty or NAME.bar
    std::int64_t size;  // array length
    std::int64_t count; // arrival count
  };
  std::vector<Barrier> barriers() const;
};

std::string_view pipeline_class_name(PipelineClass c);
// The classes by their CUTLASS names, in enum order.
const std::vector<std::string_view>& pipeline_class_names();
// The attributes a class takes: (name, required).
std::vector<std::pair<std::string_view, bool>> pipeline_attributes(PipelineClass c);

// Checks a `pipeline` declaration in a kernel of this cluster shape. `eval` folds an attribute's value to a
// constant (and throws InputError when it is not one). Throws InputError.
PipelineInfo declare_pipeline(const Decl& d, const std::array<std::int64_t, 3>& cluster,
                              const std::function<std::int64_t(const Expr&)>& eval);

// The pipeline statements, and those a class has.
const std::vector<std::string_view>& pipeline_statements();
bool is_pipeline_statement(std::string_view name);
std::vector<std::string_view> pipeline_statements_of(PipelineClass c);
// The pipeline a pipeline statement names (its first operand). Throws InputError.
std::string pipeline_named(const Stmt& s);

// One pipeline statement as the statements it stands for (mbarrier ops, elect, if, for); `written` is the
// statement as written, from which each op's text is made ("producer_acquire ml k: wait ml.empty").
// Throws InputError.
Block lower_pipeline_statement(const Stmt& s, const PipelineInfo& p, const std::string& written);

}  // namespace smpipe::isa
