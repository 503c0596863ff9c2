// FLOP and byte counts per instruction against hand counts: dot, convolution (padding,
// dilation, groups), elementwise, transcendental, reduce; and the kernel (fusion) estimate.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "simulate/kernel_plan.h"
#include "simulate/op_counts.h"
#include "text/parser.h"

namespace gspmd::simulate {
namespace {

std::unique_ptr<Module> Parse(const std::string& body) {
  return ParseModule("HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                     "  ROOT %s = f32[] add(%a, %b)\n}\n\nENTRY %main {\n" + body + "}\n");
}

const Instruction& Find(const Module& module, const std::string& name) {
  const Instruction* instruction = module.entry()->FindInstruction(name);
  EXPECT_NE(instruction, nullptr) << name;
  return *instruction;
}

TEST(OpCountsTest, DotIsTwiceResultTimesContraction) {
  auto module = Parse(R"(  %x = f32[4,8,16]{2,1,0} parameter(0)
  %w = f32[4,16,32]{2,1,0} parameter(1)
  ROOT %d = f32[4,8,32]{2,1,0} dot(%x, %w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
)");
  const OpCounts counts = CountOp(Find(*module, "d"));
  EXPECT_EQ(counts.matrix_flops, 2.0 * 4 * 8 * 32 * 16);  // 32768
  EXPECT_EQ(counts.vector_flops, 0);
  EXPECT_EQ(counts.unfused_bytes, 4.0 * (4 * 8 * 16 + 4 * 16 * 32 + 4 * 8 * 32));
  const MatrixDims dims = MatrixDimsOf(Find(*module, "d"));
  EXPECT_EQ(dims.m, 32);  // batch 4 x 8 rows
  EXPECT_EQ(dims.k, 16);
  EXPECT_EQ(dims.n, 32);
  EXPECT_EQ(MatrixOperandsOf(Find(*module, "d")).precision, "DEFAULT");
}

TEST(OpCountsTest, DotPrecisionIsTheHigherOperandPrecision) {
  auto module = Parse(R"(  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,4]{1,0} parameter(1)
  ROOT %d = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={default,highest}
)");
  const MatrixOperands operands = MatrixOperandsOf(Find(*module, "d"));
  EXPECT_EQ(operands.element_type, "f32");
  EXPECT_EQ(operands.precision, "HIGHEST");
}

TEST(OpCountsTest, ConvolutionCountsOnlyTapsOnRealInput) {
  // 1-D, input width 5, kernel 3, pad 1 on both sides: output 5; the edge outputs have 2 real
  // taps, the middle three 3: 13 pairs. 2 batch x 4 output x 3 input features.
  auto module = Parse(R"(  %x = f32[2,5,3]{2,1,0} parameter(0)
  %k = f32[3,3,4]{2,1,0} parameter(1)
  ROOT %c = f32[2,5,4]{2,1,0} convolution(%x, %k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
)");
  EXPECT_EQ(CountOp(Find(*module, "c")).matrix_flops, 2.0 * 2 * 4 * 3 * 13);
  // Base dilation 2 (a transposed convolution): input 3 becomes 5 positions with 2 holes;
  // window 3, no padding: 3 outputs; taps on real elements: o=0: {0,2} 2, o=1: {2} 1,
  // o=2: {2,4} 2 -> 5 pairs.
  auto dilated = Parse(R"(  %x = f32[1,3,1]{2,1,0} parameter(0)
  %k = f32[3,1,1]{2,1,0} parameter(1)
  ROOT %c = f32[1,3,1]{2,1,0} convolution(%x, %k), window={size=3 lhs_dilate=2}, dim_labels=b0f_0io->b0f
)");
  EXPECT_EQ(CountOp(Find(*dilated, "c")).matrix_flops, 2.0 * 5);
  // Feature groups: 4 input features in 2 groups of 2; the kernel's input dim is 2.
  auto grouped = Parse(R"(  %x = f32[1,4,4]{2,1,0} parameter(0)
  %k = f32[1,2,6]{2,1,0} parameter(1)
  ROOT %c = f32[1,4,6]{2,1,0} convolution(%x, %k), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2
)");
  EXPECT_EQ(CountOp(Find(*grouped, "c")).matrix_flops, 2.0 * 1 * 6 * 2 * 4);
}

TEST(OpCountsTest, ElementwiseTranscendentalAndReduce) {
  auto module = Parse(R"(  %x = f32[8,16]{1,0} parameter(0)
  %y = f32[8,16]{1,0} parameter(1)
  %m = f32[8,16]{1,0} multiply(%x, %y)
  %c = pred[8,16]{1,0} compare(%x, %y), direction=GT
  %s = f32[8,16]{1,0} select(%c, %x, %m)
  %e = f32[8,16]{1,0} exponential(%s)
  %b = f32[8,16]{1,0} broadcast(%x), dimensions={0,1}
  %t = f32[16,8]{1,0} transpose(%e), dimensions={1,0}
  %zero = f32[] constant(0)
  ROOT %r = f32[16]{0} reduce(%t, %zero), dimensions={1}, to_apply=%add
)");
  EXPECT_EQ(CountOp(Find(*module, "m")).vector_flops, 128);
  EXPECT_EQ(CountOp(Find(*module, "c")).vector_flops, 128);
  EXPECT_EQ(CountOp(Find(*module, "s")).vector_flops, 128);
  EXPECT_EQ(CountOp(Find(*module, "e")).vector_flops, 0);
  EXPECT_EQ(CountOp(Find(*module, "e")).transcendentals, 128);
  EXPECT_EQ(CountOp(Find(*module, "b")).vector_flops, 0);
  EXPECT_EQ(CountOp(Find(*module, "t")).vector_flops, 0);
  EXPECT_EQ(CountOp(Find(*module, "t")).unfused_bytes, 2 * 512);
  EXPECT_EQ(CountOp(Find(*module, "r")).vector_flops, 128 - 16);  // one add per element folded in
  EXPECT_EQ(CountOp(Find(*module, "x")).unfused_bytes, 0);          // parameters cost nothing
}

TEST(KernelPlanTest, ElementwiseChainsFuseIntoTheirConsumer) {
  // softmax: exp feeds both the sum and the divide, so it is stored once and read again.
  auto module = Parse(R"(  %x = f32[8,128]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %n = f32[8,128]{1,0} negate(%x)
  %e = f32[8,128]{1,0} exponential(%n)
  %s = f32[8]{0} reduce(%e, %zero), dimensions={1}, to_apply=%add
  %bs = f32[8,128]{1,0} broadcast(%s), dimensions={0}
  ROOT %d = f32[8,128]{1,0} divide(%e, %bs)
)");
  const KernelPlan plan = PlanKernels(*module->entry());
  ASSERT_EQ(plan.kernels.size(), 3u);
  // {negate, exp}: reads x, writes e (used by two kernels).
  EXPECT_EQ(plan.kernels[0].root->name(), "e");
  EXPECT_EQ(plan.kernels[0].members.size(), 2u);
  EXPECT_EQ(plan.kernels[0].bytes_read, 4096);
  EXPECT_EQ(plan.kernels[0].bytes_written, 4096);
  // {reduce}: reads e, writes the 8 sums.
  EXPECT_EQ(plan.kernels[1].root->name(), "s");
  EXPECT_EQ(plan.kernels[1].bytes_read, 4096);
  EXPECT_EQ(plan.kernels[1].bytes_written, 32);
  EXPECT_EQ(plan.kernels[1].counts.vector_flops, 8 * 127);
  // {divide} with the broadcast copied in: reads e and s, writes the result.
  EXPECT_EQ(plan.kernels[2].root->name(), "d");
  EXPECT_EQ(plan.kernels[2].bytes_read, 4096 + 32);
  EXPECT_EQ(plan.kernels[2].bytes_written, 4096);
  EXPECT_EQ(plan.kernel_of.count(&Find(*module, "bs")), 0u);
}

TEST(KernelPlanTest, ProducersFuseIntoDotsAndSlicesReadOnlyTheirResult) {
  auto module = Parse(R"(  %x = f32[64,256]{1,0} parameter(0)
  %w = f32[256,32]{1,0} parameter(1)
  %s = f32[16,256]{1,0} slice(%x), slice={[0:16], [0:256]}
  %c = bf16[16,256]{1,0} convert(%s)
  %wc = bf16[256,32]{1,0} convert(%w)
  %d = f32[16,32]{1,0} dot(%c, %wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %n = f32[16,32]{1,0} negate(%d)
  %u = f32[64,32]{1,0} parameter(2)
  %i = s32[] parameter(3)
  ROOT %dus = f32[64,32]{1,0} dynamic-update-slice(%u, %n, %i, %i)
)");
  const KernelPlan plan = PlanKernels(*module->entry());
  ASSERT_EQ(plan.kernels.size(), 2u);
  const Kernel& dot = plan.kernels[0];
  EXPECT_EQ(dot.root->name(), "d");
  EXPECT_EQ(dot.members.size(), 4u);                            // slice, two converts, dot
  EXPECT_EQ(dot.bytes_read, 16 * 256 * 4 + 256 * 32 * 4);      // the slice of x, all of w
  EXPECT_EQ(dot.bytes_written, 16 * 32 * 4);
  EXPECT_EQ(dot.counts.matrix_flops, 2.0 * 16 * 32 * 256);
  const Kernel& update = plan.kernels[1];
  EXPECT_EQ(update.members.size(), 2u);           // the negate fuses into the update
  EXPECT_EQ(update.bytes_read, 16 * 32 * 4 + 4);  // the dot's result and the index, not the buffer
  EXPECT_EQ(update.bytes_written, 16 * 32 * 4);
}

// A dot written only into a slice of a buffer (a windowed einsum's trip) writes it there: one
// kernel that reads the dot's operands and writes the update.
TEST(KernelPlanTest, ADotWrittenIntoASliceIsOneKernelWithTheUpdate) {
  auto module = Parse(R"(  %x = f32[16,256]{1,0} parameter(0)
  %w = f32[256,32]{1,0} parameter(1)
  %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %u = f32[64,32]{1,0} parameter(2)
  %i = s32[] parameter(3)
  ROOT %dus = f32[64,32]{1,0} dynamic-update-slice(%u, %d, %i, %i)
)");
  const KernelPlan plan = PlanKernels(*module->entry());
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& kernel = plan.kernels[0];
  EXPECT_EQ(kernel.root->name(), "dus");
  EXPECT_EQ(kernel.members.size(), 2u);
  EXPECT_EQ(kernel.bytes_read, 16 * 256 * 4 + 256 * 32 * 4 + 4);  // x, w, the index; not the buffer
  EXPECT_EQ(kernel.bytes_written, 16 * 32 * 4);                   // the update, in place
  EXPECT_EQ(kernel.counts.matrix_flops, 2.0 * 16 * 32 * 256);
}

TEST(KernelPlanTest, ReshapesAreViewsThatFusionLooksThrough) {
  auto module = Parse(R"(  %x = f32[16,8,32]{2,1,0} parameter(0)
  %w = f32[256,64]{1,0} parameter(1)
  %n = f32[16,8,32]{2,1,0} negate(%x)
  %r = f32[16,256]{1,0} reshape(%n)
  %d = f32[16,64]{1,0} dot(%r, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %o = f32[16,4,16]{2,1,0} reshape(%d)
)");
  const KernelPlan plan = PlanKernels(*module->entry());
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].members.size(), 2u);  // negate and dot; the reshapes run no kernel
  EXPECT_EQ(plan.kernels[0].bytes_read, 4 * (4096 + 256 * 64));
  EXPECT_EQ(plan.kernels[0].bytes_written, 4 * 16 * 64);
  EXPECT_EQ(CountOp(Find(*module, "r")).unfused_bytes, 0);
}

}  // namespace
}  // namespace gspmd::simulate
