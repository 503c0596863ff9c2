// IOPDDL reader: gzip through zlib, JSON through nlohmann's SAX interface (the large instances
// are ~100 MB of numbers; a DOM would hold several times that), then the shape checks.
#include "autoshard/iopddl_reader.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/diagnostic.h"

namespace gspmd::autoshard {
namespace {

[[noreturn]] void Fail(const std::string& origin, const std::string& message) {
  throw UserError(StrCat(origin, ": error: ", message));
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "cannot open the file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) Fail(path, "cannot read the file");
  return buffer.str();
}

bool IsGzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Inflates every gzip member of `bytes`; a stream that ends before its trailer is an error.
std::string Gunzip(const std::string& bytes, const std::string& origin) {
  std::string out;
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) Fail(origin, "cannot start gzip decompression");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  char chunk[1 << 16];
  int status = Z_OK;
  while (true) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof(chunk);
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - stream.avail_out);
    if (status == Z_STREAM_END) {
      if (stream.avail_in == 0) break;
      inflateReset(&stream);  // another gzip member follows
      continue;
    }
    if (status == Z_OK) continue;
    if (status == Z_BUF_ERROR && stream.avail_in == 0) break;  // input ran out mid-stream
    const std::string reason = stream.msg != nullptr ? stream.msg : "inflate failed";
    inflateEnd(&stream);
    Fail(origin, StrCat("corrupt gzip data after ", out.size(), " decompressed bytes: ", reason));
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END)
    Fail(origin, StrCat("truncated gzip data: the compressed stream ends after ", out.size(),
                        " decompressed bytes, before its end marker"));
  return out;
}

// The fields the reader keeps; every other key is skipped.
enum class Field { kNone, kIntervals, kNodeCosts, kUsages, kEdgeNodes, kEdgeCosts, kUsageLimit };

// A list of rows of integers (CSR): row i is values[offsets[i] .. offsets[i+1]).
struct Rows {
  std::vector<int64_t> values;
  std::vector<size_t> offsets{0};
  bool seen = false;
  size_t size() const { return offsets.size() - 1; }
  size_t length(size_t i) const { return offsets[i + 1] - offsets[i]; }
  const int64_t* row(size_t i) const { return values.data() + offsets[i]; }
};

const char* FieldName(Field field) {
  switch (field) {
    case Field::kIntervals: return "problem.nodes.intervals";
    case Field::kNodeCosts: return "problem.nodes.costs";
    case Field::kUsages: return "problem.nodes.usages";
    case Field::kEdgeNodes: return "problem.edges.nodes";
    case Field::kEdgeCosts: return "problem.edges.costs";
    case Field::kUsageLimit: return "problem.usage_limit";
    case Field::kNone: break;
  }
  return "";
}

bool IsCostField(Field field) { return field == Field::kNodeCosts || field == Field::kEdgeCosts; }

// SAX handler: follows the path of keys and indexes, and appends each number of a known
// list-of-lists field to its rows.
class ProblemSax {
 public:
  explicit ProblemSax(std::string origin) : origin_(std::move(origin)) {}

  Rows intervals, node_costs, usages, edge_nodes, edge_costs;
  bool seen_problem = false, seen_nodes = false, seen_edges = false, seen_limit = false;
  int64_t usage_limit = 0;
  std::string name;

  bool null() { return Scalar("null"); }
  bool boolean(bool) { return Scalar("a boolean"); }
  bool number_integer(int64_t value) {
    if (value < 0) return Negative(std::to_string(value));
    return Number(static_cast<uint64_t>(value), false);
  }
  bool number_unsigned(uint64_t value) { return Number(value, false); }
  bool number_float(double value, const std::string& text) {
    if (std::isnan(value) || value < 0) return Negative(text);
    if (value != std::floor(value)) {
      if (InNumbers()) Fail(origin_, StrCat(Path(), " is ", text, ", expected an integer"));
      return Scalar("a fraction");
    }
    if (value >= 1.8e19) return Number(std::numeric_limits<uint64_t>::max(), true);
    return Number(static_cast<uint64_t>(value), false);
  }
  bool string(std::string& value) {
    if (stack_.size() == 2 && stack_[0].key == "problem" && stack_[1].key == "name") {
      name = value;
      Advance();
      return true;
    }
    return Scalar("a string");
  }
  bool binary(nlohmann::json::binary_t&) { return Scalar("binary data"); }

