// HLO text printer. One canonical form, the one XLA itself prints after SPMD partitioning:
//
//   HloModule name, attr=value, ...            (module attributes verbatim, in order)
//   <blank line>
//   FileNames / FunctionNames / FileLocations / StackFrames tables (when the input had them)
//   %comp (p: f32[2]) -> f32[2] {              (every computation with '%' and a signature;
//     %p = f32[2]{0} parameter(0)               parameter and result shapes without layout)
//     ROOT %x = f32[2]{0} add(%p, %p), attrs
//   }
//   ENTRY %main (...) -> ... { ... }
//
// Instructions keep their order; get-tuple-elements that were written inline as %t#i are
// printed inline again. Attributes follow XLA's order: opcode-specific ones, unknown ones
// (verbatim), called computations, sharding, frontend_attributes, metadata, backend_config.
// Long operand lists and tuple shapes carry /*index=N*/ every five entries, as XLA does.
#include "text/printer.h"

#include "ir/tuple_sharding.h"
#include "text/attribute_text.h"
#include "text/literal_text.h"

namespace gspmd {
namespace {

using hlo_text::ComparisonDirectionName;
using hlo_text::ComparisonTypeName;
using hlo_text::DimLabelsToString;
using hlo_text::IntListToString;
using hlo_text::PaddingToString;
using hlo_text::SliceToString;
using hlo_text::SourceTargetPairsToString;
using hlo_text::WindowToString;

bool PrintsInline(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kGetTupleElement && instruction.printed_as_tuple_ref &&
         instruction.operand_count() == 1 &&
         (instruction.parent() == nullptr || instruction.parent()->root() != &instruction);
}

void AppendOperandName(std::string& out, const Instruction& operand) {
  if (PrintsInline(operand)) {
    AppendOperandName(out, *operand.operand(0));
    out += '#';
    out += std::to_string(operand.tuple_index);
    return;
  }
  out += '%';
  out += operand.name();
}

// Collects "name=value" pieces and joins them with ", ".
class AttributeList {
 public:
  explicit AttributeList(std::string& out) : out_(out) {}
  void Add(std::string_view name, std::string_view value) {
    out_ += ", ";
    out_ += name;
    out_ += '=';
    out_ += value;
  }
  void AddBool(std::string_view name, bool value) { Add(name, value ? "true" : "false"); }
  void AddInt(std::string_view name, int64_t value) { Add(name, std::to_string(value)); }
  void AddList(std::string_view name, const std::vector<int64_t>& values) { Add(name, IntListToString(values)); }
  void AddNonEmptyList(std::string_view name, const std::vector<int64_t>& values) {
    if (!values.empty()) AddList(name, values);
  }
  void AddComputation(std::string_view name, const Computation* computation) {
    if (computation != nullptr) Add(name, "%" + computation->name());
  }
  void AddComputationList(std::string_view name, const std::vector<Computation*>& computations) {
    std::string value = "{";
    for (size_t i = 0; i < computations.size(); ++i) {
      if (i > 0) value += ", ";
      value += "%" + computations[i]->name();
    }
    Add(name, value + "}");
  }

