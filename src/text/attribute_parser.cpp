// HLO text parser, attribute level: the ", name=value" list after an instruction's operands.
// Attributes an opcode uses go into the typed fields of Instruction; any other attribute
// (unknown, or not used by this opcode) is kept verbatim in extra_attributes.
#include <algorithm>

#include "ir/tuple_sharding.h"
#include "ir/verifier.h"
#include "sharding/sharding_text.h"
#include "text/attribute_table.h"
#include "text/attribute_text.h"
#include "text/literal_text.h"
#include "text/shape_text.h"
#include "text/module_parser.h"

namespace gspmd::hlo_text {

// literal=s32[2]{0} {1, 2} or literal=( s32[2]{0} {1, 2}, pred[] true ) (custom-call): shapes
// with constant values, checked and kept verbatim.
std::string_view ModuleParser::ReadShapedLiteralText() {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  ReadShapedLiteral(0);
  return scanner_.text().substr(start, scanner_.pos() - start);
}

void ModuleParser::ReadShapedLiteral(int depth) {
  constexpr int kMaxLiteralNesting = 64;
  if (depth > kMaxLiteralNesting) scanner_.ErrorExpected("a literal nested at most 64 tuples deep");
  if (scanner_.TryConsume('(')) {
    if (scanner_.TryConsume(')')) return;
    do {
      ReadShapedLiteral(depth + 1);
    } while (scanner_.TryConsume(','));
    scanner_.Expect(')', "',' or ')' in the tuple literal");
    return;
  }
  Shape shape = ParseShape(scanner_);
  ParseLiteral(scanner_, shape);
}

namespace {

// Removes /* ... */ comments (XLA writes /*index=5*/ inside long tuple shardings) and
// remembers where each kept character came from.
std::string StripComments(std::string_view text, std::vector<size_t>& origin) {
  std::string out;
  out.reserve(text.size());
  origin.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      if (end != std::string_view::npos) {
        i = end + 1;
        continue;
      }
    }
    out.push_back(text[i]);
    origin.push_back(i);
  }
  origin.push_back(text.size());
  return out;
}

}  // namespace

namespace {

struct UnreducedWord {
  std::string_view word;
  Sharding::Reduction reduction;
};
constexpr UnreducedWord kUnreducedWords[] = {
    {"unreduced_max", Sharding::Reduction::kMax}, {"unreduced_min", Sharding::Reduction::kMin},
    {"unreduced_mul", Sharding::Reduction::kProduct}, {"unreduced_and", Sharding::Reduction::kAnd},
    {"unreduced_or", Sharding::Reduction::kOr}, {"unreduced", Sharding::Reduction::kSum}};

// Whether a position lies inside [...] (a named sharding's list of dims, outside quotes): braces
// there hold axis names, not sharding leaves. Asked at increasing positions, it reads the text
// once (asked afresh from the start at every '{', 100,000 nested braces took 11 s).
class BracketDepth {
 public:
  explicit BracketDepth(const std::string& text) : text_(text) {}
  bool Inside(size_t at) {
    for (; next_ < at && next_ < text_.size(); ++next_) {
      const char c = text_[next_];
      if (quote_ != 0) {
        if (c == quote_) quote_ = 0;
      } else if (c == '\'' || c == '"') {
        quote_ = c;
      } else if (c == '[') {
        ++depth_;
      } else if (c == ']' && depth_ > 0) {
        --depth_;
      }
    }
    return depth_ > 0;
  }

