// The builder-made pipeline: equals running the stages one after another, and propagate +
// partition + SPMD run equal to the interpreter.
#include <gtest/gtest.h>

#include "model_test_util.h"
#include "models/model_registry.h"
#include "models/pipeline.h"

namespace gspmd {
namespace {

ModelOptions Small() {
  ModelOptions o;
  o.stages = 4;
  o.microbatches = 6;
  o.microbatch_size = 2;
  o.d_model = 8;
  return o;
}

TEST(PipelineModelTest, EqualsSequentialStages) {
  ModelOptions o = Small();
  std::unique_ptr<Module> module = BuildPipeline(o);
  VerifyModule(*module);
  EXPECT_EQ(module->num_partitions(), 4);
  model_test::RoundTrip(*module);
  std::vector<Literal> inputs = RandomInputs(*module, 4);
  std::vector<Literal> piped = model_test::Interpret(*module, inputs);
  std::vector<Literal> reference = model_test::Interpret(*BuildSequentialStages(o), inputs);
  LiteralComparison comparison = CompareLiterals(piped[0], reference[0], 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message;
}

TEST(PipelineModelTest, OneStageIsAUserError) {
  ModelOptions o = Small();
  o.stages = 1;
  EXPECT_THROW(BuildPipeline(o), UserError);
}

TEST(PipelineModelTest, SpmdMatchesInterpreter) {
  std::unique_ptr<Module> module = BuildPipeline(Small());
  std::vector<Literal> inputs = RandomInputs(*module, 6);
  model_test::ExpectSpmdMatches(*module, inputs, model_test::Interpret(*module, inputs));
}

}  // namespace
}  // namespace gspmd
