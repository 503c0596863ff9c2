// Parsing XLA's sharding, tile assignment and replica group text (GSPMD and named-mesh forms).
#include "sharding/sharding_text.h"

#include <algorithm>
#include <limits>
#include <set>

#include "sharding/mesh_parts.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Device arrays are materialized, so their size is bounded (far above any real mesh).
constexpr int64_t kMaxDevices = int64_t{1} << 22;
constexpr int64_t kMaxDeviceId = int64_t{1} << 31;

// An AxisRef with where it was written, for error offsets.
struct PlacedAxisRef {
  AxisRef ref;
  size_t offset;
};

class TextParser {
 public:
  explicit TextParser(std::string_view text) : text_(text) {}

  size_t pos() const { return pos_; }

  [[noreturn]] void Fail(size_t at, const std::string& message) const {
    throw ShardingSyntaxError(at, message);
  }

  // Whitespace and /* ... */ comments (XLA prints /*index=5*/ inside tuple shardings).
  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
        continue;
      }
      if (text_.substr(pos_, 2) == "/*") {
        const size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) Fail(pos_, "expected '*/' closing the comment");
        pos_ = end + 2;
        continue;
      }
      break;
    }
  }

  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }

  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  bool LookingAt(std::string_view s) {
    SkipSpace();
    return text_.substr(pos_, s.size()) == s;
  }

  bool TryConsume(std::string_view s) {
    if (!LookingAt(s)) return false;
    pos_ += s.size();
    return true;
  }

  void Expect(std::string_view s, const char* what) {
    if (!TryConsume(s)) Fail(pos_, StrCat("expected ", what));
  }

  // A keyword: an identifier equal to `word` (not a prefix of a longer identifier).
  bool TryKeyword(std::string_view word) {
    if (!LookingAt(word)) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() && IsIdentChar(text_[end]) && text_[end] != '-') return false;
    pos_ = end;
    return true;
  }

  int64_t ParseInt(const char* what) {
    SkipSpace();
    const size_t start = pos_;
    bool negative = false;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !IsDigit(text_[pos_])) Fail(start, StrCat("expected ", what));
    int64_t value = 0;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      const int64_t digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        Fail(start, StrCat("expected ", what, " that fits in 64 bits"));
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return negative ? -value : value;
  }

  int64_t ParseNonNegative(const char* what) {
    SkipSpace();
    const size_t start = pos_;
    const int64_t value = ParseInt(what);
    if (value < 0) Fail(start, StrCat("expected ", what, " (non-negative)"));
    return value;
  }

  // A device id: non-negative and below kMaxDeviceId (ids index device tables; larger ones
  // are typos or corruption, and id + 1 must not overflow).
  int64_t ParseDeviceId(const char* what) {
    SkipSpace();
    const size_t start = pos_;
    const int64_t value = ParseNonNegative(what);
    if (value >= kMaxDeviceId) Fail(start, StrCat("expected ", what, " below ", kMaxDeviceId));
    return value;
  }

  int64_t ParsePositive(const char* what) {
    SkipSpace();
    const size_t start = pos_;
    const int64_t value = ParseInt(what);
    if (value <= 0) Fail(start, StrCat("expected ", what, " (positive)"));
    return value;
  }

  // "[a,b,c]" of positive integers (possibly empty).
  std::vector<int64_t> ParseDimList(const char* what) {
    Expect("[", StrCat("'[' starting ", what).c_str());
    std::vector<int64_t> dims;
    if (TryConsume("]")) return dims;
    while (true) {
      dims.push_back(ParsePositive("a dimension size"));
      if (TryConsume("]")) return dims;
      Expect(",", StrCat("',' or ']' in ", what).c_str());
    }
  }

  // After "[dims]": "<=[reshape]T(perm)" or an explicit "d,d,d" device list.
  TileAssignment ParseTileAssignmentBody(std::vector<int64_t> dims, size_t dims_offset) {
    int64_t count = 1;
    for (int64_t d : dims) {
      if (count > kMaxDevices / d) {
        Fail(dims_offset, StrCat("expected at most ", kMaxDevices, " devices"));
      }
      count *= d;
    }
    if (TryConsume("<=")) {
      SkipSpace();
      const size_t reshape_offset = pos_;
      std::vector<int64_t> reshape = ParseDimList("the iota reshape dims");
      int64_t reshape_count = 1;
      for (int64_t d : reshape) {
        if (reshape_count > kMaxDevices / d) {
          Fail(reshape_offset, StrCat("expected iota reshape dims with ", count, " elements"));
        }
        reshape_count *= d;
      }
      if (reshape.empty() || reshape_count != count) {
        Fail(reshape_offset, StrCat("expected iota reshape dims with ", count,
                                    " elements (the product of the tile dims)"));
      }
      std::vector<int64_t> perm;
      const bool has_perm = pos_ < text_.size() && text_[pos_] == 'T';
      if (has_perm) {
        const size_t perm_offset = pos_;
        ++pos_;
        Expect("(", "'(' after T");
        while (true) {
          perm.push_back(ParseNonNegative("a transpose dimension"));
          if (TryConsume(")")) break;
          Expect(",", "',' or ')' in the transpose");
        }
        std::vector<int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        bool is_permutation = sorted.size() == reshape.size();
        for (size_t i = 0; is_permutation && i < sorted.size(); ++i) {
          is_permutation = sorted[i] == static_cast<int64_t>(i);
        }
        if (!is_permutation) {
          Fail(perm_offset,
               StrCat("expected T(...) to be a permutation of 0..", reshape.size() - 1));
        }
      }
      return TileAssignment::Iota(std::move(dims), std::move(reshape), std::move(perm));
    }
    SkipSpace();
    const size_t list_offset = pos_;
    std::vector<int64_t> devices;
    std::set<int64_t> seen;
    while (true) {
      SkipSpace();
      const size_t at = pos_;
      const int64_t device = ParseInt("a device id or '<=' after the tile dims");
      if (device < 0) Fail(at, "expected a non-negative device id");
      if (device >= kMaxDeviceId) Fail(at, StrCat("expected a device id below ", kMaxDeviceId));
      if (!seen.insert(device).second) {
        Fail(at, StrCat("expected unique device ids; device ", device, " appears more than once"));
      }
      devices.push_back(device);
      // Only a ',' followed by a number continues the list.
      const size_t save = pos_;
      if (TryConsume(",") && (Peek() == '-' || IsDigit(Peek()))) continue;
      pos_ = save;
      break;
    }
    if (static_cast<int64_t>(devices.size()) != count) {
      Fail(list_offset, StrCat("expected ", count,
                               " device ids (the product of the tile dims), got ", devices.size()));
    }
    return TileAssignment(std::move(dims), std::move(devices));
  }

  TileAssignment ParseTileAssignment() {
    SkipSpace();
    const size_t dims_offset = pos_;
    std::vector<int64_t> dims = ParseDimList("the tile dims");
    if (dims.empty()) Fail(dims_offset, "expected at least one tile dim");
    return ParseTileAssignmentBody(std::move(dims), dims_offset);
  }

  // A balanced {...} value kept verbatim (strings may hold braces).
  std::string ParseBracedVerbatim() {
    SkipSpace();
    const size_t start = pos_;
    if (pos_ >= text_.size() || text_[pos_] != '{') Fail(pos_, "expected '{'");
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '"') {
          if (text_[pos_] == '\\') ++pos_;
          ++pos_;
        }
        if (pos_ >= text_.size()) Fail(start, "expected '\"' closing the string");
        ++pos_;
        continue;
      }
      ++pos_;
      if (c == '{') ++depth;
      if (c == '}' && --depth == 0) return std::string(text_.substr(start, pos_ - start));
    }
    Fail(start, "expected '}' closing the metadata");
  }

  // ---- Named meshes.

  std::string ParseAxisName() {
    SkipSpace();
    const size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      const char quote = text_[pos_++];
      const size_t end = text_.find(quote, pos_);
      if (end == std::string_view::npos) Fail(start, "expected a closing quote on the axis name");
      std::string name(text_.substr(pos_, end - pos_));
      if (name.empty()) Fail(start, "expected a non-empty axis name");
      pos_ = end + 1;
      return name;
    }
    while (pos_ < text_.size() && IsIdentChar(text_[pos_]) && text_[pos_] != '-') ++pos_;
    if (pos_ == start) Fail(start, "expected an axis name");
    return std::string(text_.substr(start, pos_ - start));
  }

  // "mesh['a'=2,'b'=4]" [", device_ids=(...)"], or "maximal_mesh[device_id=3]".
  Mesh ParseMesh() {
    SkipSpace();
    Mesh mesh;
    if (TryConsume("maximal_mesh")) {
      Expect("[", "'[' after maximal_mesh");
      Expect("device_id", "'device_id=' in the maximal mesh");
      Expect("=", "'=' after device_id");
      mesh.device_ids = {ParseDeviceId("a device id")};
      Expect("]", "']' closing the maximal mesh");
      return mesh;
    }
    Expect("mesh", "'mesh['");
    Expect("[", "'[' after mesh");
    if (!TryConsume("]")) {
      while (true) {
        SkipSpace();
        const size_t name_offset = pos_;
        Mesh::Axis axis;
        axis.name = ParseAxisName();
        if (mesh.AxisIndex(axis.name) >= 0) {
          Fail(name_offset,
               StrCat("expected distinct mesh axis names; '", axis.name, "' appears twice"));
        }
        Expect("=", "'=' after the mesh axis name");
        SkipSpace();
        const size_t size_offset = pos_;
        axis.size = ParsePositive("a mesh axis size");
        const int64_t devices_so_far = mesh.axes.empty() ? 1 : mesh.num_devices();  // empty mesh: 0 devices
        if (devices_so_far > kMaxDevices / axis.size) {
          Fail(size_offset, StrCat("expected a mesh of at most ", kMaxDevices, " devices"));
        }
        mesh.axes.push_back(std::move(axis));
        if (TryConsume("]")) break;
        Expect(",", "',' or ']' in the mesh axes");
      }
    }
    const size_t save = pos_;
    if (TryConsume(",") && TryConsume("device_ids")) {
      Expect("=", "'=' after device_ids");
      SkipSpace();
      const size_t list_offset = pos_;
      Expect("(", "'(' starting the mesh device ids");
      std::set<int64_t> seen;
      while (true) {
        SkipSpace();
        const size_t at = pos_;
        const int64_t id = ParseDeviceId("a device id");
        if (!seen.insert(id).second) {
          Fail(at, StrCat("expected unique device ids; device ", id, " appears more than once"));
        }
        mesh.device_ids.push_back(id);
        if (TryConsume(")")) break;
        Expect(",", "',' or ')' in the mesh device ids");
      }
      if (static_cast<int64_t>(mesh.device_ids.size()) != mesh.num_devices()) {
        Fail(list_offset, StrCat("expected ", mesh.num_devices(),
                                 " mesh device ids (the product of the axis sizes)"));
      }
    } else {
      pos_ = save;
    }
    return mesh;
  }

  PlacedAxisRef ParseAxisRef(const Mesh& mesh) {
    SkipSpace();
    PlacedAxisRef placed{AxisRef{}, pos_};
    placed.ref.name = ParseAxisName();
    if (mesh.AxisIndex(placed.ref.name) < 0) {
      Fail(placed.offset,
           StrCat("expected an axis of ", mesh.ToString(), "; '", placed.ref.name, "' is not one"));
    }
    if (TryConsume(":")) {
      Expect("(", "'(' starting the sub-axis pre-size");
      placed.ref.pre_size = ParsePositive("a sub-axis pre-size");
      Expect(")", "')' after the sub-axis pre-size");
      placed.ref.size = ParsePositive("a sub-axis size");
      const std::string problem = CheckAxisRef(mesh, placed.ref);
      if (!problem.empty()) Fail(placed.offset, "expected a valid sub-axis: " + problem);
    }
    return placed;
  }

  // "{'a', 'b':(2)2}" (possibly empty).
  std::vector<PlacedAxisRef> ParseAxisRefSet(const Mesh& mesh, const char* what) {
    Expect("{", StrCat("'{' starting ", what).c_str());
    std::vector<PlacedAxisRef> refs;
    if (TryConsume("}")) return refs;
    while (true) {
      if (Peek() == '?')
        Fail(pos_, "expected a closed dimension sharding (open '?' is not supported)");
      refs.push_back(ParseAxisRef(mesh));
      if (TryConsume("}")) return refs;
      Expect(",", StrCat("',' or '}' in ", what).c_str());
    }
  }

  static std::vector<AxisRef> Unplaced(const std::vector<PlacedAxisRef>& placed) {
    std::vector<AxisRef> refs;
    refs.reserve(placed.size());
    for (const PlacedAxisRef& p : placed) refs.push_back(p.ref);
    return refs;
  }

  // Overlaps and uneven cuts among all references of one sharding / replica group list.
  void CheckAxisRefSet(const Mesh& mesh, const std::vector<PlacedAxisRef>& placed,
                       size_t fallback_offset) {
    const std::vector<AxisRef> refs = Unplaced(placed);
    const int64_t overlapping = FirstOverlappingAxisRef(mesh, refs);
    if (overlapping >= 0) {
      Fail(placed[overlapping].offset,
           StrCat("expected each mesh axis used once; ", refs[overlapping].ToString(),
                  " overlaps an earlier axis"));
    }
    MeshParts parts;
    const std::string problem = parts.Build(mesh, refs);
    if (!problem.empty()) Fail(fallback_offset, "expected compatible sub-axes: " + problem);
  }

  // Body of a named sharding after "{": mesh, then the form, extras and metadata, and "}".
  Sharding ParseNamedSharding() {
    NamedShardingView view;
    view.mesh = ParseMesh();
    std::string metadata;
    if (view.mesh.is_maximal()) {
      view.form = NamedShardingView::Form::kMaximal;
    } else {
      Expect(",", "',' after the mesh");
      SkipSpace();
      const size_t form_offset = pos_;
      if (TryKeyword("replicated")) {
        view.form = NamedShardingView::Form::kReplicated;
      } else if (TryKeyword("manual")) {
        view.form = NamedShardingView::Form::kManual;
      } else if (LookingAt("[")) {
        ParseNamedDims(view, form_offset);
      } else {
        Fail(form_offset, "expected '[' with the dimension shardings, 'replicated' or 'manual'");
      }
    }
    if (TryConsume(",")) {
      Expect("metadata", "'metadata=' after ','");
      Expect("=", "'=' after metadata");
      metadata = ParseBracedVerbatim();
    }
    Expect("}", "'}' closing the sharding");
    Sharding sharding = Sharding::FromNamedView(std::move(view));
    sharding.set_metadata(std::move(metadata));
    return sharding;
  }

  void ParseNamedDims(NamedShardingView& view, size_t form_offset) {
    std::vector<PlacedAxisRef> all;
    Expect("[", "'['");
    if (!TryConsume("]")) {
      while (true) {
        std::vector<PlacedAxisRef> dim = ParseAxisRefSet(view.mesh, "a dimension sharding");
        view.dim_axes.push_back(Unplaced(dim));
        all.insert(all.end(), dim.begin(), dim.end());
        if (TryConsume("]")) break;
        Expect(",", "',' or ']' in the dimension shardings");
      }
    }
    // Optional ", replicated={...}", ", unreduced={...}", ", manual={...}" (in this order).
    auto try_extra = [&](std::string_view label, std::vector<AxisRef>& out) {
      const size_t save = pos_;
      if (!TryConsume(",")) return;
      if (!TryKeyword(label) || !TryConsume("=")) {
        pos_ = save;
        return;
      }
      std::vector<PlacedAxisRef> refs = ParseAxisRefSet(view.mesh, "an axis set");
      out = Unplaced(refs);
      all.insert(all.end(), refs.begin(), refs.end());
    };
    try_extra("replicated", view.replicated_axes);
    try_extra("unreduced", view.unreduced_axes);
    try_extra("manual", view.manual_axes);
    CheckAxisRefSet(view.mesh, all, form_offset);
  }

  // ---- GSPMD shardings.

  // XLA's tuple shardings are flat ({{a}, {b}}); nested ones ({{a}, {{b}, {c}}}) are accepted
  // to a bounded depth, so deep input is an error, not a stack overflow.
  Sharding ParseSharding(int depth = 0) {
    constexpr int kMaxTupleNesting = 64;
    SkipSpace();
    if (depth > kMaxTupleNesting) Fail(pos_, StrCat("tuple shardings nested more than ", kMaxTupleNesting, " deep"));
    Expect("{", "'{' starting a sharding");
    if (TryConsume("}")) return Sharding::Tuple({});
    if (Peek() == '{') {
      std::vector<Sharding> elements;
      while (true) {
        elements.push_back(ParseSharding(depth + 1));
        if (TryConsume("}")) return Sharding::Tuple(std::move(elements));
        Expect(",", "',' or '}' in the tuple sharding");
      }
    }
    if (LookingAt("mesh[") || LookingAt("maximal_mesh[")) return ParseNamedSharding();
    return ParseSingleSharding();
  }

  Sharding ParseSingleSharding() {
    enum class KindWord { kNone, kReplicated, kManual, kUnknown, kMaximal };
    KindWord kind = KindWord::kNone;
    std::optional<int64_t> device;
    std::optional<TileAssignment> tiles;
    size_t tiles_offset = 0;
    bool last_tile_dim_replicate = false;
    std::vector<Sharding::SubgroupType> last_tile_dims;
    size_t last_tile_dims_offset = 0;
    std::optional<Sharding::ShardGroup> shard_group;
    std::optional<Sharding::Reduction> partial_reduction;
    std::string metadata;
    auto set_kind = [&](KindWord k, size_t at) {
      if (kind != KindWord::kNone || tiles.has_value()) {
        Fail(at, "expected only one of replicated, manual, unknown, maximal, devices=");
      }
      kind = k;
    };
    while (true) {
      SkipSpace();
      const size_t at = pos_;
      if (TryConsume("}")) {
        pos_ = at;
        break;
      }
      if (TryKeyword("replicated")) {
        set_kind(KindWord::kReplicated, at);
      } else if (TryKeyword("manual")) {
        set_kind(KindWord::kManual, at);
      } else if (TryKeyword("unknown")) {
        set_kind(KindWord::kUnknown, at);
      } else if (TryKeyword("maximal")) {
        set_kind(KindWord::kMaximal, at);
      } else if (TryConsume("devices=")) {
        if (kind != KindWord::kNone || tiles.has_value()) {
          Fail(at, "expected only one of replicated, manual, unknown, maximal, devices=");
        }
        SkipSpace();
        tiles_offset = pos_;
        tiles = ParseTileAssignment();
      } else if (TryConsume("device=")) {
        device = ParseDeviceId("a device id");
      } else if (TryKeyword("last_tile_dim_replicate")) {
        last_tile_dim_replicate = true;
      } else if (TryConsume("last_tile_dims=")) {
        last_tile_dims_offset = at;
        ParseLastTileDims(last_tile_dims, partial_reduction);
      } else if (TryKeyword("shard_as")) {
        shard_group = Sharding::ShardGroup{ParseNonNegative("a shard group id"), true};
      } else if (TryKeyword("shard_like")) {
        shard_group = Sharding::ShardGroup{ParseNonNegative("a shard group id"), false};
      } else if (TryConsume("metadata=")) {
        metadata = ParseBracedVerbatim();
      } else if (pos_ >= text_.size()) {
        Fail(at, "expected '}' closing the sharding");
      } else {
        Fail(at,
             "expected a sharding attribute (replicated, manual, unknown, maximal, "
             "devices=, last_tile_dim_replicate, last_tile_dims=, shard_as, shard_like, "
             "metadata=) or '}'");
      }
    }
    const size_t close_offset = pos_;
    Expect("}", "'}' closing the sharding");
    Sharding result = BuildSingle(kind == KindWord::kReplicated, kind == KindWord::kManual,
                                  kind == KindWord::kUnknown, kind == KindWord::kMaximal, device,
                                  tiles, tiles_offset, last_tile_dim_replicate, last_tile_dims,
                                  last_tile_dims_offset, close_offset);
    result.set_shard_group(shard_group);
    result.set_metadata(std::move(metadata));
    if (partial_reduction.has_value() && result.HasUnreduced()) result.set_partial_reduction(*partial_reduction);
    return result;
  }

  // "unreduced" (a sum) or "unreduced_max", "_min", "_mul", "_and", "_or".
  std::optional<Sharding::Reduction> TryUnreducedKeyword() {
    using R = Sharding::Reduction;
    static const std::pair<const char*, R> kWords[] = {{"unreduced_max", R::kMax}, {"unreduced_min", R::kMin},
                                                       {"unreduced_mul", R::kProduct}, {"unreduced_and", R::kAnd},
                                                       {"unreduced_or", R::kOr}, {"unreduced", R::kSum}};
    for (const auto& [word, reduction] : kWords)
      if (TryKeyword(word)) return reduction;
    return std::nullopt;
  }

  void ParseLastTileDims(std::vector<Sharding::SubgroupType>& types,
                         std::optional<Sharding::Reduction>& partial_reduction_) {
    Expect("{", "'{' after last_tile_dims=");
    while (true) {
      SkipSpace();
      const size_t at = pos_;
      if (TryKeyword("manual")) {
        types.push_back(Sharding::SubgroupType::kManual);
      } else if (TryKeyword("replicated")) {
        types.push_back(Sharding::SubgroupType::kReplicated);
      } else if (std::optional<Sharding::Reduction> reduction = TryUnreducedKeyword()) {
        types.push_back(Sharding::SubgroupType::kUnreduced);
        if (partial_reduction_.has_value() && *partial_reduction_ != *reduction)
          Fail(at, "expected one reduction for all unreduced tile dims");
        partial_reduction_ = reduction;
      } else {
        Fail(at, "expected 'manual', 'replicated' or 'unreduced' in last_tile_dims");
      }
      if (TryConsume("}")) return;
      Expect(",", "',' or '}' in last_tile_dims");
    }
  }

  Sharding BuildSingle(bool replicated, bool manual, bool unknown, bool maximal,
                       std::optional<int64_t> device, const std::optional<TileAssignment>& tiles,
                       size_t tiles_offset, bool last_tile_dim_replicate,
                       const std::vector<Sharding::SubgroupType>& last_tile_dims,
                       size_t last_tile_dims_offset, size_t close_offset) {
    const bool has_subgroup_words = last_tile_dim_replicate || !last_tile_dims.empty();
    if (!tiles.has_value() && has_subgroup_words) {
      Fail(close_offset, "expected devices=[...] with last_tile_dim_replicate/last_tile_dims");
    }
    if (device.has_value() && !maximal) Fail(close_offset, "expected 'maximal' with device=");
    if (replicated) return Sharding::Replicated();
    if (manual) return Sharding::Manual();
    if (unknown) return Sharding::Unknown();
    if (maximal) {
      if (!device.has_value()) Fail(close_offset, "expected device=N after maximal");
      return Sharding::Maximal(*device);
    }
    if (!tiles.has_value()) {
      Fail(close_offset, "expected replicated, manual, unknown, maximal or devices=[...]");
    }
    if (last_tile_dim_replicate && !last_tile_dims.empty()) {
      Fail(last_tile_dims_offset,
           "expected either last_tile_dim_replicate or last_tile_dims, not both");
    }
    if (last_tile_dim_replicate) return Sharding::PartiallyReplicated(*tiles);
    if (static_cast<int64_t>(last_tile_dims.size()) > tiles->num_dims()) {
      Fail(last_tile_dims_offset,
           StrCat("expected at most ", tiles->num_dims(), " last_tile_dims (the tile rank)"));
    }
    (void)tiles_offset;
    return Sharding::Tiled(*tiles, last_tile_dims);
  }

  // ---- Replica groups.

  ReplicaGroups ParseReplicaGroups() {
    SkipSpace();
    const size_t start = pos_;
    const char c = Peek();
    if (c == '{') return ParseExplicitGroups();
    if (c == '[') {
      TileAssignment array = ParseTileAssignment();
      if (array.num_dims() != 2 || !array.is_iota()) {
        Fail(start, "expected iota replica groups [num_groups,group_size]<=[...]");
      }
      return ReplicaGroups::Iota(std::move(array));
    }
    if (LookingAt("mesh[")) {
      Mesh mesh = ParseMesh();
      SkipSpace();
      const size_t axes_offset = pos_;
      std::vector<PlacedAxisRef> axes = ParseAxisRefSet(mesh, "the replica group axes");
      CheckAxisRefSet(mesh, axes, axes_offset);
      return ReplicaGroups::FromMesh(std::move(mesh), Unplaced(axes));
    }
    Fail(start, "expected replica groups: {{...},...}, [n,m]<=[...] or mesh[...] {...}");
  }

  ReplicaGroups ParseExplicitGroups() {
    Expect("{", "'{'");
    std::vector<std::vector<int64_t>> groups;
    std::set<int64_t> seen;
    if (TryConsume("}")) return ReplicaGroups::Explicit({});
    while (true) {
      Expect("{", "'{' starting a replica group");
      std::vector<int64_t> group;
      if (!TryConsume("}")) {
        while (true) {
          SkipSpace();
          const size_t at = pos_;
          const int64_t id = ParseInt("a device id");
          if (id < 0) Fail(at, "expected a non-negative device id");
          if (!seen.insert(id).second) {
            Fail(at, StrCat("expected each device in one replica group; device ", id,
                            " appears more than once"));
          }
          group.push_back(id);
          if (TryConsume("}")) break;
          Expect(",", "',' or '}' in the replica group");
        }
      }
      groups.push_back(std::move(group));
      if (TryConsume("}")) break;
      Expect(",", "',' or '}' between replica groups");
    }
    return ReplicaGroups::Explicit(std::move(groups));
  }

  void ExpectEnd(const char* what) {
    if (!AtEnd()) Fail(pos_, StrCat("expected the end of the ", what));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Sharding ParseSharding(std::string_view text) {
  TextParser parser(text);
  Sharding result = parser.ParseSharding();
  parser.ExpectEnd("sharding");
  return result;
}

ReplicaGroups ParseReplicaGroups(std::string_view text) {
  TextParser parser(text);
  ReplicaGroups result = parser.ParseReplicaGroups();
  parser.ExpectEnd("replica groups");
  return result;
}

Sharding ParseShardingPrefix(std::string_view text, size_t* consumed) {
  TextParser parser(text);
  Sharding result = parser.ParseSharding();
  if (consumed != nullptr) *consumed = parser.pos();
  return result;
}

ReplicaGroups ParseReplicaGroupsPrefix(std::string_view text, size_t* consumed) {
  TextParser parser(text);
  ReplicaGroups result = parser.ParseReplicaGroups();
  if (consumed != nullptr) *consumed = parser.pos();
  return result;
}

TileAssignment ParseTileAssignment(std::string_view text) {
  TextParser parser(text);
  TileAssignment result = parser.ParseTileAssignment();
  parser.ExpectEnd("tile assignment");
  return result;
}

}  // namespace gspmd