 private:
  std::string& out_;
};

// compare's type as order= spells it: PARTIAL for IEEE comparison of floats (and complex
// numbers), TOTAL for the float total order and for integers.
std::string_view ComparisonOrderName(const Instruction& compare) {
  ComparisonType type = compare.comparison_type;
  if (type == ComparisonType::kDefault && compare.operand_count() > 0 && compare.operand(0)->shape().IsArray()) {
    ElementType element = compare.operand(0)->shape().element_type();
    if (IsFloatingPoint(element) || IsComplex(element)) type = ComparisonType::kFloat;
  }
  return type == ComparisonType::kFloat ? "PARTIAL" : "TOTAL";
}

void AddCollectiveBase(AttributeList& attrs, const Instruction& instruction) {
  if (instruction.channel_id) attrs.AddInt("channel_id", *instruction.channel_id);
  if (instruction.opcode() == Opcode::kCollectivePermute || instruction.opcode() == Opcode::kCollectivePermuteStart)
    return;
  if (instruction.has_replica_groups || !instruction.replica_groups().empty())
    attrs.Add("replica_groups", instruction.replica_groups().ToString());
  if (instruction.constrain_layout) attrs.AddBool("constrain_layout", true);
}

void AddOpcodeAttributes(AttributeList& attrs, const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kGetTupleElement:
      attrs.AddInt("index", instruction.tuple_index);
      return;
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kReduce: case Opcode::kReverse:
    case Opcode::kConcatenate: case Opcode::kMap: case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
      attrs.AddList("dimensions", instruction.dimensions);
      return;
    case Opcode::kSort:
      attrs.AddList("dimensions", instruction.dimensions);
      if (instruction.is_stable) attrs.AddBool("is_stable", true);
      return;
    case Opcode::kTopK:
      attrs.AddInt("k", instruction.k);
      attrs.AddBool("largest", instruction.largest);
      if (instruction.is_stable) attrs.AddBool("is_stable", true);
      return;
    case Opcode::kIota:
      attrs.AddInt("iota_dimension", instruction.iota_dimension);
      return;
    case Opcode::kSlice:
      attrs.Add("slice", SliceToString(instruction.slice()));
      return;
    case Opcode::kDynamicSlice:
      attrs.AddList("dynamic_slice_sizes", instruction.dynamic_slice_sizes());
      return;
    case Opcode::kPad:
      attrs.Add("padding", PaddingToString(instruction.padding()));
      return;
    case Opcode::kReduceWindow: case Opcode::kSelectAndScatter:
      attrs.Add("window", WindowToString(instruction.window()));
      return;
    case Opcode::kConvolution:
      if (!instruction.window().empty()) attrs.Add("window", WindowToString(instruction.window()));
      attrs.Add("dim_labels", DimLabelsToString(instruction.conv_dims()));
      if (instruction.feature_group_count != 1) attrs.AddInt("feature_group_count", instruction.feature_group_count);
      if (instruction.batch_group_count != 1) attrs.AddInt("batch_group_count", instruction.batch_group_count);
      return;
    case Opcode::kDot: {
      const DotDimensionNumbers& dims = instruction.dot_dims();
      attrs.AddNonEmptyList("lhs_batch_dims", dims.lhs_batch_dims);
      attrs.AddNonEmptyList("lhs_contracting_dims", dims.lhs_contracting_dims);
      attrs.AddNonEmptyList("rhs_batch_dims", dims.rhs_batch_dims);
      attrs.AddNonEmptyList("rhs_contracting_dims", dims.rhs_contracting_dims);
      return;
    }
    case Opcode::kGather: {
      const GatherDimensionNumbers& dims = instruction.gather_dims();
      attrs.AddList("offset_dims", dims.offset_dims);
      attrs.AddList("collapsed_slice_dims", dims.collapsed_slice_dims);
      attrs.AddList("start_index_map", dims.start_index_map);
      attrs.AddNonEmptyList("operand_batching_dims", dims.operand_batching_dims);
      attrs.AddNonEmptyList("start_indices_batching_dims", dims.start_indices_batching_dims);
      attrs.AddInt("index_vector_dim", dims.index_vector_dim);
      attrs.AddList("slice_sizes", instruction.gather_slice_sizes());
      if (instruction.indices_are_sorted) attrs.AddBool("indices_are_sorted", true);
      return;
    }
    case Opcode::kScatter: {
      const ScatterDimensionNumbers& dims = instruction.scatter_dims();
      attrs.AddList("update_window_dims", dims.update_window_dims);
      attrs.AddList("inserted_window_dims", dims.inserted_window_dims);
      attrs.AddList("scatter_dims_to_operand_dims", dims.scatter_dims_to_operand_dims);
      attrs.AddNonEmptyList("input_batching_dims", dims.input_batching_dims);
      attrs.AddNonEmptyList("scatter_indices_batching_dims", dims.scatter_indices_batching_dims);
      attrs.AddInt("index_vector_dim", dims.index_vector_dim);
      if (instruction.indices_are_sorted) attrs.AddBool("indices_are_sorted", true);
      if (instruction.unique_indices) attrs.AddBool("unique_indices", true);
      return;
    }
    case Opcode::kCompare:
      attrs.Add("direction", ComparisonDirectionName(instruction.comparison_direction));
      if (instruction.comparison_written_as_order)
        attrs.Add("order", ComparisonOrderName(instruction));
      else if (instruction.comparison_type != ComparisonType::kDefault)
        attrs.Add("type", ComparisonTypeName(instruction.comparison_type));
      return;
    case Opcode::kCustomCall:
      attrs.Add("custom_call_target", "\"" + instruction.custom_call_target + "\"");
      if (instruction.custom_call_has_side_effect) attrs.AddBool("custom_call_has_side_effect", true);
      return;
    case Opcode::kReducePrecision:
      attrs.AddInt("exponent_bits", instruction.exponent_bits);
      attrs.AddInt("mantissa_bits", instruction.mantissa_bits);
      return;
    case Opcode::kRng:
      if (!instruction.rng_distribution().empty()) attrs.Add("distribution", instruction.rng_distribution());
      return;
    case Opcode::kAllReduce:
      AddCollectiveBase(attrs, instruction);
      if (instruction.use_global_device_ids) attrs.AddBool("use_global_device_ids", true);
      return;
    case Opcode::kAllGather:
      AddCollectiveBase(attrs, instruction);
      attrs.AddList("dimensions", instruction.dimensions);
      if (instruction.use_global_device_ids) attrs.AddBool("use_global_device_ids", true);
      return;
    case Opcode::kReduceScatter:
      AddCollectiveBase(attrs, instruction);
      if (instruction.use_global_device_ids) attrs.AddBool("use_global_device_ids", true);
      attrs.AddList("dimensions", instruction.dimensions);
      return;
    case Opcode::kAllToAll:
      AddCollectiveBase(attrs, instruction);
      attrs.AddNonEmptyList("dimensions", instruction.dimensions);
      return;
    case Opcode::kCollectiveBroadcast:
      AddCollectiveBase(attrs, instruction);
      return;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      AddCollectiveBase(attrs, instruction);
      attrs.Add("source_target_pairs", SourceTargetPairsToString(instruction.source_target_pairs()));
      return;
    default:
      return;
  }
}

void AddCalledComputations(AttributeList& attrs, const Instruction& instruction) {
  const std::vector<Computation*>& called = instruction.called_computations();
  if (called.empty()) return;
  switch (instruction.opcode()) {
    case Opcode::kWhile:
      attrs.AddComputation("condition", called.at(0));
      if (called.size() > 1) attrs.AddComputation("body", called[1]);
      return;
    case Opcode::kSelectAndScatter:
      attrs.AddComputation("select", called.at(0));
      if (called.size() > 1) attrs.AddComputation("scatter", called[1]);
      return;
    case Opcode::kConditional:
      if (instruction.conditional_uses_branch_list || called.size() != 2) {
        attrs.AddComputationList("branch_computations", called);
        return;
      }
      attrs.AddComputation("true_computation", called[0]);
      attrs.AddComputation("false_computation", called[1]);
      return;
    case Opcode::kFusion: case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
      attrs.AddComputation("calls", called[0]);
      return;
    case Opcode::kCustomCall:
      attrs.AddComputationList("called_computations", called);
      return;
    default:
      if (called.size() == 1) {
        attrs.AddComputation("to_apply", called[0]);
        return;
      }
      attrs.AddComputationList("called_computations", called);
      return;
  }
}

void AppendOperands(std::string& out, const Instruction& instruction) {
  out += '(';
  if (instruction.opcode() == Opcode::kConstant) {
    out += instruction.literal() ? PrintLiteral(*instruction.literal()) : "{...}";  // {...}: elided in the input
  } else if (instruction.opcode() == Opcode::kParameter) {
    out += std::to_string(instruction.parameter_number);
  } else {
    const auto& operands = instruction.operands();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i > 0) out += ", ";
      if (i > 0 && i % 5 == 0) out += "/*index=" + std::to_string(i) + "*/";
      AppendOperandName(out, *operands[i]);
    }
  }
  out += ')';
}