  bool start_object(size_t) {
    const size_t depth = stack_.size();
    if (InNumbers() || CurrentField() != Field::kNone)
      Fail(origin_, StrCat(Path(), " is an object, expected ", Expected()));
    if (depth == 1 && stack_[0].key == "problem") seen_problem = true;
    if (depth == 2 && stack_[0].key == "problem" && stack_[1].key == "nodes") seen_nodes = true;
    if (depth == 2 && stack_[0].key == "problem" && stack_[1].key == "edges") seen_edges = true;
    stack_.push_back(Frame{false, 0, "", Field::kNone, 0});
    return true;
  }
  bool key(std::string& key) {
    stack_.back().key = key;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    Advance();
    return true;
  }
  bool start_array(size_t) {
    const Field field = CurrentField();
    if (field == Field::kUsageLimit) Fail(origin_, StrCat(Path(), " is an array, expected an integer"));
    if (field != Field::kNone) {
      Rows& rows = RowsOf(field);
      if (rows.seen) Fail(origin_, StrCat(Path(), " appears twice"));
      rows.seen = true;
      stack_.push_back(Frame{true, 0, "", field, 1});
      return true;
    }
    const bool outer = !stack_.empty() && stack_.back().array && stack_.back().level == 1;
    if (outer) {  // a row of a known field
      stack_.push_back(Frame{true, 0, "", stack_.back().field, 2});
      return true;
    }
    if (InNumbers()) Fail(origin_, StrCat(Path(), " is an array, expected an integer"));
    stack_.push_back(Frame{true, 0, "", Field::kNone, 0});
    return true;
  }
  bool end_array() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    if (frame.level == 2) {
      Rows& rows = RowsOf(frame.field);
      rows.offsets.push_back(rows.values.size());
    }
    Advance();
    return true;
  }
  bool parse_error(size_t position, const std::string& last_token, const nlohmann::detail::exception& error) {
    std::string what = error.what();
    if (last_token.empty() || what.find("end of input") != std::string::npos)
      Fail(origin_, StrCat("the JSON text ends early (after ", position, " bytes, inside ",
                           stack_.empty() ? std::string("the top level") : Path(), "): ", what));
    Fail(origin_, StrCat("malformed JSON at byte ", position, " (inside ",
                         stack_.empty() ? std::string("the top level") : Path(), "): ", what));
  }

 private:
  struct Frame {
    bool array;
    int64_t index;  // arrays: the index of the next element
    std::string key;  // objects: the current key
    Field field;
    int level;  // 1: a known field's outer array, 2: one of its rows, 0: anything else
  };

  // The field a value at the current position starts (only at the known keys' positions).
  Field CurrentField() const {
    if (stack_.size() == 2 && stack_[0].key == "problem" && !stack_[1].array && stack_[1].key == "usage_limit")
      return Field::kUsageLimit;
    if (stack_.size() != 3 || stack_[0].key != "problem" || stack_[1].array || stack_[2].array) return Field::kNone;
    const std::string& group = stack_[1].key;
    const std::string& key = stack_[2].key;
    if (group == "nodes" && key == "intervals") return Field::kIntervals;
    if (group == "nodes" && key == "costs") return Field::kNodeCosts;
    if (group == "nodes" && key == "usages") return Field::kUsages;
    if (group == "edges" && key == "nodes") return Field::kEdgeNodes;
    if (group == "edges" && key == "costs") return Field::kEdgeCosts;
    return Field::kNone;
  }
  bool InNumbers() const { return !stack_.empty() && stack_.back().level >= 1; }
  std::string Expected() const {
    if (!stack_.empty() && stack_.back().level == 1) return "an array of integers";
    if (!stack_.empty() && stack_.back().level == 2) return "an integer";
    if (CurrentField() == Field::kUsageLimit) return "an integer";
    return "an array of arrays of integers";
  }
  Rows& RowsOf(Field field) {
    switch (field) {
      case Field::kIntervals: return intervals;
      case Field::kNodeCosts: return node_costs;
      case Field::kUsages: return usages;
      case Field::kEdgeNodes: return edge_nodes;
      default: return edge_costs;
    }
  }
  void Advance() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }
  bool Scalar(const char* what) {
    const Field field = CurrentField();
    if (InNumbers() || field != Field::kNone)
      Fail(origin_, StrCat(Path(), " is ", what, ", expected ", Expected()));
    Advance();
    return true;
  }
  bool Negative(const std::string& text) {
    if (InNumbers() || CurrentField() == Field::kUsageLimit)
      Fail(origin_, StrCat(Path(), " is ", text, ", expected a non-negative integer"));
    Advance();
    return true;
  }
  bool Number(uint64_t value, bool huge) {
    if (!stack_.empty() && stack_.back().level == 2) {
      const Field field = stack_.back().field;
      int64_t stored;
      if (IsCostField(field)) {
        stored = value >= static_cast<uint64_t>(kForbiddenCost) ? kForbiddenCost : static_cast<int64_t>(value);
      } else {
        if (huge || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4))
          Fail(origin_, StrCat(Path(), " is ", value, ", too large (expected at most 2^61)"));
        stored = static_cast<int64_t>(value);
      }
      RowsOf(field).values.push_back(stored);
      Advance();
      return true;
    }
    if (!stack_.empty() && stack_.back().level == 1)
      Fail(origin_, StrCat(Path(), " is a number, expected an array of integers"));
    const Field field = CurrentField();
    if (field == Field::kUsageLimit) {
      if (seen_limit) Fail(origin_, StrCat(Path(), " appears twice"));
      if (huge || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4))
        Fail(origin_, StrCat(Path(), " is ", value, ", too large (expected at most 2^61)"));
      seen_limit = true;
      usage_limit = static_cast<int64_t>(value);
    } else if (field != Field::kNone) {
      Fail(origin_, StrCat(Path(), " is a number, expected an array of arrays of integers"));
    }
    Advance();
    return true;
  }

 public:
  // "problem.edges.costs[17][3]" for the value being read.
  std::string Path() const {
    std::string path;
    for (const Frame& frame : stack_) {
      if (frame.array) {
        path += StrCat("[", frame.index, "]");
      } else if (!frame.key.empty()) {
        if (!path.empty()) path += ".";
        path += frame.key;
      }
    }
    return path;
  }

 private:
  std::string origin_;
  std::vector<Frame> stack_;
};

