// Step signatures (roles, carry from attributes, --carry, inference), seeded initial values
// and the synthetic copy / reverse batches.
#include <cmath>

#include <gtest/gtest.h>

#include "support/diagnostic.h"
#include "text/parser.h"
#include "train/step_inputs.h"
#include "train/step_signature.h"

namespace gspmd {
namespace {

constexpr char kStep[] = R"hlo(HloModule step, frontend_attributes={gspmd.carry="1:0",gspmd.metrics="loss",gspmd.task="copy",gspmd.vocab="5"}

ENTRY %main (w: f32[4], tokens: s32[2,6]) -> (f32[], f32[4]) {
  %w = f32[4] parameter(0), frontend_attributes={gspmd.role="param",gspmd.init="normal(0.5)"}
  %tokens = s32[2,6] parameter(1), frontend_attributes={gspmd.role="batch",gspmd.init="task(tokens)"}
  %loss = f32[] constant(1)
  ROOT %t = (f32[], f32[4]) tuple(%loss, %w)
}
)hlo";

TEST(StepSignatureTest, ReadsRolesCarryAndTask) {
  std::unique_ptr<Module> module = ParseModule(kStep);
  StepSignature s = ReadStepSignature(*module, "");
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].role, "param");
  EXPECT_EQ(s.inputs[1].init, "task(tokens)");
  EXPECT_EQ(s.CarryText(), "1:0");
  EXPECT_EQ(s.carry_source, StepSignature::CarrySource::kModule);
  EXPECT_EQ(s.task, "copy");
  EXPECT_EQ(s.vocab, 5);
  EXPECT_TRUE(s.SelfInitializing());
  // --carry replaces the module's.
  s = ReadStepSignature(*module, "1:0");
  EXPECT_EQ(s.carry_source, StepSignature::CarrySource::kFlag);
  EXPECT_THROW(ReadStepSignature(*module, "0:0"), UserError);  // f32[] into f32[4]
  EXPECT_THROW(ReadStepSignature(*module, "1:0,1:0"), UserError);
}

TEST(StepSignatureTest, InfersTrailingMatchesOnly) {
  // Outputs (loss, a', b') against inputs (x, a, b): the last two match in shape and sharding.
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main (x: f32[3], a: f32[2], b: f32[5]) -> (f32[], f32[2], f32[5]) {
  %x = f32[3] parameter(0), sharding={replicated}
  %a = f32[2] parameter(1), sharding={replicated}
  %b = f32[5] parameter(2), sharding={replicated}
  %l = f32[] constant(0)
  ROOT %t = (f32[], f32[2], f32[5]) tuple(%l, %a, %b), sharding={{replicated}, {replicated}, {replicated}}
}
)");
  StepSignature s = ReadStepSignature(*module, "");
  EXPECT_EQ(s.carry_source, StepSignature::CarrySource::kInferred);
  EXPECT_EQ(s.CarryText(), "1:1,2:2");
  EXPECT_FALSE(s.SelfInitializing());
}

TEST(StepInputsTest, InitialValuesAreSeededAndShaped) {
  StepInput input{"w", "param", "normal(0.5)", Shape(ElementType::kF32, {1000})};
  Literal a = InitialValue(input, 3, 7), b = InitialValue(input, 3, 7), c = InitialValue(input, 4, 7);
  EXPECT_TRUE(a.BitwiseEquals(b));
  EXPECT_FALSE(a.BitwiseEquals(c));
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    sum += a.GetAsDouble(i);
    squares += a.GetAsDouble(i) * a.GetAsDouble(i);
  }
  EXPECT_NEAR(sum / 1000, 0.0, 0.05);
  EXPECT_NEAR(std::sqrt(squares / 1000), 0.5, 0.05);
  input.init = "ones";
  EXPECT_EQ(InitialValue(input, 0, 0).GetAsDouble(999), 1.0);
  input.init = "uniform(1)";
  EXPECT_THROW(InitialValue(input, 0, 0), UserError);
}

TEST(StepInputsTest, CopyAndReverseBatches) {
  for (const std::string task : {"copy", "reverse"}) {
    TaskBatch batch = MakeTaskBatch(task, 7, 3, 10, 1, 2);
    const int32_t* tokens = batch.tokens.data<int32_t>();
    for (int64_t b = 0; b < 3; ++b) {
      const int32_t* row = tokens + b * 10;
      for (int64_t j = 0; j < 5; ++j) {
        EXPECT_LT(row[j], 7);
        EXPECT_EQ(row[5 + j], task == "copy" ? row[j] : row[4 - j]);
      }
      for (int64_t t = 0; t < 10; ++t) {
        EXPECT_EQ(batch.targets.data<int32_t>()[b * 10 + t], t < 9 ? row[t + 1] : 0);
        // Only the predictable half is scored: targets at positions 5..9, i.e. t = 4..8.
        EXPECT_EQ(batch.weights.data<float>()[b * 10 + t], t >= 4 && t < 9 ? 1.0f : 0.0f) << t;
      }
    }
    EXPECT_TRUE(MakeTaskBatch(task, 7, 3, 10, 1, 2).tokens.BitwiseEquals(batch.tokens));
    EXPECT_FALSE(MakeTaskBatch(task, 7, 3, 10, 1, 3).tokens.BitwiseEquals(batch.tokens));
  }
  EXPECT_THROW(MakeTaskBatch("sort", 7, 3, 10, 1, 2), UserError);
}

}  // namespace
}  // namespace gspmd
