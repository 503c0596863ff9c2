// The communication counter (analysis/comm_report.h) on per-device programs written as text:
// the ring model per collective kind, while bodies times their trip count, and a conditional
// counted by its costliest branch (one branch runs; oracle seed 20124).
#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "text/parser.h"

namespace gspmd {
namespace {

constexpr const char* kBranches = R"(HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%small (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %r = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=%add
}
%large (y: f32[8]) -> f32[8] {
  %y = f32[8]{0} parameter(0)
  %g = f32[32]{0} all-gather(%y), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT %s = f32[8]{0} slice(%g), slice={[0:8]}
}
%none (z: f32[8]) -> f32[8] {
  ROOT %z = f32[8]{0} parameter(0)
}
ENTRY %main (p: s32[], v: f32[8]) -> f32[8] {
  %p = s32[] parameter(0)
  %v = f32[8]{0} parameter(1)
  ROOT %c = f32[8]{0} conditional(%p, %v, %v, %v), branch_computations={%small, %large, %none}
}
)";

TEST(CommReportTest, AConditionalCountsItsCostliestBranch) {
  const CommReport report = AnalyzeCommunication(*ParseModule(kBranches));
  // The all-gather's 3/4 x 128 B = 96 B, not that plus the all-reduce's 2 x 3/4 x 32 B = 48 B.
  EXPECT_DOUBLE_EQ(report.comm_bytes_per_device, 96.0);
  ASSERT_EQ(report.by_kind.size(), 1u);
  EXPECT_EQ(report.by_kind.begin()->first, "all-gather");
  EXPECT_EQ(report.by_kind.begin()->second.count, 1);
}

}  // namespace
}  // namespace gspmd
