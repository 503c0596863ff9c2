// The partial-sum planner's value graph: values are made only when asked for, and each value's
// uses come out as an eager scan of the program gives them (users in post order, operands in
// order, tuple and loop plumbing as the same data, results and annotations needing it whole).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "propagation/partial_sum_graph.h"
#include "text/parser.h"

namespace gspmd::partial_sums {
namespace {

constexpr const char* kProgram = R"(HloModule m, num_partitions=2

ENTRY %main (p: f32[4]) -> (f32[4], f32[4]) {
  %p = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  %n = f32[4] negate(%p), sharding={devices=[2]<=[2]}
  %a = f32[4] add(%p, %p), sharding={devices=[2]<=[2]}
  %t = (f32[4], f32[4]) tuple(%n, %p), sharding={{devices=[2]<=[2]}, {devices=[2]<=[2]}}
  %g = f32[4] get-tuple-element(%t), index=1, sharding={devices=[2]<=[2]}
  %c = f32[4] custom-call(%g), custom_call_target="Sharding", sharding={replicated}
  ROOT %r = (f32[4], f32[4]) tuple(%c, %a), sharding={{replicated}, {devices=[2]<=[2]}}
}
)";

// "operand:<user>.<position>", "same:<user>[.leaf]" or "whole" per use.
std::vector<std::string> Describe(ValueGraph& graph, int32_t v) {
  std::vector<std::string> out;
  for (const Use& use : graph.UsesOf(v)) {
    if (use.kind == UseKind::kSink) {
      out.push_back("whole");
      continue;
    }
    const Value& to = graph.value(use.to);
    std::string text = (use.kind == UseKind::kOperand ? "operand:" : "same:") + to.instruction->name();
    if (use.kind == UseKind::kOperand) text += "." + std::to_string(use.position);
    if (to.leaf >= 0) text += "[" + std::to_string(to.leaf) + "]";
    out.push_back(text);
  }
  return out;
}

TEST(PartialSumGraph, MakesValuesOnlyWhenAsked) {
  auto module = ParseModule(kProgram);
  ValueGraph graph(*module, 2);
  EXPECT_EQ(graph.size(), 0);
  const Instruction* n = module->entry()->FindInstruction("n");
  const int32_t v = graph.IdOf(n, -1);
  ASSERT_GE(v, 0);
  EXPECT_EQ(graph.size(), 1);
  EXPECT_EQ(graph.IdOf(n, -1), v);   // asked again: the same value
  EXPECT_EQ(graph.IdOf(n, 0), kNone);  // an array has no tuple leaves
  EXPECT_EQ(graph.IdOf(module->entry()->FindInstruction("t"), -1), kNone);  // a tuple is no array
  EXPECT_EQ(graph.size(), 1);
  ASSERT_NE(graph.value(v).axes, nullptr);
  EXPECT_EQ(graph.value(v).axes->TileCount(0), 2);
}

TEST(PartialSumGraph, UsesInProgramOrder) {
  auto module = ParseModule(kProgram);
  ValueGraph graph(*module, 2);
  const Computation& entry = *module->entry();
  EXPECT_EQ(Describe(graph, graph.IdOf(entry.FindInstruction("p"), -1)),
            (std::vector<std::string>{"operand:n.0", "operand:a.0", "operand:a.1", "same:t[1]"}));
  EXPECT_EQ(Describe(graph, graph.IdOf(entry.FindInstruction("t"), 1)), (std::vector<std::string>{"same:g"}));
  EXPECT_TRUE(Describe(graph, graph.IdOf(entry.FindInstruction("t"), 0)).empty());
  // An annotation needs its operand whole; so does the entry's result, leaf by leaf.
  EXPECT_EQ(Describe(graph, graph.IdOf(entry.FindInstruction("g"), -1)), (std::vector<std::string>{"whole"}));
  EXPECT_EQ(Describe(graph, graph.IdOf(entry.FindInstruction("a"), -1)), (std::vector<std::string>{"same:r[1]"}));
  EXPECT_EQ(Describe(graph, graph.IdOf(entry.FindInstruction("r"), 0)), (std::vector<std::string>{"whole"}));
  // Program order is kept with each value, whatever order the values were made in.
  const Value& p = graph.value(graph.IdOf(entry.FindInstruction("p"), -1));
  const Value& a = graph.value(graph.IdOf(entry.FindInstruction("a"), -1));
  EXPECT_LT(p.order.position, a.order.position);
  EXPECT_EQ(p.order.computation, 0);
}

TEST(PartialSumGraph, LoopCarriesAreTiedAndBodyResultsFlowBack) {
  auto module = ParseModule(R"(HloModule m, num_partitions=2

%body (b: (f32[4], s32[])) -> (f32[4], s32[]) {
  %b = (f32[4], s32[]) parameter(0)
  %x = f32[4] get-tuple-element(%b), index=0
  %y = f32[4] negate(%x)
  %i = s32[] get-tuple-element(%b), index=1
  ROOT %next = (f32[4], s32[]) tuple(%y, %i)
}

%cond (c: (f32[4], s32[])) -> pred[] {
  %c = (f32[4], s32[]) parameter(0)
  %k = s32[] get-tuple-element(%c), index=1
  %limit = s32[] constant(3)
  ROOT %lt = pred[] compare(%k, %limit), direction=LT
}

ENTRY %main (p: f32[4]) -> (f32[4], s32[]) {
  %p = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %init = (f32[4], s32[]) tuple(%p, %zero)
  ROOT %w = (f32[4], s32[]) while(%init), condition=%cond, body=%body
}
)");
  ValueGraph graph(*module, 2);
  // Each carry leaf is tied to the body's and the condition's parameter leaf.
  ASSERT_EQ(graph.ties().size(), 4u);
  for (const auto& [carry, other] : graph.ties()) {
    EXPECT_EQ(graph.value(carry).instruction->name(), "w");
    EXPECT_EQ(graph.value(other).leaf, graph.value(carry).leaf);
  }
  const Computation* body = module->FindComputation("body");
  ASSERT_NE(body, nullptr);
  // The body's result is the next carry; the init flows into the carry.
  EXPECT_EQ(Describe(graph, graph.IdOf(body->FindInstruction("next"), 0)), (std::vector<std::string>{"same:w[0]"}));
  EXPECT_EQ(Describe(graph, graph.IdOf(module->entry()->FindInstruction("init"), 0)),
            (std::vector<std::string>{"same:w[0]"}));
  EXPECT_EQ(graph.Weight(body), 16.0);  // a loop body counts more than once per run
}

}  // namespace
}  // namespace gspmd::partial_sums