void AppendInstruction(std::string& out, const Instruction& instruction) {
  out += '%';
  out += instruction.name();
  out += " = ";
  out += instruction.shape().ToString(true);
  out += ' ';
  if (!instruction.async_wrapped_opcode().empty()) {  // custom-call-start: XLA's short async form
    out += instruction.async_wrapped_opcode();
    out += OpcodeName(instruction.opcode()).substr(std::string_view("async").size());
  } else {
    out += OpcodeName(instruction.opcode());
  }
  AppendOperands(out, instruction);
  AttributeList attrs(out);
  AddOpcodeAttributes(attrs, instruction);
  for (const auto& [name, value] : instruction.extra_attributes()) attrs.Add(name, value);
  AddCalledComputations(attrs, instruction);
  if (instruction.sharding()) attrs.Add("sharding", FlattenTupleSharding(*instruction.sharding()).ToString());
  if (!instruction.frontend_attributes.empty())
    attrs.Add("frontend_attributes", "{" + instruction.frontend_attributes + "}");
  if (!instruction.metadata.empty()) attrs.Add("metadata", "{" + instruction.metadata + "}");
  if (instruction.backend_config) attrs.Add("backend_config", *instruction.backend_config);
}

void AppendComputation(std::string& out, const Computation& computation) {
  if (computation.is_entry) out += "ENTRY ";
  out += '%';
  out += computation.name();
  out += " (";
  bool first = true;
  for (const Instruction* parameter : computation.parameters()) {
    if (parameter == nullptr) continue;
    if (!first) out += ", ";
    first = false;
    out += parameter->name();
    out += ": ";
    out += parameter->shape().ToString(false);
  }
  out += ") -> ";
  out += computation.root() ? computation.root()->shape().ToString(false) : "()";
  out += " {\n";
  for (const auto& instruction : computation.instructions()) {
    if (PrintsInline(*instruction)) continue;
    out += "  ";
    if (instruction.get() == computation.root()) out += "ROOT ";
    AppendInstruction(out, *instruction);
    out += '\n';
  }
  out += "}";
  if (!computation.execution_thread.empty()) out += ", execution_thread=\"" + computation.execution_thread + "\"";
  out += "\n";
}

void AppendDebugTable(std::string& out, std::string_view name, const std::vector<std::string>& lines) {
  out += name;
  out += '\n';
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  out += '\n';
}

}  // namespace

std::string PrintModule(const Module& module) {
  std::string out;
  out.reserve(1 << 16);
  out += "HloModule ";
  out += module.name();
  for (const auto& [name, value] : module.attributes) {
    out += ", ";
    out += name;
    out += '=';
    out += value;
  }
  out += "\n\n";
  const DebugTables& tables = module.debug_tables;
  if (tables.present) {
    AppendDebugTable(out, "FileNames", tables.file_names);
    AppendDebugTable(out, "FunctionNames", tables.function_names);
    AppendDebugTable(out, "FileLocations", tables.file_locations);
    AppendDebugTable(out, "StackFrames", tables.stack_frames);
    out += '\n';
  }
  for (const auto& computation : module.computations()) {
    AppendComputation(out, *computation);
    out += '\n';
  }
  return out;
}

std::string PrintComputation(const Computation& computation) {
  std::string out;
  AppendComputation(out, computation);
  return out;
}

std::string PrintInstruction(const Instruction& instruction) {
  std::string out;
  AppendInstruction(out, instruction);
  return out;
}

}  // namespace gspmd
