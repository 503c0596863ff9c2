// HLO text parser, module level: the HloModule header, debug tables, computations and
// their signatures. Instructions are read in instruction_parser.cpp.
//
// Accepted syntax (a superset of what XLA prints): names with or without '%'; ENTRY and
// other computations with or without a "(p: f32[]) -> f32[]" signature; /* */ comments
// anywhere; a missing ENTRY makes the last computation the entry; a missing ROOT makes the
// last instruction the root.
#include "text/parser.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ir/verifier.h"
#include "text/module_parser.h"
#include "text/shape_text.h"

namespace gspmd {
namespace hlo_text {
namespace {

constexpr std::string_view kDebugTableNames[] = {"FileNames", "FunctionNames", "FileLocations",
                                                 "StackFrames"};

std::vector<std::string>* DebugTable(DebugTables& tables, std::string_view name) {
  if (name == "FileNames") return &tables.file_names;
  if (name == "FunctionNames") return &tables.function_names;
  if (name == "FileLocations") return &tables.file_locations;
  if (name == "StackFrames") return &tables.stack_frames;
  return nullptr;
}

// The debug table keyword at `pos` when one starts a line there.
std::string_view DebugTableAt(std::string_view text, size_t pos) {
  for (std::string_view name : kDebugTableNames) {
    if (text.substr(pos, name.size()) != name) continue;
    size_t after = pos + name.size();
    if (after == text.size() || text[after] == '\n' || text[after] == '\r' || text[after] == ' ') return name;
  }
  return {};
}

}  // namespace

std::unique_ptr<Module> ModuleParser::Parse() {
  ParseHeader();
  ParseDebugTables();
  while (!scanner_.AtEnd()) ParseComputation();
  if (computations_.empty()) scanner_.ErrorExpected("a computation (such as 'ENTRY %main { ... }')");
  if (entry_ == nullptr) entry_ = computations_.back().get();
  for (auto& computation : computations_) {
    bool is_entry = computation.get() == entry_;
    module_->AddComputation(std::move(computation), is_entry);
  }
  if (headerless_) module_->set_name(StrCat("module_", entry_->name()));
  ResolveFullyUnreducedShardings();
  CheckEntryComputationLayout();
  VerifyModuleStructure(*module_);
  return std::move(module_);
}

// entry_computation_layout={(f32[8]{0}, s32[])->f32[8]{0}} must describe the entry computation.
void ModuleParser::CheckEntryComputationLayout() {
  if (layout_pos_ == 0) return;
  Scanner layout = scanner_;
  layout.set_pos(layout_pos_);
  layout.Expect('{', "'{' to start the entry_computation_layout");
  layout.Expect('(', "'(' and the parameter shapes of the entry_computation_layout");
  std::vector<Shape> parameters;
  if (!layout.TryConsume(')')) {
    do {
      parameters.push_back(ParseShape(layout));
    } while (layout.TryConsume(','));
    layout.Expect(')', "',' or ')' in the parameter shapes of the entry_computation_layout");
  }
  layout.Expect("->", "'->' and the result shape in the entry_computation_layout");
  Shape result = ParseShape(layout);
  layout.Expect('}', "'}' to close the entry_computation_layout");
  const Computation& entry = *entry_;
  if (static_cast<int64_t>(parameters.size()) != entry.num_parameters())
    scanner_.ErrorAt(layout_pos_, StrCat("entry_computation_layout lists ", parameters.size(),
                                         " parameters, but the entry computation ", entry.name(), " has ",
                                         entry.num_parameters()));
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Instruction* parameter = entry.parameter(static_cast<int64_t>(i));
    if (!parameters[i].Compatible(parameter->shape()))
      scanner_.ErrorAt(layout_pos_, StrCat("entry_computation_layout says parameter ", i, " is ",
                                           parameters[i].ToString(false), ", but parameter(", i, ") %",
                                           parameter->name(), " of ", entry.name(), " is ",
                                           parameter->shape().ToString(false)));
  }
  if (!result.Compatible(entry.root()->shape()))
    scanner_.ErrorAt(layout_pos_, StrCat("entry_computation_layout says the result is ", result.ToString(false),
                                         ", but the ROOT %", entry.root()->name(), " of ", entry.name(), " is ",
                                         entry.root()->shape().ToString(false)));
}

void ModuleParser::ParseHeader() {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  if (scanner_.ReadWord() != "HloModule") {
    // XLA also reads bare computations ("ENTRY main { ... }") as a module named after the entry.
    scanner_.set_pos(start);
    if (!scanner_.AtName()) scanner_.ErrorExpected("'HloModule' at the start of the module, or a computation");
    module_ = std::make_unique<Module>("");
    headerless_ = true;
    return;
  }
  module_ = std::make_unique<Module>(std::string(scanner_.ReadName("the module name after HloModule")));
  scanner_.TryConsume(':');  // "HloModule name:" is accepted too
  while (scanner_.TryConsume(',')) {
    scanner_.SkipSpace();
    std::string_view key = scanner_.ReadName("a module attribute name");
    scanner_.Expect('=', What("'=' after module attribute ", key));
    scanner_.SkipSpace();
    size_t value_pos = scanner_.pos();
    std::string_view value = scanner_.ReadRawValue(What("a value for module attribute ", key));
    for (const auto& [existing, unused] : module_->attributes)
      if (existing == key) scanner_.ErrorAt(value_pos, StrCat("duplicate module attribute ", key));
    if (key == "num_partitions" || key == "replica_count") {
      Scanner number(value, "");
      int64_t n = 0;
      try {
        n = number.ReadInt("");
      } catch (const UserError&) {
        n = -1;
      }
      if (n <= 0 || n > kMaxModuleDevices || !number.AtEnd())
        scanner_.ErrorAt(value_pos, StrCat("bad ", key, "=", value, ": expected an integer from 1 to ", kMaxModuleDevices));
      (key == "num_partitions" ? num_partitions_ : replica_count_) = n;
    }
    if (key == "entry_computation_layout") layout_pos_ = value_pos;
    module_->attributes.emplace_back(std::string(key), std::string(value));
  }
}

void ModuleParser::ParseDebugTables() {
  std::string_view text = scanner_.text();
  while (true) {
    scanner_.SkipSpace();
    std::string_view name = DebugTableAt(text, scanner_.pos());
    if (name.empty()) return;
    module_->debug_tables.present = true;
    std::vector<std::string>* table = DebugTable(module_->debug_tables, name);
    size_t p = text.find('\n', scanner_.pos());
    // Entries: following lines that start with a number, kept verbatim.
    while (p != std::string_view::npos) {
      size_t line_start = p + 1;
      size_t content = line_start;
      while (content < text.size() && (text[content] == ' ' || text[content] == '\t')) ++content;
      if (content >= text.size() || !IsDigit(text[content])) {
        p = line_start;
        break;
      }
      size_t line_end = text.find('\n', content);
      if (line_end == std::string_view::npos) line_end = text.size();
      size_t trimmed_end = line_end;
      while (trimmed_end > content && (text[trimmed_end - 1] == ' ' || text[trimmed_end - 1] == '\r')) --trimmed_end;
      table->emplace_back(text.substr(content, trimmed_end - content));
      p = line_end < text.size() ? line_end : std::string_view::npos;
    }
    scanner_.set_pos(p == std::string_view::npos ? text.size() : p);
  }
}

void ModuleParser::ParseComputation() {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  std::string_view name = scanner_.ReadName("a computation name or ENTRY");
  bool is_entry = false;
  if (name == "ENTRY" && scanner_.Peek() != '{' && scanner_.Peek() != '(') {
    is_entry = true;
    name = scanner_.ReadName("the entry computation name after ENTRY");
  }
  size_t name_pos = start;
  if (computation_names_.count(name))
    scanner_.ErrorAt(start, StrCat("duplicate computation name '", name, "': expected each computation to have a unique name"));
  if (is_entry && entry_ != nullptr)
    scanner_.ErrorAt(start, StrCat("second ENTRY computation '", name, "': expected only one, '", entry_->name(),
                                   "' is already the entry"));

  auto owned = std::make_unique<Computation>(std::string(name));
  ComputationState state;
  state.computation = owned.get();
  computations_.push_back(std::move(owned));

  // Optional signature: (a: f32[], b: (s32[], f32[2])) -> f32[]
  std::optional<Shape> result;
  size_t signature_pos = scanner_.pos();
  bool has_signature = scanner_.Peek() == '(';
  if (has_signature) {
    scanner_.SkipSpace();
    signature_pos = scanner_.pos();
    scanner_.Expect('(', "'('");
    if (!scanner_.TryConsume(')')) {
      do {
        std::string_view param = scanner_.ReadName("a parameter name in the signature");
        scanner_.Expect(':', What("':' after signature parameter ", param));
        ParseShape(scanner_);  // read for its syntax only (see below)
      } while (scanner_.TryConsume(','));
      scanner_.Expect(')', "',' or ')' in the computation signature");
    }
    scanner_.Expect("->", "'->' and the result shape after the parameter list");
    result = ParseShape(scanner_);
  }
  state.computation->printed_with_signature = has_signature;
  scanner_.SkipSpace();
  size_t body_pos = scanner_.pos();
  scanner_.Expect('{', What("'{' to start the body of computation ", name));
  // Size the name table for the body (about one instruction per line) to avoid rehashing.
  std::string_view rest = scanner_.text().substr(scanner_.pos());
  std::string_view body = rest.substr(0, rest.find("\n}"));
  state.names.reserve(static_cast<size_t>(std::count(body.begin(), body.end(), '\n')) + 1);
  while (!scanner_.TryConsume('}')) {
    if (scanner_.AtEnd())
      scanner_.ErrorAt(scanner_.pos(), StrCat("expected '}' to close computation ", name, " (opened at ",
                                              scanner_.LocationAt(body_pos).ToString(),
                                              "), but reached the end of the file"));
    ParseInstruction(state);
  }
  FinishComputation(state, name_pos);
  // "}, execution_thread="host"": the thread XLA runs the computation on.
  size_t after_body = scanner_.pos();
  if (scanner_.TryConsume(',')) {
    scanner_.SkipSpace();
    size_t key_pos = scanner_.pos();
    std::string_view key = scanner_.ReadWord();
    if (key != "execution_thread") {
      scanner_.set_pos(key_pos);
      scanner_.ErrorExpected(What("execution_thread= after the body of computation ", name));
    }
    scanner_.Expect('=', "'=' after execution_thread");
    std::string_view quoted = scanner_.ReadQuoted("a quoted thread name after execution_thread=");
    state.computation->execution_thread = std::string(quoted.substr(1, quoted.size() - 2));
  } else {
    scanner_.set_pos(after_body);
  }

  Computation* computation = state.computation;
  // Like XLA's parser, only the result is checked against the body: XLA's own tests write
  // signatures such as "(arg_tuple.1: ()) -> ..." whose parameters disagree with the body's
  // parameter instructions, which are what counts (and what the printer writes back).
  if (has_signature) {
    if (!result->Compatible(computation->root()->shape()))
      scanner_.ErrorAt(signature_pos, StrCat("signature of ", name, " returns ", result->ToString(false),
                                             ", but the ROOT ", computation->root()->name(), " is ",
                                             computation->root()->shape().ToString(false)));
  }
  computation_names_.emplace(computation->name(), computation);
  if (is_entry) entry_ = computation;
}

void ModuleParser::FinishComputation(ComputationState& state, size_t name_pos) {
  Computation* computation = state.computation;
  if (state.last == nullptr)
    scanner_.ErrorAt(name_pos, StrCat("computation ", computation->name(), " is empty: expected at least one instruction"));
  computation->set_root(state.root != nullptr ? state.root : state.last);
  for (size_t i = 0; i < state.has_parameter.size(); ++i)
    if (!state.has_parameter[i])
      scanner_.ErrorAt(name_pos, StrCat("computation ", computation->name(), " has no parameter(", i,
                                        "): expected parameter numbers 0..", state.has_parameter.size() - 1));
  // Name the get-tuple-elements created for %t#i operands: "<tuple>.gte<i>", made unique.
  for (Instruction* gte : state.synthesized) {
    std::string base = StrCat(gte->operand(0)->name(), ".gte", gte->tuple_index);
    std::string name = base;
    for (int suffix = 1; state.names.count(name); ++suffix) name = StrCat(base, ".", suffix);
    gte->set_name(std::move(name));
    state.names.emplace(gte->name(), gte);
  }
}

Computation* ModuleParser::ResolveComputation(std::string_view name, size_t pos) {
  auto it = computation_names_.find(name);
  if (it != computation_names_.end()) return it->second;
  if (!computations_.empty() && computations_.back()->name() == name)
    scanner_.ErrorAt(pos, StrCat("computation ", name, " calls itself: expected a computation defined earlier"));
  scanner_.ErrorAt(pos, StrCat("undefined computation '", name, "': expected the name of a computation defined earlier in the module"));
}

}  // namespace hlo_text

std::unique_ptr<Module> ParseModule(std::string_view text, const std::string& filename) {
  hlo_text::ModuleParser parser(text, filename);
  return parser.Parse();
}

std::unique_ptr<Module> ParseModuleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) GSPMD_USER_ERROR(path, ": error: cannot read the file (expected a readable HLO text file)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  return ParseModule(text, path);
}

}  // namespace gspmd
