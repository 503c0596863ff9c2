// Terminal pictures of a value's layout over the devices: tile grids for rank <= 2, a dims
// table above that.
#include "visualize/sharding_picture.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "ir/element_type.h"
#include "partitioner/device_axes.h"
#include "sharding/tile_assignment.h"
#include "support/units.h"

namespace gspmd::visualize {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool HasTiles(const Sharding& sharding) { return sharding.IsTiled(); }

// "[0:4)", with the padding of an uneven tile: "[9:10) +2 pad".
std::string RangeText(const Tile& tile, size_t dim) {
  std::string text = "[" + std::to_string(tile.begin[dim]) + ":" + std::to_string(tile.end[dim]) + ")";
  int64_t padding = tile.padded_size[dim] - (tile.end[dim] - tile.begin[dim]);
  if (padding > 0) text += " +" + std::to_string(padding) + " pad";
  return text;
}

std::string Pad(const std::string& text, size_t width) {
  if (text.size() >= width) return text;
  size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

std::string PadRight(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// Which tile positions along a dim of `count` tiles are drawn: all, or the first and last
// `keep/2` with -1 standing for the elided middle.
std::vector<int64_t> ShownPositions(int64_t count, int64_t keep) {
  std::vector<int64_t> shown;
  if (count <= keep) {
    for (int64_t i = 0; i < count; ++i) shown.push_back(i);
    return shown;
  }
  int64_t half = std::max<int64_t>(1, keep / 2);
  for (int64_t i = 0; i < half; ++i) shown.push_back(i);
  shown.push_back(-1);
  for (int64_t i = count - half; i < count; ++i) shown.push_back(i);
  return shown;
}

// ANSI background colours, black text, one per distinct device set in order of appearance.
constexpr const char* kPalette[] = {"\x1b[30;46m", "\x1b[30;43m", "\x1b[30;42m", "\x1b[30;45m",
                                    "\x1b[30;44m", "\x1b[30;41m", "\x1b[30;47m", "\x1b[30;106m"};
constexpr const char* kReset = "\x1b[0m";

// A grid of rows x cols tiles (a 1-D array is one row without a row header).
std::string DrawGrid(const Shape& shape, const std::vector<Tile>& tiles, const std::vector<int64_t>& counts,
                     const PictureOptions& options) {
  const bool one_dim = shape.rank() == 1;
  const int64_t rows = one_dim ? 1 : counts[0];
  const int64_t cols = one_dim ? counts[0] : counts[1];
  const size_t col_dim = one_dim ? 0 : 1;
  auto tile_at = [&](int64_t r, int64_t c) -> const Tile& { return tiles[r * cols + c]; };
  const std::vector<int64_t> shown_rows = ShownPositions(rows, options.max_tiles_per_dim);
  const std::vector<int64_t> shown_cols = ShownPositions(cols, options.max_tiles_per_dim);

  std::vector<std::string> col_headers;
  std::vector<size_t> widths;
  for (int64_t c : shown_cols) {
    std::string header = c < 0 ? "..." : RangeText(tile_at(0, c), col_dim);
    size_t width = header.size();
    for (int64_t r : shown_rows)
      if (r >= 0 && c >= 0) width = std::max(width, DeviceListText(tile_at(r, c).devices).size());
    col_headers.push_back(header);
    widths.push_back(width + 2);
  }
  std::vector<std::string> row_headers;
  size_t row_width = 0;
  for (int64_t r : shown_rows) {
    std::string header = one_dim ? "" : (r < 0 ? "..." : RangeText(tile_at(r, 0), 0));
    row_width = std::max(row_width, header.size());
    row_headers.push_back(header);
  }
  const std::string indent = one_dim ? "  " : "  " + std::string(row_width + 1, ' ');

  std::map<std::vector<int64_t>, size_t> colour_of;
  std::ostringstream out;
  std::string rule = indent + "+";
  for (size_t width : widths) rule += std::string(width, '-') + "+";
  out << indent << " ";
  std::string header_line;
  for (size_t i = 0; i < widths.size(); ++i) header_line += Pad(col_headers[i], widths[i]) + " ";
  while (!header_line.empty() && header_line.back() == ' ') header_line.pop_back();
  out << header_line << "\n" << rule << "\n";
  for (size_t ri = 0; ri < shown_rows.size(); ++ri) {
    const int64_t r = shown_rows[ri];
    out << (one_dim ? "  " : "  " + PadRight(row_headers[ri], row_width) + " ") << "|";
    for (size_t ci = 0; ci < shown_cols.size(); ++ci) {
      const int64_t c = shown_cols[ci];
      if (r < 0 || c < 0) {
        out << Pad("...", widths[ci]) << "|";
        continue;
      }
      const Tile& tile = tile_at(r, c);
      std::string cell = Pad(DeviceListText(tile.devices), widths[ci]);
      if (options.color) {
        auto [it, inserted] = colour_of.emplace(tile.devices, colour_of.size());
        cell = std::string(kPalette[it->second % std::size(kPalette)]) + cell + kReset;
      }
      out << cell << "|";
    }
    out << "\n" << rule << "\n";
  }
  return out.str();
}

// Names for a sharding's device axes: the named mesh's axes when the sharding was written over
// one, else "size@stride" digits of the device id.
std::string AxesText(const std::vector<DeviceAxis>& axes) {
  std::string text;
  for (const DeviceAxis& axis : axes) {
    if (!text.empty()) text += " ";
    text += std::to_string(axis.size) + "@stride" + std::to_string(axis.stride);
  }
  return text.empty() ? "-" : text;
}

std::string NamedAxesText(const std::vector<AxisRef>& axes) {
  std::string text;
  for (const AxisRef& axis : axes) text += (text.empty() ? "" : " ") + axis.ToString();
  return text.empty() ? "-" : text;
}

std::string DrawDimsTable(const Shape& shape, const Sharding& sharding, const std::vector<int64_t>& counts,
                          int64_t num_devices) {
  std::optional<AxisSharding> axes;
  if (sharding.IsTiled()) axes = DecomposeSharding(sharding, shape.rank(), num_devices);
  const std::optional<NamedShardingView>& named = sharding.named_view();
  const bool use_names = named && named->form == NamedShardingView::Form::kDims &&
                         static_cast<int64_t>(named->dim_axes.size()) == shape.rank();
  std::vector<std::vector<std::string>> table = {{"dim", "size", "tiles", "mesh axes", "shard", "padding"}};
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t size = shape.dim(d);
    const int64_t shard = CeilDiv(size, counts[d]);
    std::string axis_text = "-";
    if (use_names)
      axis_text = NamedAxesText(named->dim_axes[d]);
    else if (axes)
      axis_text = AxesText(axes->dims[d]);
    else if (counts[d] > 1)
      axis_text = "(device order)";
    table.push_back({std::to_string(d), std::to_string(size), std::to_string(counts[d]), axis_text,
                     std::to_string(shard), std::to_string(shard * counts[d] - size)});
  }
  std::vector<size_t> widths(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::ostringstream out;
  for (const auto& row : table) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) line += " " + PadRight(row[i], widths[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  if (axes && !axes->replicated.empty() && !use_names)
    out << "  replicated over mesh axes: " << AxesText(axes->replicated) << "\n";
  return out.str();
}

// "per device: f32[4,8] (128 B); each tile on 2 devices; padding 12.5% of the value".
std::string SummaryLine(const Shape& shape, const Sharding& sharding, const std::vector<Tile>& tiles,
                        const std::vector<int64_t>& counts, int64_t num_devices) {
  std::vector<int64_t> shard_dims;
  int64_t padded_total = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    shard_dims.push_back(CeilDiv(shape.dim(d), counts[d]));
    padded_total *= shard_dims.back() * counts[d];
  }
  Shape shard(shape.element_type(), shard_dims);
  std::ostringstream out;
  out << "  per device: " << shard.ToString(false) << " (" << FormatBytes(shard.byte_size()) << ")";
  if (sharding.IsManual()) out << "; manual";
  if (sharding.IsMaximal()) out << "; only on device " << sharding.maximal_device();
  size_t holders = tiles.empty() ? 0 : tiles.front().devices.size();
  const bool same_holders =
      std::all_of(tiles.begin(), tiles.end(), [&](const Tile& t) { return t.devices.size() == holders; });
  if (sharding.IsReplicated() || (sharding.IsTiled() && tiles.size() == 1))
    out << "; replicated on " << num_devices << " devices";
  else if (sharding.IsTiled() && holders > 1 && same_holders)
    out << "; partially replicated: each tile on " << holders << " devices";
  const int64_t elements = shape.element_count();
  if (padded_total > elements && elements > 0) {
    const double share = static_cast<double>(padded_total - elements) / static_cast<double>(elements);
    out << "; padding " << FormatPercent(share) << " of the value";
  }
  out << "\n";
  return out.str();
}

}  // namespace

std::vector<int64_t> TileCounts(const Sharding& sharding, int64_t rank) {
  std::vector<int64_t> counts(rank, 1);
  if (!HasTiles(sharding)) return counts;
  for (int64_t d = 0; d < rank && d < sharding.TiledDataRank(); ++d) counts[d] = sharding.tile_assignment().dim(d);
  return counts;
}

std::vector<Tile> TilesOf(const Shape& shape, const Sharding& sharding, int64_t num_devices) {
  const int64_t rank = shape.rank();
  const std::vector<int64_t> counts = TileCounts(sharding, rank);
  int64_t tile_count = 1;
  for (int64_t c : counts) tile_count *= c;
  std::vector<Tile> tiles(tile_count);
  for (int64_t linear = 0; linear < tile_count; ++linear) {
    Tile& tile = tiles[linear];
    int64_t rest = linear;
    std::vector<int64_t> index(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % counts[d];
      rest /= counts[d];
    }
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = shape.dim(d);
      const int64_t chunk = CeilDiv(size, counts[d]);
      const int64_t begin = std::min(index[d] * chunk, size);
      tile.begin.push_back(begin);
      tile.end.push_back(std::min(begin + chunk, size));
      tile.padded_size.push_back(chunk);
    }
  }
  if (sharding.IsMaximal()) {
    tiles[0].devices = {sharding.maximal_device()};
    return tiles;
  }
  if (!sharding.IsTiled()) {
    for (int64_t device = 0; device < num_devices; ++device) tiles[0].devices.push_back(device);
    return tiles;
  }
  const TileAssignment& assignment = sharding.tile_assignment();
  const int64_t data_rank = std::min<int64_t>(rank, sharding.TiledDataRank());
  for (int64_t linear = 0; linear < assignment.num_elements(); ++linear) {
    int64_t rest = linear;
    std::vector<int64_t> index(assignment.num_dims());
    for (int64_t d = assignment.num_dims() - 1; d >= 0; --d) {
      index[d] = rest % assignment.dim(d);
      rest /= assignment.dim(d);
    }
    int64_t tile = 0;
    for (int64_t d = 0; d < data_rank; ++d) tile = tile * counts[d] + index[d];
    tiles[tile].devices.push_back(assignment.DeviceAtLinear(linear));
  }
  for (Tile& tile : tiles) std::sort(tile.devices.begin(), tile.devices.end());
  return tiles;
}

Shape GlobalShapeOfShard(const Shape& shard, const Sharding& sharding) {
  if (shard.IsTuple()) {
    std::vector<Shape> leaves;
    for (int64_t i = 0; i < shard.tuple_size(); ++i)
      leaves.push_back(GlobalShapeOfShard(shard.tuple_shape(i), sharding.IsTuple() ? sharding.tuple_elements().at(i)
                                                                                  : sharding));
    return Shape::Tuple(std::move(leaves));
  }
  if (!shard.IsArray()) return shard;
  std::vector<int64_t> counts = TileCounts(sharding, shard.rank());
  std::vector<int64_t> dims = shard.dims();
  for (size_t d = 0; d < dims.size(); ++d) dims[d] *= counts[d];
  return Shape(shard.element_type(), dims);
}

std::string DeviceListText(const std::vector<int64_t>& devices) {
  std::string text;
  for (size_t i = 0; i < devices.size();) {
    size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(devices[i]);
    if (j > i) text += (j == i + 1 ? "," : "-") + std::to_string(devices[j]);
    i = j + 1;
  }
  return text;
}

std::string DrawSharding(const Shape& shape, const Sharding& sharding, int64_t num_devices,
                         const PictureOptions& options) {
  if (shape.IsTuple()) {
    std::ostringstream out;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      const Sharding leaf = sharding.IsTuple() && i < static_cast<int64_t>(sharding.tuple_elements().size())
                                ? sharding.tuple_elements()[i]
                                : sharding;
      out << "  leaf " << i << ": " << shape.tuple_shape(i).ToString(false) << " " << leaf.ToString() << "\n";
      out << DrawSharding(shape.tuple_shape(i), leaf, num_devices, options);
    }
    return out.str();
  }
  if (!shape.IsArray()) return "  (token: no data)\n";
  if (sharding.IsUnknown() || sharding.IsTuple()) return "  (no sharding)\n";
  const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
  const std::vector<Tile> tiles = TilesOf(shape, sharding, num_devices);
  std::string picture;
  if (shape.rank() == 0)
    picture = "  scalar on devices " + DeviceListText(tiles[0].devices) + "\n";
  else if (shape.rank() <= 2)
    picture = DrawGrid(shape, tiles, counts, options);
  else
    picture = DrawDimsTable(shape, sharding, counts, num_devices);
  return picture + SummaryLine(shape, sharding, tiles, counts, num_devices);
}

}  // namespace gspmd::visualize
