// Instruction: one HLO operation, its operands, called computations and attributes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"
#include "sharding/replica_groups.h"
#include "sharding/sharding.h"
#include "support/diagnostic.h"

namespace gspmd {

class Computation;

// Where a user wrote an instruction: FILE:LINE:COL and the name it had there. Shared
// (immutable) between an instruction and its clones and the instructions passes make for it.
struct InstructionSource {
  SourceLocation location;
  std::string name;
};

// An HLO instruction:
//   %dot.1 = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0},
//            sharding={devices=[8,1]<=[8]}, metadata={op_name="dot"}
// Invariants: operands belong to the same computation and precede this instruction in it;
// users() lists each user once per use. Attributes that an opcode does not use stay empty.
// metadata, frontend_attributes and backend_config are kept verbatim (the text between the
// outer braces / quotes) so they round-trip unchanged; unknown attributes likewise live in
// extra_attributes.
class Instruction {
 public:
  Instruction(Opcode opcode, Shape shape, std::string name = "");

  // A copy of this instruction (every attribute, the name, the sharding and the called
  // computations) with another shape and other operands; not yet in any computation.
  std::unique_ptr<Instruction> CloneWithNewOperands(Shape shape,
                                                    const std::vector<Instruction*>& operands) const;

  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  void set_shape(Shape shape) { shape_ = std::move(shape); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Computation* parent() const { return parent_; }
  int64_t unique_id() const { return unique_id_; }

  // Operands and users.
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_.at(i); }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(Instruction* operand);
  void ReplaceOperand(int64_t i, Instruction* new_operand);
  void ReplaceAllUsesWith(Instruction* replacement);
  const std::vector<Instruction*>& users() const { return users_; }

  // Called computations: to_apply (reduce, map, sort, call, all-reduce, scatter, ...),
  // condition/body (while), branch computations (conditional), select/scatter
  // (select-and-scatter: called_computations = {select, scatter}), calls (fusion).
  const std::vector<Computation*>& called_computations() const { return called_; }
  void set_called_computations(std::vector<Computation*> called) { called_ = std::move(called); }
  Computation* to_apply() const;                 // the single called computation
  Computation* while_condition() const { return called_.at(0); }
  Computation* while_body() const { return called_.at(1); }
  // Which text form conditional branches were written in (true_/false_computation or
  // branch_computations).
  bool conditional_uses_branch_list = false;

  // Where the user wrote this instruction (nullptr when it was not read from text). Clones keep
  // it, and instructions a pass creates for a user's instruction take it, so errors found late
  // still name the user's instruction and its FILE:LINE:COL (see ir/instruction_error.h).
  const InstructionSource* source() const { return source_.get(); }
  void set_source(std::shared_ptr<const InstructionSource> source) { source_ = std::move(source); }
  void CopySourceFrom(const Instruction& other) { source_ = other.source_; }

  // Sharding (absent when the text had none).
  const std::optional<Sharding>& sharding() const { return sharding_; }
  void set_sharding(std::optional<Sharding> sharding) { sharding_ = std::move(sharding); }

  // ---- Opcode-specific attributes ----
  // Small ones live here; the large, rarely used ones live out of line (below) so that an
  // instruction stays small: passes walk every instruction of modules with tens of thousands.
  int64_t parameter_number = 0;         // parameter
  int64_t tuple_index = 0;              // get-tuple-element
  bool printed_as_tuple_ref = false;    // get-tuple-element written inline as %t#1
  std::vector<int64_t> dimensions;      // broadcast, transpose, reduce, reverse, concatenate,
                                        // all-gather/all-to-all/reduce-scatter (dimensions={d}),
                                        // sort, map, get-dimension-size
  int64_t iota_dimension = 0;           // iota
  int64_t feature_group_count = 1;      // convolution
  int64_t batch_group_count = 1;        // convolution
  bool indices_are_sorted = false;      // gather, scatter
  bool unique_indices = false;          // scatter
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;  // compare
  ComparisonType comparison_type = ComparisonType::kDefault;            // compare
  bool comparison_written_as_order = false;  // compare: its type was written order=TOTAL/PARTIAL
  bool is_stable = false;               // sort, topk
  int64_t k = 0;                        // topk
  bool largest = true;                  // topk
  std::string custom_call_target;       // custom-call
  bool custom_call_has_side_effect = false;
  int64_t exponent_bits = 0, mantissa_bits = 0;  // reduce-precision
  std::optional<int64_t> channel_id;    // collectives
  bool has_replica_groups = false;      // replica_groups attribute was written
  bool use_global_device_ids = false;
  bool constrain_layout = false;

