// Tests of Instruction's out-of-line attributes (defaults, clones, writes) and post order.
#include "ir/instruction.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/computation.h"
#include "text/parser.h"

namespace gspmd {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape(ElementType::kF32, std::move(dims)); }

TEST(InstructionTest, OutOfLineAttributesDefaultUntilWritten) {
  Instruction add(Opcode::kAdd, F32({4}), "add");
  EXPECT_TRUE(add.window().empty());
  EXPECT_TRUE(add.slice().empty());
  EXPECT_FALSE(add.literal().has_value());
  EXPECT_TRUE(add.dot_dims().lhs_contracting_dims.empty());
  EXPECT_TRUE(add.extra_attributes().empty());

  Instruction dot(Opcode::kDot, F32({4, 4}), "dot");
  dot.mutable_dot_dims().lhs_contracting_dims = {1};
  EXPECT_EQ(dot.dot_dims().lhs_contracting_dims, std::vector<int64_t>{1});
  EXPECT_TRUE(add.dot_dims().lhs_contracting_dims.empty());  // the defaults are not shared state
}

// A clone starts with the original's attributes; writing to either leaves the other alone.
TEST(InstructionTest, ClonesShareAttributesUntilOneWrites) {
  Instruction slice(Opcode::kSlice, F32({2}), "slice");
  slice.mutable_slice() = {SliceDim{0, 2, 1}};
  std::unique_ptr<Instruction> clone = slice.CloneWithNewOperands(F32({2}), {});
  ASSERT_EQ(clone->slice().size(), 1u);
  EXPECT_EQ(clone->slice()[0].limit, 2);

  clone->mutable_slice()[0].limit = 3;
  EXPECT_EQ(slice.slice()[0].limit, 2);
  EXPECT_EQ(clone->slice()[0].limit, 3);

  slice.mutable_slice()[0].start = 1;
  EXPECT_EQ(slice.slice()[0].start, 1);
  EXPECT_EQ(clone->slice()[0].start, 0);
}

TEST(InstructionTest, ParsedAttributesRoundTripThroughAccessors) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[8,6] parameter(0)
  %zero = f32[] constant(0)
  %s = f32[4,6] slice(%x), slice={[2:6], [0:6]}
  %p = f32[4,8] pad(%s, %zero), padding=0_0x1_1
  ROOT %r = f32[2,4] reduce-window(%p, %zero), window={size=2x2 stride=2x2}, to_apply=%sum
})",
                                               "test.hlo");
  const Computation* entry = module->entry();
  EXPECT_EQ(entry->FindInstruction("s")->slice()[0].start, 2);
  EXPECT_EQ(entry->FindInstruction("p")->padding()[1].low, 1);
  EXPECT_EQ(entry->FindInstruction("r")->window()[1].stride, 2);
  EXPECT_TRUE(entry->FindInstruction("zero")->literal().has_value());
  EXPECT_TRUE(entry->FindInstruction("x")->window().empty());
}

TEST(ComputationTest, PostOrderPutsOperandsFirstAndKeepsUnreachable) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main {
  %x = f32[4] parameter(0)
  %unused = f32[4] negate(%x)
  %a = f32[4] exponential(%x)
  %b = f32[4] add(%a, %x)
  ROOT %c = f32[4] multiply(%b, %a)
})",
                                               "test.hlo");
  std::vector<Instruction*> order = module->entry()->MakePostOrder();
  ASSERT_EQ(order.size(), 5u);
  auto position = [&](const std::string& name) {
    return std::find_if(order.begin(), order.end(), [&](Instruction* i) { return i->name() == name; }) -
           order.begin();
  };
  EXPECT_LT(position("x"), position("a"));
  EXPECT_LT(position("a"), position("b"));
  EXPECT_LT(position("b"), position("c"));
  EXPECT_LT(position("x"), position("unused"));
}

}  // namespace
}  // namespace gspmd
