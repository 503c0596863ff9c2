// Tests of sharding / replica group text: round trips and malformed input with error offsets.
#include "sharding/sharding_text.h"

#include <gtest/gtest.h>

#include <random>

namespace gspmd {
namespace {

TEST(ShardingTextTest, RoundTrips) {
  const char* texts[] = {
      "{replicated}",
      "{manual}",
      "{unknown}",
      "{maximal device=3}",
      "{devices=[8,1]<=[8]}",
      "{devices=[2,4]<=[8]}",
      "{devices=[4,2]<=[2,4]T(1,0)}",
      "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
      "{devices=[2,2,2]<=[2,2,2]T(2,1,0)}",
      "{devices=[8,1]7,6,5,4,3,2,1,0}",
      "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
      "{devices=[2,2]<=[4] last_tile_dims={manual}}",
      "{{replicated}, {devices=[8,1]<=[8]}}",
      "{{devices=[8,1]<=[8]}, {replicated}, {replicated}, {devices=[8,1]<=[8]}, "
      "{devices=[8,1]<=[8]}, /*index=5*/{devices=[8,1]7,6,5,4,3,2,1,0}}",
      "{}",
      "{devices=[2,1]<=[2] shard_as 1}",
      "{replicated shard_like 0}",
      "{devices=[2,1]<=[2] shard_like 3 metadata={op_name=\"x\"}}",
      "{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}",
      "{mesh['data'=2,'model'=4], [{'data'}, {}, {}]}",
      "{mesh['data'=2,'model'=4], [{'data'}, {}, {'model'}]}",
      "{mesh[], replicated}",
      "{mesh['d'=8], manual}",
      "{mesh['a'=2,'b'=4], [{'a', 'b'}]}",
      "{mesh['a'=2,'b'=4], [{'b':(2)2}, {'a'}]}",
      "{mesh['a'=2,'b'=4], [{}], replicated={'a'}}",
      "{mesh['a'=2,'b'=4], [{'a'}], unreduced={'b'}}",
      "{mesh['a'=2,'b'=4], [{'a'}], manual={'b'}}",
      "{mesh['a'=2,'b'=2], device_ids=(3,2,1,0), [{'a'}, {'b'}]}",
      "{maximal_mesh[device_id=3]}",
      "{mesh['d'=8], manual, metadata={op_name=\"x\"}}",
      "{{mesh['d'=8], [{'d'}]}, {mesh[], replicated}}",
  };
  for (const char* text : texts) {
    Sharding s = ParseSharding(text);
    EXPECT_EQ(s.ToString(), text);
    EXPECT_EQ(ParseSharding(s.ToString()), s) << text;
  }
}

TEST(ShardingTextTest, CanonicalizesLikeXla) {
  EXPECT_EQ(ParseSharding("{devices=[2,4]<=[2,4]}").ToString(), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(ParseSharding("{ devices=[2,2]1,0,3,2 last_tile_dim_replicate }").ToString(),
            "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(ParseSharding("{devices=[1,8]<=[8] last_tile_dim_replicate}").ToString(),
            "{replicated}");
  EXPECT_EQ(ParseSharding("{devices=[2,4,1]<=[8] last_tile_dims={replicated, manual}}").ToString(),
            "{devices=[2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(ParseSharding("{{replicated},{manual}}").ToString(), "{{replicated}, {manual}}");
}

TEST(ShardingTextTest, ReplicaGroupRoundTrips) {
  for (const char* text :
       {"{{0,1},{2,3}}", "{}", "{{0,1,2,3,4,5,6,7}}", "[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)",
        "mesh['a'=2,'b'=4] {'a'}", "mesh['a'=2,'b'=4] {'b':(2)2}", "mesh['axis_0'=8] {'axis_0'}",
        "mesh['a'=2,'b'=4] {'b','a'}"}) {
    EXPECT_EQ(ParseReplicaGroups(text).ToString(), text);
  }
}

struct BadInput {
  const char* text;
  size_t offset;
  const char* message_part;
};

void ExpectShardingError(const BadInput& bad) {
  try {
    Sharding s = ParseSharding(bad.text);
    ADD_FAILURE() << "parsed " << bad.text << " as " << s.ToString();
  } catch (const ShardingSyntaxError& e) {
    EXPECT_EQ(e.offset, bad.offset) << bad.text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(bad.message_part), std::string::npos)
        << bad.text << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("expected", 0), 0u) << e.what();
  }
}

TEST(ShardingTextTest, MalformedShardings) {
  const BadInput cases[] = {
      {"", 0, "'{'"},
      {"replicated", 0, "'{'"},
      {"{replicated", 11, "'}'"},
      {"{replicated} x", 13, "end"},
      {"{bogus}", 1, "sharding attribute"},
      {"{}}", 2, "end"},
      {"{devices=[2,2]0,1,2}", 14, "4 device ids"},
      {"{devices=[2,2]0,1,2,3,4}", 14, "4 device ids"},
      {"{devices=[2,2]0,1,1,3}", 18, "unique"},
      {"{devices=[2]0,-1}", 14, "non-negative"},
      {"{devices=[2]0,9223372036854775807}", 14, "below 2147483648"},  // found by fuzz_hlo_parser
      {"{maximal device=4294967296}", 16, "below 2147483648"},
      {"{mesh['a'=2], device_ids=(0,2147483648), [{'a'}]}", 28, "below 2147483648"},
      {"{devices=[2,0]<=[0]}", 12, "positive"},
      {"{devices=[2,4]<=[6]}", 16, "8 elements"},
      {"{devices=[2,4]<=[2,4]T(0,0)}", 21, "permutation"},
      {"{devices=[2,4]<=[2,4]T(0)}", 21, "permutation"},
      {"{devices=[2,4]x}", 14, "device id or '<='"},
      {"{devices=2,4]<=[8]}", 9, "'['"},
      {"{devices=[2,4]<=[8] last_tile_dims={manual, replicated, manual}}", 20, "at most 2"},
      {"{devices=[2,4]<=[8] last_tile_dims={bogus}}", 36, "'manual', 'replicated' or 'unreduced'"},
      {"{devices=[2,4]<=[8] last_tile_dim_replicate last_tile_dims={manual}}", 44, "not both"},
      {"{maximal}", 8, "device="},
      {"{replicated manual}", 12, "only one"},
      {"{last_tile_dim_replicate}", 24, "devices="},
      {"{devices=[2]<=[2] shard_as x}", 27, "shard group id"},
      {"{{replicated} {manual}}", 14, "',' or '}'"},
      {"{replicated metadata={op_name=\"x}", 21, "'\"'"},
      {"{devices=[2]<=[2] /* oops}", 18, "'*/'"},
      {"{devices=[99999999999999999999]<=[8]}", 10, "64 bits"},
      {"{devices=[100000,100000]<=[10000000000]}", 9, "at most"},
  };
  for (const BadInput& bad : cases) ExpectShardingError(bad);
}

TEST(ShardingTextTest, MalformedNamedShardings) {
  const BadInput cases[] = {
      {"{mesh['a'=2], [{'c'}]}", 16, "'c' is not one"},
      {"{mesh['a'=2,'a'=4], [{'a'}]}", 12, "distinct"},
      {"{mesh['a'=0], [{'a'}]}", 10, "positive"},
      {"{mesh['a'=2] [{'a'}]}", 13, "','"},
      {"{mesh['a'=2], [{'a'}, {'a'}]}", 23, "used once"},
      {"{mesh['a'=4], [{'a':(1)2}, {'a'}]}", 28, "used once"},
      {"{mesh['a'=4], [{'a':(1)4}]}", 16, "sub-axis"},
      {"{mesh['a'=4], [{'a':(3)2}]}", 16, "sub-axis"},
      {"{mesh['a'=8], [{'a':(1)4}, {'a':(2)2}]}", 28, "used once"},
      {"{mesh['a'=2], [{'a'}}", 20, "',' or ']'"},
      {"{mesh['a'=6], [{'a':(1)2}, {'a':(3)2}]}", 14, "unevenly"},
      {"{mesh['a'=2], [{'a', ?}]}", 21, "closed"},
      {"{mesh['a'=2], bogus}", 14, "'['"},
      {"{mesh['a'=2,'b'=2], device_ids=(0,1,2), [{'a'}]}", 31, "4 mesh device ids"},
      {"{mesh['a'=2], [{'a'}], metadata=3}", 32, "'{'"},
      {"{mesh['a=2]}", 6, "closing quote"},
      {"{mesh['a'=100000,'b'=100000], [{'a'}]}", 21, "at most"},
  };
  for (const BadInput& bad : cases) ExpectShardingError(bad);
}

TEST(ShardingTextTest, MalformedReplicaGroups) {
  const BadInput cases[] = {
      {"", 0, "replica groups"},
      {"{{0,1},{1,2}}", 8, "one replica group"},
      {"{{0,1},{-2,3}}", 8, "non-negative"},
      {"{{0,1} {2,3}}", 7, "',' or '}'"},
      {"[2,2,2]<=[8]", 0, "[num_groups,group_size]"},
      {"[2,2]0,1,2,3", 0, "[num_groups,group_size]"},
      {"[2,4]<=[8] x", 11, "end"},
      {"mesh['a'=2] {'b'}", 13, "'b' is not one"},
      {"mesh['a'=2] {'a','a'}", 17, "used once"},
      {"mesh['a'=2] 'a'", 12, "'{'"},
  };
  for (const BadInput& bad : cases) {
    try {
      ReplicaGroups g = ParseReplicaGroups(bad.text);
      ADD_FAILURE() << "parsed " << bad.text << " as " << g.ToString();
    } catch (const ShardingSyntaxError& e) {
      EXPECT_EQ(e.offset, bad.offset) << bad.text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(bad.message_part), std::string::npos)
          << bad.text << ": " << e.what();
    }
  }
}

TEST(ShardingTextTest, PrefixParsing) {
  size_t consumed = 0;
  std::string text = "{devices=[2,1]<=[2]}, metadata={op_name=\"x\"}";
  Sharding s = ParseShardingPrefix(text, &consumed);
  EXPECT_EQ(text.substr(consumed), ", metadata={op_name=\"x\"}");
  EXPECT_EQ(s.ToString(), "{devices=[2,1]<=[2]}");
  text = "{mesh['d'=8], manual}, metadata={op_name=\"add\" stack_frame_id=7}";
  s = ParseShardingPrefix(text, &consumed);
  EXPECT_EQ(text.substr(consumed), ", metadata={op_name=\"add\" stack_frame_id=7}");
  EXPECT_TRUE(s.IsManual());
}

}  // namespace
}  // namespace gspmd

