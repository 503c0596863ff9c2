// SinkLoopAllReduces: a zero-initialized loop accumulator fed by all-reduces (through
// transposes, pads and adds) accumulates the partial sums and is reduced once after the loop;
// the program computes the same values on every device; other shapes of loop are left alone.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "partitioner/loop_all_reduce_motion.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

// Two devices; each iteration adds transpose(all-reduce(x * i)) + pad(all-reduce(..)) into acc.
constexpr char kAccumulatingLoop[] = R"(HloModule m, num_partitions=2

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond (p: (s32[], f32[2,3], f32[3,2])) -> pred[] {
  %p = (s32[], f32[2,3], f32[3,2]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (p: (s32[], f32[2,3], f32[3,2])) -> (s32[], f32[2,3], f32[3,2]) {
  %p = (s32[], f32[2,3], f32[3,2]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[2,3] get-tuple-element(%p), index=1
  %acc = f32[3,2] get-tuple-element(%p), index=2
  %fi = f32[] convert(%i)
  %bi = f32[2,3] broadcast(%fi), dimensions={}
  %y = f32[2,3] multiply(%x, %bi)
  %r1 = f32[2,3] all-reduce(%y), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  %t = f32[3,2] transpose(%r1), dimensions={1,0}
  %ty = f32[3,2] transpose(%y), dimensions={1,0}
  %part = f32[3,1] slice(%ty), slice={[0:3], [0:1]}
  %r2 = f32[3,1] all-reduce(%part), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  %zero = f32[] constant(0)
  %padded = f32[3,2] pad(%r2, %zero), padding=0_0x1_0
  %both = f32[3,2] add(%t, %padded)
  %next = f32[3,2] add(%acc, %both)
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  ROOT %out = (s32[], f32[2,3], f32[3,2]) tuple(%i1, %x, %next)
}

ENTRY %main (x: f32[2,3]) -> f32[3,2] {
  %x = f32[2,3] parameter(0)
  %zero = f32[] constant(0)
  %start = f32[3,2] broadcast(%zero), dimensions={}
  %i0 = s32[] constant(0)
  %init = (s32[], f32[2,3], f32[3,2]) tuple(%i0, %x, %start)
  %loop = (s32[], f32[2,3], f32[3,2]) while(%init), condition=%cond, body=%body
  ROOT %acc = f32[3,2] get-tuple-element(%loop), index=2
}
)";

int64_t CountIn(const Computation& computation, Opcode opcode) {
  int64_t count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode() == opcode;
  return count;
}

std::vector<Literal> RunOnTwoDevices(const Module& module) {
  // Device-local values differ (the program is per-device): device d holds x + d.
  Literal x = Literal::FromDoubles(Shape(ElementType::kF32, {2, 3}), std::vector<double>{1, 2, 3, 4, 5, 6});
  SpmdRunOptions options;
  options.num_devices = 2;
  options.parameter_shardings = {Sharding::Replicated()};
  std::vector<Literal> inputs;
  inputs.push_back(x);
  return RunSpmd(module, inputs, options);
}

TEST(LoopAllReduceMotionTest, AccumulatorIsReducedOnceAfterTheLoop) {
  std::unique_ptr<Module> original = ParseModule(kAccumulatingLoop);
  std::unique_ptr<Module> module = ParseModule(kAccumulatingLoop);
  EXPECT_EQ(SinkLoopAllReduces(*module), 1);
  const Computation* body = module->FindComputation("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(CountIn(*body, Opcode::kAllReduce), 0);
  EXPECT_EQ(CountIn(*module->entry(), Opcode::kAllReduce), 1);
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kAllReduce);
  // Three iterations of two all-reduces become one (the report counts loop bodies per trip).
  EXPECT_LT(AnalyzeCommunication(*module).comm_bytes_per_device,
            AnalyzeCommunication(*original).comm_bytes_per_device / 3);
  // It still prints and parses (the new all-reduce sits after the loop), and computes the same.
  std::unique_ptr<Module> reparsed = ParseModule(PrintModule(*module));
  std::vector<Literal> before = RunOnTwoDevices(*original);
  std::vector<Literal> after = RunOnTwoDevices(*reparsed);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(CompareLiterals(after[i], before[i], 1e-6).matches);
}

// Left alone: an accumulator that does not start at zero, one that the body also reads
// elsewhere, and a reduction that is not a sum of all-reduces.
TEST(LoopAllReduceMotionTest, OnlyZeroStartedPureAccumulatorsMove) {
  auto variant = [](const std::string& from, const std::string& to) {
    std::string text = kAccumulatingLoop;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::string> unchanged = {
      variant("%zero = f32[] constant(0)\n  %start", "%zero = f32[] constant(1)\n  %start"),
      variant("%next = f32[3,2] add(%acc, %both)", "%twice = f32[3,2] add(%acc, %acc)\n  %next = f32[3,2] add(%twice, %both)"),
      variant("%both = f32[3,2] add(%t, %padded)", "%both = f32[3,2] multiply(%t, %padded)"),
  };
  for (const std::string& text : unchanged) {
    std::unique_ptr<Module> module = ParseModule(text);
    EXPECT_EQ(SinkLoopAllReduces(*module), 0) << text;
  }
}

}  // namespace
}  // namespace gspmd