 private:
  const std::string& text_;
  size_t next_ = 0;
  int64_t depth_ = 0;
  char quote_ = 0;
};

// A whole sharding leaf "{unreduced}" (or "{unreduced_max}", ...) at `open` (a '{' that is not
// an attribute's value such as last_tile_dims={unreduced}): its length and reduction.
std::optional<std::pair<size_t, Sharding::Reduction>> FullyUnreducedLeafAt(const std::string& text, size_t open,
                                                                         BracketDepth& brackets) {
  if (brackets.Inside(open)) return std::nullopt;
  size_t before = open;
  while (before > 0 && text[before - 1] == ' ') --before;
  if (before > 0 && text[before - 1] == '=') return std::nullopt;
  size_t p = open + 1;
  while (p < text.size() && text[p] == ' ') ++p;
  for (const UnreducedWord& candidate : kUnreducedWords) {
    if (text.compare(p, candidate.word.size(), candidate.word) != 0) continue;
    size_t q = p + candidate.word.size();
    while (q < text.size() && text[q] == ' ') ++q;
    if (q < text.size() && text[q] == '}') return std::make_pair(q + 1 - open, candidate.reduction);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

// Newer XLA writes {unreduced} for a value that is a partial sum over every device. Its
// tiled form needs the value's rank and the device count, so such leaves read as {unknown}
// (same text length, so errors keep their columns) and are remembered by flat leaf index: a
// second parse with each one replaced by a maximal sharding on a device id past any real one
// finds them. nullopt when the text has none.
std::optional<Sharding> ModuleParser::ParseWithFullyUnreducedLeaves(const std::string& text) {
  constexpr int64_t kMarker = int64_t{1} << 30;
  std::string placeholder = text, marked;
  std::vector<Sharding::Reduction> reductions;
  size_t copied = 0;
  BracketDepth brackets(text);
  for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    std::optional<std::pair<size_t, Sharding::Reduction>> leaf = FullyUnreducedLeafAt(text, open, brackets);
    if (!leaf) continue;
    placeholder.replace(open, leaf->first, "{unknown" + std::string(leaf->first - 9, ' ') + "}");
    marked += text.substr(copied, open - copied);
    marked += StrCat("{maximal device=", kMarker + static_cast<int64_t>(reductions.size()), "}");
    copied = open + leaf->first;
    reductions.push_back(leaf->second);
  }
  if (reductions.empty()) return std::nullopt;
  marked += text.substr(copied);
  Sharding sharding = ParseSharding(placeholder);  // errors are reported by the caller's try
  Sharding flat = FlattenTupleSharding(ParseSharding(marked));
  std::vector<Sharding> leaves = flat.IsTuple() ? flat.tuple_elements() : std::vector<Sharding>{flat};
  for (size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i].IsMaximal() && leaves[i].maximal_device() >= kMarker)
      pending_unreduced_.push_back({i, reductions[static_cast<size_t>(leaves[i].maximal_device() - kMarker)]});
  return sharding;
}

namespace {

void CollectLeafShapes(const Shape& shape, std::vector<const Shape*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(&shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) CollectLeafShapes(element, leaves);
}

}  // namespace

// {unreduced} leaves become {devices=[1,...,1,N]<=[N] last_tile_dims={unreduced}} over the
// module's N devices: num_partitions, else as many as its other shardings use, else 1.
void ModuleParser::ResolveFullyUnreducedShardings() {
  if (unreduced_instructions_.empty()) return;
  int64_t devices = num_partitions_;
  if (devices <= 0) {
    for (const auto& computation : module_->computations())
      for (const auto& instruction : computation->instructions()) {
        if (!instruction->sharding()) continue;
        Sharding flat = FlattenTupleSharding(*instruction->sharding());
        std::vector<Sharding> leaves = flat.IsTuple() ? flat.tuple_elements() : std::vector<Sharding>{flat};
        for (const Sharding& leaf : leaves) {
          if (leaf.IsTiled()) devices = std::max(devices, leaf.RequiredDeviceCount());
          if (leaf.IsMaximal()) devices = std::max(devices, leaf.maximal_device() + 1);
        }
      }
  }
  devices = std::max<int64_t>(devices, 1);
  for (auto& [instruction, unreduced] : unreduced_instructions_) {
    std::vector<const Shape*> shapes;
    CollectLeafShapes(instruction->shape(), shapes);
    Sharding flat = FlattenTupleSharding(*instruction->sharding());
    // One sharding for a whole tuple stands for each of its leaves.
    std::vector<Sharding> leaves = flat.IsTuple() ? flat.tuple_elements() : std::vector<Sharding>(shapes.size(), flat);
    if (leaves.size() != shapes.size()) continue;  // the verifier has reported it
    for (const UnreducedLeaf& u : unreduced) {
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (flat.IsTuple() ? i != u.leaf : u.leaf != 0) continue;
        if (!shapes[i]->IsArray()) continue;
        std::vector<int64_t> dims(static_cast<size_t>(shapes[i]->rank()), 1);
        dims.push_back(devices);
        Sharding tiled = Sharding::Tiled(TileAssignment::Iota(dims), {Sharding::SubgroupType::kUnreduced});
        tiled.set_partial_reduction(u.reduction);
        leaves[i] = std::move(tiled);
      }
    }
    Sharding rebuilt = leaves.size() == 1 && !instruction->shape().IsTuple() ? leaves.front()
                                                                             : Sharding::Tuple(std::move(leaves));
    std::optional<Sharding> nested = NestTupleSharding(rebuilt, instruction->shape());
    if (nested) instruction->set_sharding(std::move(*nested));
  }
}

