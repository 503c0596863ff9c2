// The builder-made transformer: structure and sparse annotations, interpreter runs (the SGD
// step lowers the loss), and propagate + partition + SPMD run equal to the interpreter.
#include <gtest/gtest.h>

#include "model_test_util.h"
#include "models/model_registry.h"
#include "models/transformer.h"

namespace gspmd {
namespace {

using model_test::CountCustomCalls;

ModelOptions Small(int64_t layers, bool train) {
  ModelOptions o;
  o.layers = layers;
  o.train = train;
  o.batch = 4;
  o.seq = 8;
  o.d_model = 16;
  o.heads = 4;
  o.head_dim = 4;
  o.d_ff = 32;
  o.learning_rate = 0.05;
  return o;
}

TEST(TransformerModelTest, ForwardHasSparseAnnotationsAndRuns) {
  std::unique_ptr<Module> module = BuildTransformer(Small(3, false));
  VerifyModule(*module);
  EXPECT_EQ(module->num_partitions(), 8);
  EXPECT_EQ(module->entry()->num_parameters(), 2 + 3 * 8);
  EXPECT_EQ(CountCustomCalls(*module, "Sharding"), 3);  // one per layer input
  for (const Instruction* parameter : module->entry()->parameters()) EXPECT_TRUE(parameter->sharding().has_value());
  EXPECT_EQ(module->entry()->parameter(3)->sharding()->ToString(),  // l0_wq: heads over 'model'
            "{devices=[1,4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  std::unique_ptr<Module> reparsed = model_test::RoundTrip(*module);
  std::vector<Literal> inputs = RandomInputs(*module, 7);
  std::vector<Literal> out = model_test::Interpret(*reparsed, inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape().dims(), (std::vector<int64_t>{4, 8, 16}));
}

TEST(TransformerModelTest, TrainingStepLowersTheLoss) {
  ModelOptions options = Small(2, true);
  std::unique_ptr<Module> module = BuildTransformer(options);
  VerifyModule(*module);
  const Instruction* root = module->entry()->root();
  ASSERT_TRUE(root->shape().IsTuple());
  EXPECT_EQ(root->shape().tuple_size(), 1 + 2 * 8);
  ASSERT_TRUE(root->sharding().has_value());
  EXPECT_EQ(root->sharding()->tuple_elements()[0].ToString(), "{replicated}");
  // Weights keep their input shardings as result shardings (as JAX's out_shardings).
  EXPECT_EQ(root->sharding()->tuple_elements()[2], *module->entry()->parameter(3)->sharding());
  // The cotangents of annotated activations are annotated too (JAX's transpose rule): one per
  // layer input but the first (x needs no cotangent).
  EXPECT_EQ(CountCustomCalls(*module, "Sharding"), 2 + 1);

  model_test::RoundTrip(*module);
  std::vector<Literal> inputs = RandomInputs(*module, 3);
  std::vector<Literal> out = model_test::Interpret(*module, inputs);
  const double before = out[0].GetAsDouble(0);
  std::vector<Literal> updated = {inputs[0], inputs[1]};
  for (size_t i = 1; i < out.size(); ++i) updated.push_back(out[i]);
  const double after = model_test::Interpret(*module, updated)[0].GetAsDouble(0);
  EXPECT_LT(after, before) << "one SGD step should lower the loss";
}

TEST(TransformerModelTest, ForwardSpmdMatchesInterpreter) {
  std::unique_ptr<Module> module = BuildTransformer(Small(2, false));
  std::vector<Literal> inputs = RandomInputs(*module, 11);
  model_test::ExpectSpmdMatches(*module, inputs, model_test::Interpret(*module, inputs));
}

TEST(TransformerModelTest, TrainingStepSpmdMatchesInterpreter) {
  std::unique_ptr<Module> module = BuildTransformer(Small(2, true));
  std::vector<Literal> inputs = RandomInputs(*module, 5);
  model_test::ExpectSpmdMatches(*module, inputs, model_test::Interpret(*module, inputs));
}

TEST(TransformerModelTest, InstructionCountGrowsLinearlyWithLayers) {
  const int64_t one = model_test::CountInstructions(*BuildTransformer(Small(1, true)));
  const int64_t two = model_test::CountInstructions(*BuildTransformer(Small(2, true)));
  const int64_t eight = model_test::CountInstructions(*BuildTransformer(Small(8, true)));
  EXPECT_EQ(eight - one, 7 * (two - one));
}

}  // namespace
}  // namespace gspmd
