// Tests of ReplicaGroups: the explicit, iota and mesh forms, expansion and text.
#include "sharding/replica_groups.h"

#include <gtest/gtest.h>

#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

TEST(ReplicaGroupsTest, Explicit) {
  ReplicaGroups g = ParseReplicaGroups("{{0,1},{2,3}}");
  EXPECT_EQ(g.form(), ReplicaGroups::Form::kExplicit);
  EXPECT_EQ(g.Groups(4), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(g.ToString(), "{{0,1},{2,3}}");
}

TEST(ReplicaGroupsTest, EmptyMeansAllDevices) {
  ReplicaGroups g = ParseReplicaGroups("{}");
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.Groups(4), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(g.ToString(), "{}");
  EXPECT_TRUE(ReplicaGroups().empty());
}

TEST(ReplicaGroupsTest, Iota) {
  ReplicaGroups g = ParseReplicaGroups("[2,4]<=[8]");
  EXPECT_EQ(g.form(), ReplicaGroups::Form::kIota);
  EXPECT_EQ(g.Groups(8), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(g.ToString(), "[2,4]<=[8]");
  ReplicaGroups t = ParseReplicaGroups("[4,2]<=[2,4]T(1,0)");
  EXPECT_EQ(t.Groups(8), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(t.ToString(), "[4,2]<=[2,4]T(1,0)");
}

TEST(ReplicaGroupsTest, MeshAxes) {
  ReplicaGroups a = ParseReplicaGroups("mesh['a'=2,'b'=4] {'a'}");
  EXPECT_EQ(a.form(), ReplicaGroups::Form::kMesh);
  EXPECT_EQ(a.Groups(8), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(a.ToString(), "mesh['a'=2,'b'=4] {'a'}");
  EXPECT_EQ(a, ParseReplicaGroups("[4,2]<=[2,4]T(1,0)"));
  ReplicaGroups b = ParseReplicaGroups("mesh['a'=2,'b'=4] {'b'}");
  EXPECT_EQ(b.Groups(8), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(b, ParseReplicaGroups("[2,4]<=[8]"));
  // Listed order is the order inside a group.
  ReplicaGroups ba = ParseReplicaGroups("mesh['a'=2,'b'=4] {'b','a'}");
  EXPECT_EQ(ba.Groups(8), (Groups{{0, 4, 1, 5, 2, 6, 3, 7}}));
  EXPECT_EQ(ba.ToString(), "mesh['a'=2,'b'=4] {'b','a'}");
  // Three axes, the last one grouped.
  ReplicaGroups c = ParseReplicaGroups("mesh['axis_0'=2,'axis_1'=2,'axis_2'=2] {'axis_2'}");
  EXPECT_EQ(c.Groups(8), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  ReplicaGroups d = ParseReplicaGroups("mesh['x'=2,'y'=2,'z'=2] {'x','z'}");
  EXPECT_EQ(d.Groups(8), (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
}

TEST(ReplicaGroupsTest, MeshSubAxes) {
  // b = [b(1)2, b(2)2] major to minor: 'b':(1)2 is the major half (stride 2 inside b).
  ReplicaGroups hi = ParseReplicaGroups("mesh['a'=2,'b'=4] {'b':(1)2}");
  EXPECT_EQ(hi.Groups(8), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(hi.ToString(), "mesh['a'=2,'b'=4] {'b':(1)2}");
  ReplicaGroups lo = ParseReplicaGroups("mesh['a'=2,'b'=4] {'b':(2)2}");
  EXPECT_EQ(lo.Groups(8), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(lo, ParseReplicaGroups("[4,2]<=[8]"));
  ReplicaGroups mixed = ParseReplicaGroups("mesh['a'=2,'b'=4] {'a','b':(1)2}");
  EXPECT_EQ(mixed.Groups(8), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // a = [a(1)2, a(2)2, a(4)2]: groups over the outer two parts, the middle one picks the group.
  ReplicaGroups outer = ParseReplicaGroups("mesh['a'=8] {'a':(1)2,'a':(4)2}");
  EXPECT_EQ(outer.Groups(8), (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  ReplicaGroups swapped = ParseReplicaGroups("mesh['a'=8] {'a':(4)2,'a':(1)2}");
  EXPECT_EQ(swapped.Groups(8), (Groups{{0, 4, 1, 5}, {2, 6, 3, 7}}));
}

TEST(ReplicaGroupsTest, MeshWithDeviceIds) {
  ReplicaGroups g = ParseReplicaGroups("mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}");
  EXPECT_EQ(g.Groups(4), (Groups{{3, 1}, {2, 0}}));
  EXPECT_EQ(g.ToString(), "mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}");
}

TEST(ReplicaGroupsTest, EqualityAcrossForms) {
  EXPECT_EQ(ParseReplicaGroups("{{0,1,2,3},{4,5,6,7}}"), ParseReplicaGroups("[2,4]<=[8]"));
  EXPECT_FALSE(ParseReplicaGroups("{{0,1},{2,3}}") == ParseReplicaGroups("{{0,2},{1,3}}"));
  EXPECT_FALSE(ParseReplicaGroups("{}") == ParseReplicaGroups("[1,8]<=[8]"));
  EXPECT_EQ(ParseReplicaGroups("{}"), ReplicaGroups());
}

TEST(ReplicaGroupsTest, PrefixParsing) {
  size_t consumed = 0;
  std::string text = "mesh['a'=2,'b'=4] {'a'}, dimensions={0}";
  ReplicaGroups g = ParseReplicaGroupsPrefix(text, &consumed);
  EXPECT_EQ(text.substr(consumed), ", dimensions={0}");
  EXPECT_EQ(g.ToString(), "mesh['a'=2,'b'=4] {'a'}");
  text = "[2,4]<=[8], use_global_device_ids=true";
  ParseReplicaGroupsPrefix(text, &consumed);
  EXPECT_EQ(text.substr(consumed), ", use_global_device_ids=true");
}

}  // namespace
}  // namespace gspmd