// Called computations written as separate attributes, assembled once all are read.
struct ModuleParser::CalledSlots {
  Computation* to_apply = nullptr;
  Computation* condition = nullptr;
  Computation* body = nullptr;
  Computation* true_computation = nullptr;
  Computation* false_computation = nullptr;
  Computation* select = nullptr;
  Computation* scatter = nullptr;
  std::vector<Computation*> list;  // branch_computations / called_computations
  bool has_list = false;
};

std::vector<Computation*> ModuleParser::ParseComputationList() {
  scanner_.Expect('{', "'{' to start a list of computations");
  std::vector<Computation*> list;
  if (scanner_.TryConsume('}')) return list;
  do {
    scanner_.SkipSpace();
    size_t pos = scanner_.pos();
    list.push_back(ResolveComputation(scanner_.ReadName("a computation name"), pos));
  } while (scanner_.TryConsume(','));
  scanner_.Expect('}', "',' or '}' in the list of computations");
  return list;
}

void ModuleParser::ParseShardingAttribute(Instruction& instruction) {
  // Checked against the shape (and nested to match a tuple shape) once the instruction is
  // complete: the shape may still have to be inferred.
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  sharding_pos_ = start;
  if (scanner_.Peek() != '{') scanner_.ErrorExpected("'{' to start the sharding");
  std::string_view raw = scanner_.ReadBalanced();
  std::vector<size_t> origin;
  std::string text = StripComments(raw, origin);
  // Parses with `parse`, reporting a bad sharding at its place in the written text (fully
  // unreduced leaves are parsed from a placeholder text that keeps every other character in
  // place, so its offsets point there too).
  auto located = [&](auto&& parse) {
    try {
      return parse();
    } catch (const ShardingSyntaxError& e) {
      size_t offset = e.offset < origin.size() ? origin[e.offset] : raw.size();
      scanner_.ErrorAt(start + offset, StrCat("bad sharding: ", e.what()));
    } catch (const UserError& e) {
      scanner_.ErrorAt(start, StrCat("bad sharding: ", e.what()));
    }
    return decltype(parse())();
  };
  if (std::optional<Sharding> with_unreduced = located([&] { return ParseWithFullyUnreducedLeaves(text); })) {
    instruction.set_sharding(*with_unreduced);
    return;
  }
  // Many instructions repeat the same few shardings: parse each distinct text once.
  auto cached = sharding_cache_.find(text);
  if (cached != sharding_cache_.end()) {
    instruction.set_sharding(cached->second);
    return;
  }
  Sharding sharding = located([&] { return ParseSharding(text); });
  instruction.set_sharding(sharding);
  sharding_cache_.emplace(std::move(text), std::move(sharding));
}

void ModuleParser::ParseReplicaGroupsAttribute(Instruction& instruction) {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  std::string_view raw = scanner_.ReadRawValue("replica groups such as {{0,1},{2,3}} or [2,4]<=[8]");
  std::vector<size_t> origin;
  std::string text = StripComments(raw, origin);
  try {
    instruction.mutable_replica_groups() = ParseReplicaGroups(text);
  } catch (const ShardingSyntaxError& e) {
    size_t offset = e.offset < origin.size() ? origin[e.offset] : raw.size();
    scanner_.ErrorAt(start + offset, StrCat("bad replica_groups: ", e.what()));
  } catch (const UserError& e) {
    scanner_.ErrorAt(start, StrCat("bad replica_groups: ", e.what()));
  }
  instruction.has_replica_groups = true;
}

