// BuildModel by name, option overrides and their errors.
#include <gtest/gtest.h>

#include "model_test_util.h"
#include "models/model_registry.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

TEST(ModelRegistryTest, EveryModelBuildsVerifiesAndPrints) {
  ModelOptions o;
  o.layers = 1;
  for (const std::string& name : ModelNames()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Module> module = BuildModel(name, o);
    ASSERT_NE(module, nullptr);
    VerifyModule(*module);
    model_test::RoundTrip(*module);
  }
}

TEST(ModelRegistryTest, UnknownNamesAndOptionsAreUserErrors) {
  try {
    BuildModel("resnet", ModelOptions{});
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("unknown model 'resnet' (known: transformer"), std::string::npos)
        << error.what();
  }
  ModelOptions o;
  o.Set("layers", "32");
  o.Set("train", "false");
  o.Set("learning_rate", "0.5");
  EXPECT_EQ(o.layers, 32);
  EXPECT_FALSE(o.train);
  EXPECT_EQ(o.learning_rate, 0.5);
  EXPECT_THROW(o.Set("layers", "0"), UserError);
  EXPECT_THROW(o.Set("layers", "3x"), UserError);
  EXPECT_THROW(o.Set("train", "maybe"), UserError);
  EXPECT_THROW(o.Set("depth", "3"), UserError);
}

TEST(ModelRegistryTest, TransformerVariantsByName) {
  ModelOptions o;
  o.layers = 1;
  EXPECT_TRUE(BuildModel("transformer_train", o)->entry()->root()->shape().IsTuple());
  EXPECT_FALSE(BuildModel("transformer_forward", o)->entry()->root()->shape().IsTuple());
}

}  // namespace
}  // namespace gspmd