void RequireKey(bool seen, const std::string& origin, const std::string& key) {
  if (!seen) Fail(origin, StrCat("missing key ", key));
}

StrategyProblem Assemble(ProblemSax& sax, const std::string& origin) {
  RequireKey(sax.seen_problem, origin, "problem (the top-level object must hold \"problem\": {...})");
  RequireKey(sax.seen_nodes, origin, "problem.nodes");
  RequireKey(sax.intervals.seen, origin, FieldName(Field::kIntervals));
  RequireKey(sax.node_costs.seen, origin, FieldName(Field::kNodeCosts));
  RequireKey(sax.usages.seen, origin, FieldName(Field::kUsages));
  RequireKey(sax.seen_edges, origin, "problem.edges");
  RequireKey(sax.edge_nodes.seen, origin, FieldName(Field::kEdgeNodes));
  RequireKey(sax.edge_costs.seen, origin, FieldName(Field::kEdgeCosts));
  RequireKey(sax.seen_limit, origin, FieldName(Field::kUsageLimit));

  const size_t node_count = sax.node_costs.size();
  if (node_count > static_cast<size_t>(std::numeric_limits<int>::max() / 2))
    Fail(origin, StrCat("problem.nodes.costs has ", node_count, " nodes, too many"));
  if (sax.intervals.size() != node_count)
    Fail(origin, StrCat("problem.nodes.intervals has ", sax.intervals.size(), " entries, expected one per node (",
                        node_count, ", the length of problem.nodes.costs)"));
  if (sax.usages.size() != node_count)
    Fail(origin, StrCat("problem.nodes.usages has ", sax.usages.size(), " entries, expected one per node (",
                        node_count, ", the length of problem.nodes.costs)"));
  StrategyProblem problem;
  problem.name = sax.name;
  problem.usage_limit = sax.usage_limit;
  problem.nodes.resize(node_count);
  for (size_t i = 0; i < node_count; ++i) {
    StrategyProblem::Node& node = problem.nodes[i];
    if (sax.intervals.length(i) != 2)
      Fail(origin, StrCat("problem.nodes.intervals[", i, "] has ", sax.intervals.length(i),
                          " entries, expected 2 ([start, end])"));
    node.start = sax.intervals.row(i)[0];
    node.end = sax.intervals.row(i)[1];
    if (node.end < node.start)
      Fail(origin, StrCat("problem.nodes.intervals[", i, "] is [", node.start, ", ", node.end,
                          "], a negative interval (expected start <= end)"));
    const size_t strategies = sax.node_costs.length(i);
    if (strategies == 0) Fail(origin, StrCat("problem.nodes.costs[", i, "] is empty, expected at least one strategy"));
    if (sax.usages.length(i) != strategies)
      Fail(origin, StrCat("problem.nodes.usages[", i, "] has ", sax.usages.length(i),
                          " entries, expected one per strategy (", strategies, ", the length of problem.nodes.costs[",
                          i, "])"));
    node.costs.assign(sax.node_costs.row(i), sax.node_costs.row(i) + strategies);
    node.usages.assign(sax.usages.row(i), sax.usages.row(i) + strategies);
  }
  const size_t edge_count = sax.edge_nodes.size();
  if (sax.edge_costs.size() != edge_count)
    Fail(origin, StrCat("problem.edges.costs has ", sax.edge_costs.size(), " entries, expected one per edge (",
                        edge_count, ", the length of problem.edges.nodes)"));
  problem.edges.resize(edge_count);
  for (size_t e = 0; e < edge_count; ++e) {
    StrategyProblem::Edge& edge = problem.edges[e];
    if (sax.edge_nodes.length(e) != 2)
      Fail(origin, StrCat("problem.edges.nodes[", e, "] has ", sax.edge_nodes.length(e),
                          " entries, expected 2 ([u, v])"));
    for (int side = 0; side < 2; ++side) {
      const int64_t id = sax.edge_nodes.row(e)[side];
      if (id >= static_cast<int64_t>(node_count))
        Fail(origin, StrCat("problem.edges.nodes[", e, "][", side, "] is ", id, ", expected a node index below ",
                            node_count));
    }
    edge.from = static_cast<int>(sax.edge_nodes.row(e)[0]);
    edge.to = static_cast<int>(sax.edge_nodes.row(e)[1]);
    const size_t rows = problem.nodes[edge.from].costs.size();
    const size_t columns = problem.nodes[edge.to].costs.size();
    if (sax.edge_costs.length(e) != rows * columns)
      Fail(origin, StrCat("problem.edges.costs[", e, "] has ", sax.edge_costs.length(e), " entries, expected ", rows,
                          " x ", columns, " = ", rows * columns, " (the strategies of nodes ", edge.from, " and ",
                          edge.to, ")"));
    edge.costs.assign(sax.edge_costs.row(e), sax.edge_costs.row(e) + rows * columns);
  }
  return problem;
}

}  // namespace

StrategyProblem ParseIopddlText(const std::string& text, const std::string& origin) {
  ProblemSax sax(origin);
  nlohmann::json::sax_parse(text, &sax);
  return Assemble(sax, origin);
}

StrategyProblem ReadIopddlFile(const std::string& path) {
  std::string bytes = ReadBytes(path);
  if (IsGzip(bytes)) bytes = Gunzip(bytes, path);
  return ParseIopddlText(bytes, path);
}

}  // namespace gspmd::autoshard