// order=TOTAL / order=PARTIAL: the comparison type as Comparison::Order spells it. The same
// comparison types as type= (TOTAL on floats is TOTALORDER; integers are only ever totally
// ordered), and the instruction remembers the spelling so it prints back as written.
void ModuleParser::ParseComparisonOrderAttribute(Instruction& instruction) {
  scanner_.SkipSpace();
  size_t pos = scanner_.pos();
  std::string_view word = scanner_.ReadWord();
  bool total = word == "TOTAL";
  if (!total && word != "PARTIAL") {
    scanner_.set_pos(pos);
    scanner_.ErrorExpected("a comparison order (TOTAL or PARTIAL)");
  }
  instruction.comparison_written_as_order = true;
  const Shape& operand = instruction.operand(0)->shape();
  ElementType type = operand.IsArray() ? operand.element_type() : ElementType::kF32;
  if (IsFloatingPoint(type)) {
    instruction.comparison_type = total ? ComparisonType::kTotalOrder : ComparisonType::kFloat;
    return;
  }
  if (IsComplex(type)) {
    if (total)
      scanner_.ErrorAt(pos, StrCat("order=", word, " on ", ElementTypeName(type),
                                   " values: complex numbers have no total order (expected order=PARTIAL)"));
    instruction.comparison_type = ComparisonType::kFloat;
    return;
  }
  if (!total)
    scanner_.ErrorAt(pos, StrCat("order=", word, " on ", ElementTypeName(type),
                                 " values, which are totally ordered: expected order=TOTAL (PARTIAL is for ",
                                 "floating-point values)"));
  instruction.comparison_type = IsSignedInteger(type) ? ComparisonType::kSigned : ComparisonType::kUnsigned;
}

