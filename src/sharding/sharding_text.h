// Parsing shardings, tile assignments and replica groups from XLA text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sharding/replica_groups.h"
#include "sharding/sharding.h"

namespace gspmd {

// Raised for malformed text; `offset` is the byte offset in the parsed string where the
// problem is, so callers can turn it into file:line:col.
class ShardingSyntaxError : public std::runtime_error {
 public:
  ShardingSyntaxError(size_t offset, const std::string& message)
      : std::runtime_error(message), offset(offset) {}
  size_t offset;
};

// Parses a whole sharding including its braces, e.g. "{devices=[2,1]<=[2]}",
// "{{replicated}, {manual}}", "{mesh['d'=8], [{'d'}, {}]}". Trailing text is an error.
Sharding ParseSharding(std::string_view text);

// Parses a replica_groups value: "{{0,1},{2,3}}", "{}", "[2,4]<=[8]",
// "[4,2]<=[2,4]T(1,0)", "mesh['a'=2,'b'=4] {'a'}".
ReplicaGroups ParseReplicaGroups(std::string_view text);

// As above, but parse only a prefix of `text` (the value of an HLO attribute followed by
// more attributes) and store in *consumed how many bytes the value took. Leading whitespace
// is skipped; nothing after the value is looked at beyond what the grammar needs.
Sharding ParseShardingPrefix(std::string_view text, size_t* consumed);
ReplicaGroups ParseReplicaGroupsPrefix(std::string_view text, size_t* consumed);

// A tile assignment without the "devices=" prefix: "[2,4]<=[8]", "[2,2]3,2,1,0".
TileAssignment ParseTileAssignment(std::string_view text);

}  // namespace gspmd
