// Flattening and nesting tuple shardings (see tuple_sharding.h). Iterative: shapes and
// shardings may nest as deeply as the parser allows.
#include "ir/tuple_sharding.h"

#include <utility>
#include <vector>

namespace gspmd {
namespace {

void AppendLeaves(const Sharding& sharding, std::vector<Sharding>& leaves) {
  std::vector<std::pair<const Sharding*, size_t>> stack = {{&sharding, 0}};
  while (!stack.empty()) {
    auto& [current, next] = stack.back();
    if (!current->IsTuple()) {
      leaves.push_back(*current);
      stack.pop_back();
      continue;
    }
    if (next == current->tuple_elements().size()) {
      stack.pop_back();
      continue;
    }
    const Sharding* child = &current->tuple_elements()[next++];
    stack.emplace_back(child, 0);
  }
}

// Builds the nested tuple for `shape` from leaves[next...]; recursion depth is the shape's
// tuple nesting, which the parser bounds.
Sharding Nest(const Shape& shape, const std::vector<Sharding>& leaves, size_t& next) {
  if (!shape.IsTuple()) return leaves[next++];
  std::vector<Sharding> elements;
  elements.reserve(shape.tuple_shapes().size());
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(Nest(element, leaves, next));
  return Sharding::Tuple(std::move(elements));
}

}  // namespace

int64_t CountShapeLeaves(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  std::vector<const Shape*> stack = {&shape};
  while (!stack.empty()) {
    const Shape* current = stack.back();
    stack.pop_back();
    if (!current->IsTuple()) {
      ++count;
      continue;
    }
    for (const Shape& element : current->tuple_shapes()) stack.push_back(&element);
  }
  return count;
}

Sharding FlattenTupleSharding(const Sharding& sharding) {
  if (!sharding.IsTuple()) return sharding;
  bool nested = false;
  for (const Sharding& element : sharding.tuple_elements()) nested = nested || element.IsTuple();
  if (!nested) return sharding;
  std::vector<Sharding> leaves;
  AppendLeaves(sharding, leaves);
  return Sharding::Tuple(std::move(leaves));
}

std::optional<Sharding> NestTupleSharding(const Sharding& sharding, const Shape& shape) {
  if (!sharding.IsTuple() || !shape.IsTuple()) return sharding;
  std::vector<Sharding> leaves;
  AppendLeaves(sharding, leaves);
  if (static_cast<int64_t>(leaves.size()) != CountShapeLeaves(shape)) return std::nullopt;
  size_t next = 0;
  return Nest(shape, leaves, next);
}

}  // namespace gspmd