void ModuleParser::ParseAttributes(Instruction& instruction, size_t opcode_pos, bool allow_attributes) {
  AttributeSet seen;
  CalledSlots called;
  Opcode opcode = instruction.opcode();
  while (allow_attributes) {
    size_t before = scanner_.pos();  // so the caller can see what follows on this line
    if (!scanner_.TryConsume(',')) {
      scanner_.set_pos(before);
      break;
    }
    scanner_.SkipSpace();
    size_t name_pos = scanner_.pos();
    std::string_view name = scanner_.ReadName("an attribute name");
    scanner_.Expect('=', What("'=' after attribute ", name));
    const AttributeInfo* info = FindAttribute(name);
    bool typed = info != nullptr && AttributeApplies(info->attr, opcode);
    if (info == nullptr)
      scanner_.ErrorAt(name_pos, StrCat("unknown attribute '", name, "' on ", OpcodeName(opcode),
                                        ": expected an attribute XLA defines (such as sharding=, metadata=, ",
                                        "dimensions=)"));
    if (!typed) {
      for (const auto& [existing, unused] : instruction.extra_attributes())
        if (existing == name) scanner_.ErrorAt(name_pos, StrCat("duplicate attribute ", name));
      std::string_view value = name == "literal" ? ReadShapedLiteralText()
                                                 : scanner_.ReadRawValue(What("a value for attribute ", name));
      instruction.mutable_extra_attributes().emplace_back(std::string(name), std::string(value));
      continue;
    }
    Attr attr = info->attr;
    if (seen[static_cast<size_t>(attr)]) scanner_.ErrorAt(name_pos, StrCat("duplicate attribute ", name));
    bool second_comparison_type = (attr == Attr::kType && seen[static_cast<size_t>(Attr::kOrder)]) ||
                                  (attr == Attr::kOrder && seen[static_cast<size_t>(Attr::kType)]);
    if (second_comparison_type)
      scanner_.ErrorAt(name_pos, "compare takes type= or order= (two spellings of its comparison type), not both");
    seen[static_cast<size_t>(attr)] = true;
    auto read_int = [&] { return scanner_.ReadInt(What("an integer value for ", name)); };
    auto read_computation = [&] {
      scanner_.SkipSpace();
      size_t pos = scanner_.pos();
      return ResolveComputation(scanner_.ReadName(What("a computation name for ", name)), pos);
    };
    // Written only when the attribute is present, so other instructions keep no out-of-line
    // attributes.
    auto gather = [&]() -> GatherDimensionNumbers& { return instruction.mutable_gather_dims(); };
    auto scatter = [&]() -> ScatterDimensionNumbers& { return instruction.mutable_scatter_dims(); };
    switch (attr) {
      case Attr::kSharding: ParseShardingAttribute(instruction); break;
      case Attr::kMetadata: {
        std::string_view value = scanner_.ReadBalanced();
        if (value.front() != '{') scanner_.ErrorAt(name_pos, "expected '{' after metadata=");
        instruction.metadata = std::string(value.substr(1, value.size() - 2));
        break;
      }
      case Attr::kFrontendAttributes: {
        std::string_view value = scanner_.ReadBalanced();
        if (value.front() != '{') scanner_.ErrorAt(name_pos, "expected '{' after frontend_attributes=");
        instruction.frontend_attributes = std::string(value.substr(1, value.size() - 2));
        break;
      }
      case Attr::kBackendConfig:
        instruction.backend_config = std::string(scanner_.ReadRawValue("a backend_config value"));
        break;
      case Attr::kIndex: instruction.tuple_index = read_int(); break;
      case Attr::kDimensions: instruction.dimensions = ParseIntList(scanner_); break;
      case Attr::kIotaDimension: instruction.iota_dimension = read_int(); break;
      case Attr::kSlice: instruction.mutable_slice() = ParseSlice(scanner_); break;
      case Attr::kDynamicSliceSizes: instruction.mutable_dynamic_slice_sizes() = ParseIntList(scanner_); break;
      case Attr::kPadding: instruction.mutable_padding() = ParsePadding(scanner_); break;
      case Attr::kWindow: instruction.mutable_window() = ParseWindow(scanner_); break;
      case Attr::kDimLabels: instruction.mutable_conv_dims() = ParseDimLabels(scanner_); break;
      case Attr::kFeatureGroupCount: instruction.feature_group_count = read_int(); break;
      case Attr::kBatchGroupCount: instruction.batch_group_count = read_int(); break;
      case Attr::kLhsBatchDims: instruction.mutable_dot_dims().lhs_batch_dims = ParseIntList(scanner_); break;
      case Attr::kRhsBatchDims: instruction.mutable_dot_dims().rhs_batch_dims = ParseIntList(scanner_); break;
      case Attr::kLhsContractingDims: instruction.mutable_dot_dims().lhs_contracting_dims = ParseIntList(scanner_); break;
      case Attr::kRhsContractingDims: instruction.mutable_dot_dims().rhs_contracting_dims = ParseIntList(scanner_); break;
      case Attr::kOffsetDims: gather().offset_dims = ParseIntList(scanner_); break;
      case Attr::kCollapsedSliceDims: gather().collapsed_slice_dims = ParseIntList(scanner_); break;
      case Attr::kStartIndexMap: gather().start_index_map = ParseIntList(scanner_); break;
      case Attr::kOperandBatchingDims: gather().operand_batching_dims = ParseIntList(scanner_); break;
      case Attr::kStartIndicesBatchingDims: gather().start_indices_batching_dims = ParseIntList(scanner_); break;
      case Attr::kIndexVectorDim:
        if (opcode == Opcode::kGather)
          gather().index_vector_dim = read_int();
        else
          scatter().index_vector_dim = read_int();
        break;
      case Attr::kSliceSizes: instruction.mutable_gather_slice_sizes() = ParseIntList(scanner_); break;
      case Attr::kIndicesAreSorted: instruction.indices_are_sorted = ParseBool(scanner_); break;
      case Attr::kUpdateWindowDims: scatter().update_window_dims = ParseIntList(scanner_); break;
      case Attr::kInsertedWindowDims: scatter().inserted_window_dims = ParseIntList(scanner_); break;
      case Attr::kScatterDimsToOperandDims: scatter().scatter_dims_to_operand_dims = ParseIntList(scanner_); break;
      case Attr::kInputBatchingDims: scatter().input_batching_dims = ParseIntList(scanner_); break;
      case Attr::kScatterIndicesBatchingDims: scatter().scatter_indices_batching_dims = ParseIntList(scanner_); break;
      case Attr::kUniqueIndices: instruction.unique_indices = ParseBool(scanner_); break;
      case Attr::kToApply: called.to_apply = read_computation(); break;
      case Attr::kCondition: called.condition = read_computation(); break;
      case Attr::kBody: called.body = read_computation(); break;
      case Attr::kTrueComputation: called.true_computation = read_computation(); break;
      case Attr::kFalseComputation: called.false_computation = read_computation(); break;
      case Attr::kCalls: called.to_apply = read_computation(); break;
      case Attr::kSelect: called.select = read_computation(); break;
      case Attr::kScatter: called.scatter = read_computation(); break;
      case Attr::kBranchComputations: case Attr::kCalledComputations:
        called.list = ParseComputationList();
        called.has_list = true;
        break;
      case Attr::kDirection: instruction.comparison_direction = ParseComparisonDirection(scanner_); break;
      case Attr::kType: instruction.comparison_type = ParseComparisonType(scanner_); break;
      case Attr::kOrder: ParseComparisonOrderAttribute(instruction); break;
      case Attr::kIsStable: instruction.is_stable = ParseBool(scanner_); break;
      case Attr::kK: instruction.k = read_int(); break;
      case Attr::kLargest: instruction.largest = ParseBool(scanner_); break;
      case Attr::kCustomCallTarget: {
        std::string_view quoted = scanner_.ReadQuoted("a quoted custom_call_target");
        instruction.custom_call_target = std::string(quoted.substr(1, quoted.size() - 2));
        break;
      }
      case Attr::kCustomCallHasSideEffect: instruction.custom_call_has_side_effect = ParseBool(scanner_); break;
      case Attr::kExponentBits: instruction.exponent_bits = read_int(); break;
      case Attr::kMantissaBits: instruction.mantissa_bits = read_int(); break;
      case Attr::kChannelId: instruction.channel_id = read_int(); break;
      case Attr::kReplicaGroups: ParseReplicaGroupsAttribute(instruction); break;
      case Attr::kUseGlobalDeviceIds: instruction.use_global_device_ids = ParseBool(scanner_); break;
      case Attr::kConstrainLayout: instruction.constrain_layout = ParseBool(scanner_); break;
      case Attr::kSourceTargetPairs: instruction.mutable_source_target_pairs() = ParseSourceTargetPairs(scanner_); break;
      case Attr::kDistribution: {
        std::string_view word = scanner_.ReadWord();
        if (word.empty()) scanner_.ErrorExpected("a distribution such as rng_uniform");
        instruction.mutable_rng_distribution() = std::string(word);
        break;
      }
      case Attr::kCount: break;
    }
  }

  std::string_view missing = MissingRequiredAttribute(opcode, seen);
  // A broadcast of a scalar may leave out dimensions={} (XLA infers it).
  bool scalar_broadcast = opcode == Opcode::kBroadcast && instruction.operand_count() == 1 &&
                          instruction.operand(0)->shape().IsArray() && instruction.operand(0)->shape().rank() == 0;
  if (opcode == Opcode::kBroadcast && !scalar_broadcast && !seen[static_cast<size_t>(Attr::kDimensions)])
    missing = "dimensions=";
  if (!missing.empty())
    scanner_.ErrorAt(opcode_pos, StrCat(OpcodeName(opcode), " expects attribute ", missing));

  // Assemble the called computations in the order Instruction documents.
  std::vector<Computation*> computations;
  switch (opcode) {
    case Opcode::kWhile:
      if (called.condition) computations.push_back(called.condition);
      if (called.body) computations.push_back(called.body);
      break;
    case Opcode::kSelectAndScatter:
      if (called.select) computations.push_back(called.select);
      if (called.scatter) computations.push_back(called.scatter);
      break;
    case Opcode::kConditional:
      instruction.conditional_uses_branch_list = called.has_list;
      if (called.has_list) {
        computations = called.list;
        break;
      }
      if (!called.true_computation || !called.false_computation)
        scanner_.ErrorAt(opcode_pos, "conditional expects branch_computations={...} or true_computation= and false_computation=");
      computations = {called.true_computation, called.false_computation};
      break;
    case Opcode::kCustomCall:
      computations = called.list;
      if (called.to_apply) computations.insert(computations.begin(), called.to_apply);
      break;
    default:
      if (called.to_apply) computations.push_back(called.to_apply);
      break;
  }
  instruction.set_called_computations(std::move(computations));
}

}  // namespace gspmd::hlo_text
