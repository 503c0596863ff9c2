// Regions as HLO computations: flat parameters or one tuple parameter.
#include "frontend/stablehlo/regions.h"

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {

Instruction* RegionRoot(ModuleReader& reader, Region& region, bool always_tuple) {
  if (region.returned.size() == 1 && !always_tuple) return region.returned[0];
  std::vector<Shape> shapes;
  for (const Instruction* value : region.returned) shapes.push_back(value->shape());
  auto tuple = MakeInstruction(Opcode::kTuple, Shape::Tuple(std::move(shapes)), region.returned);
  tuple->set_name(reader.names().ForOpcode(Opcode::kTuple));
  Instruction* raw = tuple.get();
  region.body.push_back(std::move(tuple));
  return raw;
}

Computation* FlatComputation(ModuleReader& reader, Region& region, const OpSyntax& op, std::string_view base_name,
                             bool always_tuple_root) {
  if (!region.captures.empty())
    reader.Error(region.captures.front().use_pos,
                 StrCat("a value defined outside the region is used in the region of ", op.name,
                        ": expected the region to use only its block arguments and constants"));
  Computation* computation = reader.NewComputation(base_name);
  for (Instruction* arg : region.args) arg->set_name(reader.names().ForParameter(arg->parameter_number));
  Instruction* root = RegionRoot(reader, region, always_tuple_root);
  std::vector<std::unique_ptr<Instruction>> instructions = std::move(region.owned_args);
  for (auto& instruction : region.body) instructions.push_back(std::move(instruction));
  reader.DefineComputation(computation, std::move(instructions), root);
  return computation;
}

std::vector<Instruction*> UnpackTupleParameter(ModuleReader& reader, const std::vector<Shape>& shapes,
                                               const std::vector<Instruction*>& placeholders, Region& region,
                                               std::vector<std::unique_ptr<Instruction>>& prefix) {
  auto parameter = std::make_unique<Instruction>(Opcode::kParameter, Shape::Tuple(shapes), reader.names().ForParameter(0, /*tuple=*/true));
  Instruction* tuple = parameter.get();
  prefix.push_back(std::move(parameter));
  std::vector<Instruction*> elements;
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto gte = MakeInstruction(Opcode::kGetTupleElement, shapes[i], {tuple});
    gte->tuple_index = static_cast<int64_t>(i);
    gte->set_name(reader.names().ForOpcode(Opcode::kGetTupleElement));
    Instruction* element = gte.get();
    prefix.push_back(std::move(gte));
    Instruction* placeholder = i < placeholders.size() ? placeholders[i] : nullptr;
    if (placeholder != nullptr) {
      placeholder->ReplaceAllUsesWith(element);
      for (Instruction*& value : region.returned)
        if (value == placeholder) value = element;
    }
    elements.push_back(element);
  }
  return elements;
}

void DefineFromRegion(ModuleReader& reader, Computation* computation, std::vector<std::unique_ptr<Instruction>> prefix,
                      Region& region, Instruction* root) {
  for (auto& instruction : region.body) prefix.push_back(std::move(instruction));
  reader.DefineComputation(computation, std::move(prefix), root);
}

void CheckRegionArgs(ModuleReader& reader, const OpSyntax& op, const Region& region, const std::vector<Shape>& expected,
                     std::string_view what) {
  if (region.args.size() != expected.size())
    reader.Error(region.pos, StrCat("the ", what, " region of ", op.name, " has ", region.args.size(),
                                    " arguments, expected ", expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (region.args[i]->shape().Compatible(expected[i])) continue;
    reader.Error(region.pos, StrCat("argument ", i, " of the ", what, " region of ", op.name, " is ",
                                    MlirTypeName(region.args[i]->shape()), ", expected ", MlirTypeName(expected[i])));
  }
}

void CheckRegionResults(ModuleReader& reader, const OpSyntax& op, const Region& region,
                        const std::vector<Shape>& expected, std::string_view what) {
  if (region.returned.size() != expected.size())
    reader.Error(region.return_pos, StrCat("the ", what, " region of ", op.name, " returns ", region.returned.size(),
                                           " values, expected ", expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (region.returned[i]->shape().Compatible(expected[i])) continue;
    reader.Error(region.return_pos, StrCat("value ", i, " returned by the ", what, " region of ", op.name, " is ",
                                           MlirTypeName(region.returned[i]->shape()), ", expected ",
                                           MlirTypeName(expected[i])));
  }
}

}  // namespace gspmd::stablehlo
