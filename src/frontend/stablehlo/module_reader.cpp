// ModuleReader: the module structure (aliases, module, sdy.mesh, func.func), operations in
// generic and pretty form, regions, and SSA values with their scopes.
#include "frontend/stablehlo/module_reader.h"

#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/shardings.h"
#include "ir/verifier.h"
#include "partitioner/sdy_attributes.h"

namespace gspmd::stablehlo {
namespace {

// Bare names printed without their dialect inside func.func bodies.
std::string_view CanonicalOpName(std::string_view name) {
  if (name == "call") return "func.call";
  if (name == "return") return "func.return";
  return name;
}

struct ArgSyntax {
  std::string_view name;
  size_t pos = 0;
  Shape type;
  std::vector<NamedAttr> attributes;
};

}  // namespace

ModuleReader::ModuleReader(std::string_view text, std::string filename) : cursor_(text, std::move(filename)) {
  env_.attr_aliases = &attr_aliases_;
  env_.type_aliases = &type_aliases_;
}

// ---------------- Top level ----------------

void ModuleReader::ReadTopLevel() {
  while (!cursor_.AtEnd()) {
    char c = cursor_.Peek();
    if (c == '#' || c == '!') {
      ReadAliasDefinition();
      continue;
    }
    if (cursor_.TryKeyword("module")) {
      if (saw_module_) cursor_.ErrorAt(cursor_.pos(), "a second module: expected one module per file");
      saw_module_ = true;
      ReadModuleOp();
      continue;
    }
    if (c == '"') cursor_.ErrorExpected("'module' or func.func (generic builtin.module is not supported)");
    ReadModuleItem();
  }
}

void ModuleReader::ReadAliasDefinition() {
  size_t start = cursor_.pos();
  bool is_type = cursor_.PeekRaw() == '!';
  cursor_.set_pos(start + 1);
  std::string_view text = cursor_.text();
  size_t end = start + 1;
  while (end < text.size() && IsIdChar(text[end])) ++end;
  if (end == start + 1) cursor_.ErrorExpected("an alias name");
  std::string name(text.substr(start + 1, end - start - 1));
  cursor_.set_pos(end);
  cursor_.Expect('=', Expected("'=' in the alias definition of ", is_type ? "!" : "#", name));
  cursor_.SkipSpace();
  size_t value_pos = cursor_.pos();
  if (is_type) {
    type_aliases_[name] = value_pos;
    ReadType();
    return;
  }
  if (cursor_.TryKeyword("loc")) {
    cursor_.SkipSpace();
    if (cursor_.PeekRaw() != '(') cursor_.ErrorExpected("'(' after loc");
    locations_.AddAlias(name, cursor_.pos() + 1);
    cursor_.ReadBalanced("'('");
    return;
  }
  attr_aliases_[name] = value_pos;
  ParseAttr(cursor_, env_);
}

void ModuleReader::ReadModuleOp() {
  if (cursor_.Peek() == '@') module_name_ = cursor_.ReadSymbol("the module name");
  if (cursor_.TryKeyword("attributes")) {
    std::vector<NamedAttr> attributes;
    ParseAttrDict(cursor_, env_, attributes);
    for (const NamedAttr& attr : attributes) {
      if (attr.name == "mhlo.num_partitions") {
        int64_t n = AttrInt(cursor_, attr.value, attr.name);
        if (n < 1) cursor_.ErrorAt(attr.pos, "mhlo.num_partitions must be positive");
        module_attributes_.emplace_back("num_partitions", std::to_string(n));
        device_counts_.partitions = n;
      } else if (attr.name == "mhlo.num_replicas") {
        int64_t n = AttrInt(cursor_, attr.value, attr.name);
        if (n < 1) cursor_.ErrorAt(attr.pos, "mhlo.num_replicas must be positive");
        module_attributes_.emplace_back("replica_count", std::to_string(n));
        device_counts_.replicas = n;
      } else if (attr.name == "mhlo.frontend_attributes") {
        module_attributes_.emplace_back("frontend_attributes", FrontendAttributesText(*this, attr.value));
      }
    }
  }
  cursor_.Expect('{', "'{' to start the module body");
  while (!cursor_.TryConsume('}')) {
    if (cursor_.AtEnd()) cursor_.ErrorExpected("'}' to close the module");
    ReadModuleItem();
  }
  ReadTrailingLocation();
}

void ModuleReader::ReadModuleItem() {
  cursor_.SkipSpace();
  if (cursor_.TryKeyword("sdy.mesh")) {
    ReadMesh();
    return;
  }
  if (cursor_.TryKeyword("func.func")) {
    ReadFunction();
    return;
  }
  cursor_.ErrorExpected("func.func or sdy.mesh in the module");
}

void ModuleReader::ReadMesh() {
  size_t name_pos = cursor_.pos();
  std::string name = cursor_.ReadSymbol("the mesh name after sdy.mesh");
  cursor_.Expect('=', "'=' after the mesh name");
  cursor_.TryConsume("#sdy.mesh");
  cursor_.SkipSpace();
  size_t body_pos = cursor_.pos();
  std::string_view body = cursor_.ReadBalanced("'<' to start the mesh such as <[\"x\"=2, \"y\"=4]>");
  if (body.front() != '<') cursor_.ErrorAt(body_pos, "expected '<' to start the mesh");
  std::string text = StrCat("#sdy.mesh", body);
  if (meshes_.count(name)) cursor_.ErrorAt(name_pos, StrCat("mesh @", name, " is declared twice"));
  try {
    meshes_[name] = ParseSdyMesh(text, "sdy.mesh");
  } catch (const UserError& error) {
    cursor_.ErrorAt(body_pos, error.what());
  }
  mesh_texts_.emplace_back(name, text);
  if (cursor_.Peek() == '{') {
    std::vector<NamedAttr> ignored;
    ParseAttrDict(cursor_, env_, ignored);
  }
  ReadTrailingLocation();
}

void ModuleReader::ReadFunction() {
  size_t start = cursor_.pos();
  bool is_public = true;
  if (cursor_.TryKeyword("private") || cursor_.TryKeyword("nested")) is_public = false;
  else cursor_.TryKeyword("public");
  cursor_.SkipSpace();
  size_t name_pos = cursor_.pos();
  std::string name = cursor_.ReadSymbol("the function name (@name) after func.func");
  cursor_.Expect('(', "'(' to start the function arguments");
  std::vector<ArgSyntax> args;
  if (!cursor_.TryConsume(')')) {
    do {
      ArgSyntax& arg = args.emplace_back();
      cursor_.SkipSpace();
      arg.pos = cursor_.pos();
      arg.name = cursor_.ReadValueName("an argument such as %arg0: tensor<4xf32>");
      cursor_.Expect(':', "':' and the argument type");
      arg.type = ReadType();
      if (cursor_.Peek() == '{') ParseAttrDict(cursor_, env_, arg.attributes);
      ReadTrailingLocation();
    } while (cursor_.TryConsume(','));
    cursor_.Expect(')', "',' or ')' after a function argument");
  }
  std::vector<ArgSyntax> results;
  if (cursor_.TryConsume("->")) {
    bool parenthesized = cursor_.TryConsume('(');
    if (!parenthesized || !cursor_.TryConsume(')')) {
      do {
        ArgSyntax& result = results.emplace_back();
        cursor_.SkipSpace();
        result.pos = cursor_.pos();
        result.type = ReadType();
        if (parenthesized && cursor_.Peek() == '{') ParseAttrDict(cursor_, env_, result.attributes);
      } while (parenthesized && cursor_.TryConsume(','));
      if (parenthesized) cursor_.Expect(')', "',' or ')' after a result type");
    }
  }
  if (cursor_.TryKeyword("attributes")) {
    std::vector<NamedAttr> ignored;
    ParseAttrDict(cursor_, env_, ignored);
  }
  if (cursor_.Peek() != '{') cursor_.ErrorAt(start, StrCat("function @", name, " has no body: expected '{'"));

  FunctionInfo& info = functions_[name];
  if (info.defined) cursor_.ErrorAt(name_pos, StrCat("function @", name, " is defined twice"));
  if (info.computation == nullptr) info.computation = NewComputation(name);
  info.defined = true;
  info.is_public = is_public;
  for (const ArgSyntax& arg : args) info.inputs.push_back(arg.type);
  for (const ArgSyntax& result : results) info.results.push_back(result.type);
  function_order_.push_back(name);

  // The body: an isolated region whose block arguments are the function's parameters.
  Region region;
  region.pos = cursor_.pos();
  auto scope = std::make_unique<Scope>();
  scope->region = &region;
  scope->isolated = true;
  // About one value per 60 bytes of the rest of the file: no rehashing in big functions.
  scope->numbered.reserve(std::min<size_t>((cursor_.text().size() - cursor_.pos()) / 60, 1 << 20));
  scopes_.push_back(std::move(scope));
  for (size_t i = 0; i < args.size(); ++i) {
    auto parameter = MakePlaceholder(args[i].type, static_cast<int64_t>(i), "");
    parameter->set_name(names_.ForParameter(static_cast<int64_t>(i)));
    // Where the argument was written: what a pass makes for the parameter shares this source.
    parameter->set_source(std::make_shared<const InstructionSource>(
        InstructionSource{cursor_.LocationAt(args[i].pos), std::string("%").append(args[i].name)}));
    for (const NamedAttr& attr : args[i].attributes) {
      if (attr.name == "mhlo.sharding") parameter->set_sharding(GspmdSharding(*this, attr.value, args[i].type));
      if (attr.name == "sdy.sharding")
        AddFrontendAttribute(*parameter, "xla.sdy.sharding", SdyShardingText(*this, attr.value, args[i].type));
      if (attr.name == "mhlo.frontend_attributes") AddFrontendAttributes(*this, *parameter, attr.value);
    }
    region.args.push_back(parameter.get());
    Bind(current(), args[i].name, args[i].pos, std::span<Instruction* const>(&region.args.back(), 1));
    region.owned_args.push_back(std::move(parameter));
  }
  cursor_.Expect('{', "'{' to start the function body");
  while (!cursor_.TryConsume('}')) {
    if (cursor_.AtEnd()) cursor_.ErrorExpected(Expected("'}' to close function @", name));
    if (region.has_terminator) cursor_.ErrorExpected(Expected("'}' after the return of function @", name));
    ReadOperation();
  }
  if (!region.has_terminator) cursor_.ErrorAt(start, StrCat("function @", name, " has no return"));
  if (region.returned.size() != results.size())
    cursor_.ErrorAt(region.return_pos, StrCat("function @", name, " returns ", region.returned.size(), " values, its type says ",
                                              results.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    if (region.returned[i]->shape().Compatible(results[i].type)) continue;
    cursor_.ErrorAt(region.return_pos, StrCat("result ", i, " of function @", name, " is ",
                                              MlirTypeName(region.returned[i]->shape()), " but the function type says ",
                                              MlirTypeName(results[i].type)));
  }

  // The root: results annotated with Shardy shardings pass through xla.sdy.FuncResultSharding;
  // GSPMD result shardings become the root's sharding (a tuple, replicated where unannotated),
  // as XLA's converter writes them.
  std::vector<Instruction*> values = region.returned;
  std::vector<std::optional<Sharding>> gspmd(results.size());
  bool any_gspmd = false;
  for (size_t i = 0; i < results.size(); ++i) {
    for (const NamedAttr& attr : results[i].attributes) {
      if (attr.name == "mhlo.sharding") {
        gspmd[i] = GspmdSharding(*this, attr.value, results[i].type);
        any_gspmd = true;
      } else if (attr.name == "sdy.sharding") {
        if (attr.value.kind != Attr::Kind::kDialect || attr.value.str != "sdy.sharding")
          cursor_.ErrorAt(attr.pos, "sdy.sharding of a function result: expected #sdy.sharding<...>");
        std::string text = SdyShardingText(*this, attr.value, results[i].type);
        auto call = MakeInstruction(Opcode::kCustomCall, results[i].type, {values[i]});
        call->custom_call_target = "xla.sdy.FuncResultSharding";
        call->custom_call_has_side_effect = true;
        AddFrontendAttribute(*call, "xla.sdy.sharding", StrCat("#sdy.sharding_per_value<[", text.substr(13), "]>"));
        values[i] = Add(std::move(call));
      }
    }
  }
  Instruction* root = nullptr;
  if (values.size() == 1 && !any_gspmd) {
    root = values[0];
  } else if (values.size() == 1) {
    root = Gte(Tuple(values), 0);
    root->set_sharding(*gspmd[0]);
  } else {
    root = Tuple(values);
    if (any_gspmd) {
      std::vector<Sharding> elements;
      for (const std::optional<Sharding>& sharding : gspmd) elements.push_back(sharding.value_or(Sharding::Replicated()));
      root->set_sharding(Sharding::Tuple(std::move(elements)));
    }
  }
  std::vector<std::unique_ptr<Instruction>> instructions = std::move(region.owned_args);
  for (auto& instruction : region.body) instructions.push_back(std::move(instruction));
  DefineComputation(info.computation, std::move(instructions), root);
  scopes_.pop_back();
}

// ---------------- Operations ----------------

std::optional<std::string_view> ModuleReader::ReadTrailingLocation() {
  size_t save = cursor_.pos();
  if (!cursor_.TryKeyword("loc")) return std::nullopt;
  cursor_.SkipSpace();
  if (cursor_.PeekRaw() != '(') {
    cursor_.set_pos(save);
    return std::nullopt;
  }
  std::string_view group = cursor_.ReadBalanced("'('");
  return group.substr(1, group.size() - 2);
}

void ModuleReader::ReadOperation() {
  // One OpSyntax per region depth, reused: its vectors keep their storage from op to op.
  if (op_pool_.size() <= op_depth_) op_pool_.push_back(std::make_unique<OpSyntax>());
  OpSyntax& op = *op_pool_[op_depth_];
  op.Reset();
  ++op_depth_;
  struct DepthGuard {
    size_t& depth;
    ~DepthGuard() { --depth; }
  } guard{op_depth_};
  std::vector<std::pair<std::string_view, uint32_t>>& result_names = op.result_names;
  cursor_.SkipSpace();
  const size_t start = cursor_.pos();
  if (cursor_.PeekRaw() == '%') {
    do {
      std::string_view name = cursor_.ReadValueName("a result name such as %0");
      uint32_t count = 1;
      if (cursor_.PeekRaw() == ':') {
        cursor_.set_pos(cursor_.pos() + 1);
        int64_t n = cursor_.ReadInt("the number of results after ':'");
        if (n < 1 || n > (1 << 20)) cursor_.ErrorAt(cursor_.pos(), "bad result count");
        count = static_cast<uint32_t>(n);
      }
      result_names.emplace_back(name, count);
    } while (cursor_.TryConsume(','));
    cursor_.Expect('=', "'=' after the result names");
  }
  cursor_.SkipSpace();
  op.pos = cursor_.pos();
  // Located before the op's regions are read, so locations are computed in file order.
  SourceLocation location_of_op = cursor_.LocationAt(op.pos);
  for (const auto& [name, count] : result_names) op.num_results += count;
  const OpEntry* entry = nullptr;
  if (cursor_.PeekRaw() == '"') {
    size_t quote = cursor_.pos();
    cursor_.ReadString("an operation name");
    op.name = CanonicalOpName(cursor_.text().substr(quote + 1, cursor_.pos() - quote - 2));
    op.generic = true;
  } else {
    op.name = CanonicalOpName(cursor_.ReadBareId("an operation such as stablehlo.add"));
  }
  entry = Ops().Find(op.name);
  if (entry == nullptr) {
    std::string_view reason = UnsupportedOpReason(op.name);
    if (!reason.empty()) cursor_.ErrorAt(op.pos, StrCat(op.name, ": ", reason));
    cursor_.ErrorAt(op.pos, StrCat("unknown operation '", op.name, "' (expected a StableHLO, CHLO, Shardy or func op)"));
  }
  if (op.generic) {
    ReadGenericOp(op);
  } else {
    if (entry->pretty == nullptr)
      cursor_.ErrorAt(op.pos, StrCat(op.name, " has no custom syntax: expected the generic form \"", op.name, "\"(...)"));
    entry->pretty(*this, op);
  }
  std::optional<std::string_view> location = ReadTrailingLocation();

  Region& region = *current().region;
  const size_t first_new = region.body.size();
  Converted converted = entry->convert(*this, op);
  if (converted.results.size() != op.num_results)
    cursor_.ErrorAt(start, StrCat(op.name, " produces ", converted.results.size(), " results but ", op.num_results,
                                  op.num_results == 1 ? " name is" : " names are", " bound to it"));
  if (converted.primary != nullptr) ApplyOpAttributes(op, converted);
  if (region.body.size() > first_new) {
    // Where the op was written, for errors of later passes. One source per instruction (same
    // location and name): what a pass makes for an instruction shares its source, so lint can
    // tell which of an op's instructions a collective was made for.
    const InstructionSource source{std::move(location_of_op), result_names.empty()
                                                                  ? std::string(op.name)
                                                                  : std::string("%").append(result_names[0].first)};
    for (size_t i = first_new; i < region.body.size(); ++i) {
      Instruction* instruction = region.body[i].get();
      instruction->set_source(std::make_shared<const InstructionSource>(source));
      if (location) locations_.Attach(instruction, *location, static_cast<size_t>(location->data() - cursor_.text().data()));
    }
  }
  BindResults(result_names, start, converted.results);
}

void ModuleReader::ReadGenericOp(OpSyntax& op) {
  cursor_.Expect('(', Expected("'(' and the operands of \"", op.name, "\""));
  if (!cursor_.TryConsume(')')) {
    ReadOperands(op);
    cursor_.Expect(')', "',' or ')' after an operand");
  }
  if (cursor_.Peek() == '[') cursor_.ErrorAt(cursor_.pos(), "successor blocks are not supported");
  if (cursor_.Peek() == '<') {
    cursor_.Expect('<', "'<'");
    ParseAttrDict(cursor_, env_, op.attributes);
    cursor_.Expect('>', "'>' to close the properties <{...}>");
  }
  if (cursor_.Peek() == '(') {
    cursor_.Expect('(', "'('");
    do op.regions.push_back(ReadRegion({}));
    while (cursor_.TryConsume(','));
    cursor_.Expect(')', "',' or ')' after a region");
  }
  ReadOptionalAttrDict(op);
  ReadFunctionSignature(*this, op);
  CheckOperandTypes(*this, op);
}

void ModuleReader::ApplyOpAttributes(OpSyntax& op, const Converted& converted) {
  Instruction& primary = *converted.primary;
  for (const NamedAttr& attr : op.attributes) {
    if (attr.name.size() < 8 || (attr.name[0] != 'm' && attr.name[0] != 's')) continue;
    if (attr.name == "mhlo.sharding") {
      primary.set_sharding(GspmdSharding(*this, attr.value, primary.shape()));
    } else if (attr.name == "sdy.sharding") {
      AddFrontendAttribute(primary, "xla.sdy.sharding", SdyShardingText(*this, attr.value, primary.shape()));
    } else if (attr.name == "mhlo.frontend_attributes") {
      AddFrontendAttributes(*this, primary, attr.value);
    }
  }
}

void ModuleReader::BindResults(const std::vector<std::pair<std::string_view, uint32_t>>& names, size_t pos,
                               const std::vector<Instruction*>& results) {
  size_t next = 0;
  for (const auto& [name, count] : names) {
    Bind(current(), name, pos, std::span<Instruction* const>(results.data() + next, count));
    next += count;
  }
}

void ModuleReader::ReadOptionalAttrDict(OpSyntax& op) {
  if (cursor_.Peek() == '{') ParseAttrDict(cursor_, env_, op.attributes);
}

Shape ModuleReader::ReadType() { return ParseType(cursor_, type_aliases_); }

void ModuleReader::SetReturn(const OpSyntax& op) {
  Region& region = *current().region;
  region.returned = op.operands;
  region.return_pos = op.pos;
  region.has_terminator = true;
}

// ---------------- Regions ----------------

std::vector<RegionArg> ModuleReader::ReadRegionArgs() {
  std::vector<RegionArg> args;
  cursor_.Expect('(', "'(' to start the block arguments");
  if (cursor_.TryConsume(')')) return args;
  do {
    RegionArg& arg = args.emplace_back();
    cursor_.SkipSpace();
    arg.pos = cursor_.pos();
    arg.name = cursor_.ReadValueName("a block argument such as %arg0: tensor<f32>");
    cursor_.Expect(':', "':' and the block argument's type");
    arg.type = ReadType();
    ReadTrailingLocation();
  } while (cursor_.TryConsume(','));
  cursor_.Expect(')', "',' or ')' after a block argument");
  return args;
}

std::unique_ptr<Region> ModuleReader::ReadRegion(std::vector<RegionArg> args, bool isolated) {
  auto region = std::make_unique<Region>();
  cursor_.SkipSpace();
  region->pos = cursor_.pos();
  cursor_.Expect('{', "'{' to start a region");
  if (cursor_.Peek() == '^') {
    size_t label_pos = cursor_.pos();
    cursor_.set_pos(label_pos + 1);
    cursor_.ReadBareId("a block label such as ^bb0");
    if (cursor_.Peek() == '(') {
      std::vector<RegionArg> declared = ReadRegionArgs();
      if (!args.empty()) cursor_.ErrorAt(label_pos, "this region's arguments are given by the op; expected no block header");
      args = std::move(declared);
    }
    cursor_.Expect(':', "':' after the block label");
  }
  auto scope = std::make_unique<Scope>();
  scope->region = region.get();
  scope->isolated = isolated;
  scopes_.push_back(std::move(scope));
  for (size_t i = 0; i < args.size(); ++i) {
    auto parameter = MakePlaceholder(args[i].type, static_cast<int64_t>(i), "");
    region->args.push_back(parameter.get());
    Bind(current(), args[i].name, args[i].pos, std::span<Instruction* const>(&region->args.back(), 1));
    region->owned_args.push_back(std::move(parameter));
  }
  while (!cursor_.TryConsume('}')) {
    if (cursor_.AtEnd()) cursor_.ErrorAt(region->pos, "region is never closed: expected '}' before the end of the file");
    if (cursor_.Peek() == '^') cursor_.ErrorAt(cursor_.pos(), "regions with several blocks are not supported");
    if (region->has_terminator) cursor_.ErrorExpected("'}' after the region's terminator");
    ReadOperation();
  }
  if (!region->has_terminator) cursor_.ErrorAt(region->pos, "region has no terminator: expected stablehlo.return (or sdy.return) last");
  scopes_.pop_back();
  return region;
}

// ---------------- Values ----------------

Instruction* ModuleReader::ReadOperand(OpSyntax& op) {
  cursor_.SkipSpace();
  size_t pos = cursor_.pos();
  std::string_view name = cursor_.ReadValueName("an operand such as %0");
  int64_t index = 0;
  if (cursor_.PeekRaw() == '#') {
    cursor_.set_pos(cursor_.pos() + 1);
    index = cursor_.ReadInt("a result number after '#'");
  }
  Instruction* value = Lookup(name, index, pos);
  op.operands.push_back(value);
  op.operand_pos.push_back(pos);
  return value;
}

void ModuleReader::ReadOperands(OpSyntax& op) {
  if (cursor_.Peek() != '%') return;
  while (true) {
    ReadOperand(op);
    // A ',' continues the list only when another operand follows (", dims = [...]" ends it).
    size_t save = cursor_.pos();
    if (!cursor_.TryConsume(',')) return;
    if (cursor_.Peek() != '%') {
      cursor_.set_pos(save);
      return;
    }
  }
}

namespace {

// The number of a name MLIR numbers ("0", "17"), or -1.
int64_t NameNumber(std::string_view name) {
  if (name.empty() || name.size() > 7 || (name[0] == '0' && name.size() > 1)) return -1;
  int64_t number = 0;
  for (char c : name) {
    if (!IsDigitChar(c)) return -1;
    number = number * 10 + (c - '0');
  }
  return number;
}

}  // namespace

void ModuleReader::Bind(Scope& scope, std::string_view name, size_t pos, std::span<Instruction* const> values) {
  const auto entry = std::make_pair(static_cast<uint32_t>(scope.values.size()), static_cast<uint32_t>(values.size()));
  const int64_t number = NameNumber(name);
  bool inserted = true;
  if (number >= 0 && scope.numbered_base < 0) scope.numbered_base = number;
  if (number >= scope.numbered_base && scope.numbered_base >= 0) {
    const int64_t slot = number - scope.numbered_base;
    if (static_cast<int64_t>(scope.numbered.size()) <= slot) scope.numbered.resize(slot + 1 + slot / 2, {0, 0});
    inserted = scope.numbered[slot].second == 0;
    if (inserted) scope.numbered[slot] = entry;
  } else {
    inserted = scope.names.emplace(name, entry).second;
  }
  if (!inserted) cursor_.ErrorAt(pos, StrCat("%", name, " is defined twice: expected a new name"));
  scope.values.insert(scope.values.end(), values.begin(), values.end());
}

Instruction* ModuleReader::Lookup(std::string_view name, int64_t index, size_t pos) {
  const size_t top = scopes_.size() - 1;
  const int64_t number = NameNumber(name);
  for (size_t k = top + 1; k-- > 0;) {
    Scope& scope = *scopes_[k];
    Instruction* found = nullptr;
    const std::pair<uint32_t, uint32_t>* entry = nullptr;
    if (number >= scope.numbered_base && scope.numbered_base >= 0) {
      const int64_t slot = number - scope.numbered_base;
      if (slot < static_cast<int64_t>(scope.numbered.size()) && scope.numbered[slot].second > 0)
        entry = &scope.numbered[slot];
    } else if (auto it = scope.names.find(name); it != scope.names.end()) {
      entry = &it->second;
    }
    if (entry != nullptr) {
      const auto [first, count] = *entry;
      if (index < 0 || index >= static_cast<int64_t>(count))
        cursor_.ErrorAt(pos, StrCat("%", name, "#", index, " does not exist: %", name, " has ", count,
                                    count == 1 ? " result" : " results"));
      found = scope.values[first + static_cast<size_t>(index)];
    } else if (!scope.captured.empty()) {
      auto captured = scope.captured.find({name, index});
      if (captured != scope.captured.end()) found = captured->second;
    }
    if (found != nullptr) return k == top ? found : CaptureInto(k + 1, found, name, index, pos);
    if (scope.isolated) break;
  }
  cursor_.ErrorAt(pos, StrCat("use of undefined value %", name, ": expected a value defined earlier in this function",
                              " (or in an enclosing region)"));
}

Instruction* ModuleReader::CaptureInto(size_t scope_index, Instruction* outer, std::string_view name, int64_t index,
                                       size_t pos) {
  const size_t top = scopes_.size() - 1;
  if (outer->opcode() == Opcode::kConstant) {
    // Constants are copied into the region that uses them rather than passed in.
    auto clone = outer->CloneWithNewOperands(outer->shape(), {});
    clone->set_name(names_.ForOpcode(Opcode::kConstant));  // names stay unique module-wide
    Instruction* copy = Add(std::move(clone));
    scopes_[top]->captured[{name, index}] = copy;
    return copy;
  }
  Instruction* value = outer;
  for (size_t j = scope_index; j <= top; ++j) {
    Scope& scope = *scopes_[j];
    auto placeholder = MakePlaceholder(value->shape(), -1, "");
    Instruction* raw = placeholder.get();
    scope.region->captures.push_back({value, raw, pos});
    scope.region->owned_captures.push_back(std::move(placeholder));
    scope.captured[{name, index}] = raw;
    value = raw;
  }
  return value;
}

std::unique_ptr<Instruction> ModuleReader::MakePlaceholder(const Shape& shape, int64_t number, std::string_view name) {
  auto parameter = std::make_unique<Instruction>(Opcode::kParameter, shape, std::string(name));
  parameter->parameter_number = number;
  return parameter;
}

// ---------------- Building ----------------

Instruction* ModuleReader::Add(std::unique_ptr<Instruction> instruction) {
  if (instruction->name().empty()) instruction->set_name(names_.ForOpcode(instruction->opcode()));
  Instruction* raw = instruction.get();
  current().region->body.push_back(std::move(instruction));
  return raw;
}

Instruction* ModuleReader::AddOp(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands) {
  return Add(MakeInstruction(opcode, std::move(shape), operands));
}

Instruction* ModuleReader::Gte(Instruction* tuple, int64_t index) {
  auto gte = MakeInstruction(Opcode::kGetTupleElement, tuple->shape().tuple_shape(index), {tuple});
  gte->tuple_index = index;
  return Add(std::move(gte));
}

Instruction* ModuleReader::Tuple(const std::vector<Instruction*>& elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Instruction* element : elements) shapes.push_back(element->shape());
  return AddOp(Opcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

Converted ModuleReader::Results(const OpSyntax& op, Instruction* producer) {
  Converted converted;
  converted.primary = producer;
  if (op.num_results == 1) {
    converted.results = {producer};
    return converted;
  }
  GSPMD_CHECK(producer->shape().IsTuple() && producer->shape().tuple_size() == static_cast<int64_t>(op.num_results),
              op.name, ": ", op.num_results, " results from ", producer->shape().ToString());
  for (int64_t i = 0; i < producer->shape().tuple_size(); ++i) converted.results.push_back(Gte(producer, i));
  return converted;
}

void ModuleReader::Verify(const Instruction& instruction, size_t pos) const {
  for (const Computation* called : instruction.called_computations()) {
    if (Finished(called)) continue;
    // A function defined later: checked once every computation is finished.
    const_cast<ModuleReader*>(this)->deferred_checks_.emplace_back(&instruction, pos);
    return;
  }
  RunChecks(instruction, pos);
}

Computation* ModuleReader::NewComputation(std::string_view base_name) {
  PendingComputation& pending = computations_.emplace_back();
  pending.computation = std::make_unique<Computation>(computation_names_.Unique(std::string(base_name)));
  Computation* raw = pending.computation.get();
  pending_index_[raw] = computations_.size() - 1;
  return raw;
}

void ModuleReader::DefineComputation(Computation* computation, std::vector<std::unique_ptr<Instruction>> instructions,
                                     Instruction* root) {
  PendingComputation& pending = computations_[pending_index_.at(computation)];
  GSPMD_CHECK(!pending.defined, "computation ", computation->name(), " defined twice");
  for (auto& instruction : instructions) {
    if (instruction->name().empty()) instruction->set_name(names_.ForOpcode(instruction->opcode()));
  }
  pending.instructions = std::move(instructions);
  pending.root = root;
  pending.defined = true;
  if (ReadyToFinish(pending)) FinishComputation(pending);
}

Computation* ModuleReader::FunctionFor(const std::string& name, size_t pos, const std::vector<Shape>& operand_shapes,
                                       const std::vector<Shape>& result_shapes, bool check_signature) {
  FunctionInfo& info = functions_[name];
  if (info.computation == nullptr) {
    info.computation = NewComputation(name);
    info.first_use = pos;
  }
  if (check_signature) call_checks_.push_back({name, pos, operand_shapes, result_shapes});
  return info.computation;
}

}  // namespace gspmd::stablehlo