namespace gspmd {
namespace {

// Mutated versions of valid text either parse (and then print stably) or raise a
// ShardingSyntaxError inside the text; nothing else (no internal check failures).
TEST(ShardingTextTest, MutatedInputNeverCrashes) {
  const std::vector<std::string> seeds = {
      "{devices=[4,2]<=[2,4]T(1,0)}",
      "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
      "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
      "{{devices=[8,1]<=[8]}, {replicated}, /*index=2*/{maximal device=1}}",
      "{devices=[2,2]3,1,0,2 shard_as 2 metadata={op_name=\"x\"}}",
      "{mesh['a'=2,'b'=4], [{'a', 'b':(2)2}], replicated={'b':(1)2}}",
      "{mesh['a'=2,'b'=2], device_ids=(3,2,1,0), [{'a'}, {'b'}]}",
      "{mesh['d'=8], manual, metadata={op_name=\"x\"}}",
  };
  const std::vector<std::string> group_seeds = {"{{0,1},{2,3}}", "[4,2]<=[2,4]T(1,0)",
                                                "mesh['a'=2,'b'=4] {'b':(2)2,'a'}",
                                                "mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}"};
  const std::string alphabet = "{}[](),=<>T0123456789-' :/*abdmx";
  std::mt19937 rng(42);
  auto mutate = [&](std::string s) {
    const int edits = 1 + rng() % 3;
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s.erase(at, 1);
          break;
        case 1:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          s[at] = alphabet[rng() % alphabet.size()];
      }
    }
    return s;
  };
  for (int i = 0; i < 20000; ++i) {
    const std::string text = mutate(seeds[rng() % seeds.size()]);
    try {
      const std::string printed = ParseSharding(text).ToString();
      EXPECT_EQ(ParseSharding(printed).ToString(), printed) << text;
    } catch (const ShardingSyntaxError& e) {
      EXPECT_LE(e.offset, text.size()) << text;
    }
    const std::string groups = mutate(group_seeds[rng() % group_seeds.size()]);
    try {
      ReplicaGroups g = ParseReplicaGroups(groups);
      EXPECT_EQ(ParseReplicaGroups(g.ToString()).ToString(), g.ToString()) << groups;
      g.Groups(64);
    } catch (const ShardingSyntaxError& e) {
      EXPECT_LE(e.offset, groups.size()) << groups;
    }
  }
}

}  // namespace
}  // namespace gspmd