  // Out-of-line attributes: name() reads (the default when never written), mutable_name()
  // writes. Clones share them until one of the two writes.
  using NamedAttributes = std::vector<std::pair<std::string, std::string>>;
#define GSPMD_OUT_OF_LINE_ATTRIBUTE(type, name)                    \
  const type& name() const { return attributes().name; }          \
  type& mutable_##name() { return MutableAttributes().name; }
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::optional<Literal>, literal)              // constant
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::vector<SliceDim>, slice)                 // slice
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::vector<int64_t>, dynamic_slice_sizes)    // dynamic-slice
  GSPMD_OUT_OF_LINE_ATTRIBUTE(PaddingConfig, padding)                       // pad
  GSPMD_OUT_OF_LINE_ATTRIBUTE(Window, window)          // reduce-window, convolution, select-and-scatter
  GSPMD_OUT_OF_LINE_ATTRIBUTE(ConvDimensionNumbers, conv_dims)              // convolution
  GSPMD_OUT_OF_LINE_ATTRIBUTE(DotDimensionNumbers, dot_dims)                // dot
  GSPMD_OUT_OF_LINE_ATTRIBUTE(GatherDimensionNumbers, gather_dims)          // gather
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::vector<int64_t>, gather_slice_sizes)     // gather
  GSPMD_OUT_OF_LINE_ATTRIBUTE(ScatterDimensionNumbers, scatter_dims)        // scatter
  GSPMD_OUT_OF_LINE_ATTRIBUTE(ReplicaGroups, replica_groups)                // collectives
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::vector<SourceTargetPair>, source_target_pairs)  // collective-permute
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::string, rng_distribution)                // rng
  // async-start/update/done written in XLA's short form (custom-call-start): the wrapped opcode.
  GSPMD_OUT_OF_LINE_ATTRIBUTE(std::string, async_wrapped_opcode)
  GSPMD_OUT_OF_LINE_ATTRIBUTE(NamedAttributes, extra_attributes)  // unknown name=value, verbatim
#undef GSPMD_OUT_OF_LINE_ATTRIBUTE

  // Verbatim attributes.
  std::string metadata;             // inside metadata={...}
  std::string frontend_attributes;  // inside frontend_attributes={...}
  std::optional<std::string> backend_config;  // the value as written (quoted string or {...})

  // Frontend attribute lookup by key (parses the verbatim text; "" when absent).
  std::string FrontendAttribute(const std::string& key) const;

 private:
  friend class Computation;
  struct OutOfLineAttributes {
    std::optional<Literal> literal;
    std::vector<SliceDim> slice;
    std::vector<int64_t> dynamic_slice_sizes;
    PaddingConfig padding;
    Window window;
    ConvDimensionNumbers conv_dims;
    DotDimensionNumbers dot_dims;
    GatherDimensionNumbers gather_dims;
    std::vector<int64_t> gather_slice_sizes;
    ScatterDimensionNumbers scatter_dims;
    ReplicaGroups replica_groups;
    std::vector<SourceTargetPair> source_target_pairs;
    std::string rng_distribution;
    std::string async_wrapped_opcode;
    NamedAttributes extra_attributes;
  };
  const OutOfLineAttributes& attributes() const;
  OutOfLineAttributes& MutableAttributes();

  Opcode opcode_;
  Shape shape_;
  std::string name_;
  Computation* parent_ = nullptr;
  int64_t unique_id_ = -1;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Computation*> called_;
  std::optional<Sharding> sharding_;
  std::shared_ptr<const OutOfLineAttributes> attributes_;  // nullptr: all at their defaults
  std::shared_ptr<const InstructionSource> source_;
};

}  // namespace gspmd
