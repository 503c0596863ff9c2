// VerifyModule: the parser's per-instruction checks, run over a module a pass produced.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "hlo_text_test_util.h"

namespace gspmd {
namespace {

constexpr const char* kModule = R"(HloModule m, num_partitions=4

ENTRY %main (a: f32[8,2], b: f32[8,2]) -> f32[8,2] {
  %a = f32[8,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[8,2]{1,0} parameter(1)
  ROOT %c = f32[8,2]{1,0} add(%a, %b)
}
)";

std::string VerifyError(const Module& module) {
  try {
    VerifyModule(module);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(VerifierTest, ParsedModuleVerifies) {
  EXPECT_EQ(VerifyError(*ParseModule(kModule)), "");
}

TEST(VerifierTest, ShardingRankMismatchNamesTheInstruction) {
  std::unique_ptr<Module> module = ParseModule(kModule);
  module->entry()->root()->set_sharding(Sharding::Tiled(TileAssignment::Iota({4})));
  EXPECT_EQ(VerifyError(*module),
            "<input>:6:8: error: %c: in computation %main: sharding tiles 1 dimension, expected 2 "
            "(the rank of f32[8,2])");
}

TEST(VerifierTest, ShardingDeviceBeyondNumPartitions) {
  std::unique_ptr<Module> module = ParseModule(kModule);
  module->entry()->root()->set_sharding(Sharding::Maximal(5));
  EXPECT_EQ(VerifyError(*module),
            "<input>:6:8: error: %c: in computation %main: sharding uses device 5, expected device ids from 0 to 3 "
            "(num_partitions=4)");
}

TEST(VerifierTest, OperandCountAndShapes) {
  std::unique_ptr<Module> module = ParseModule(kModule);
  Instruction* add = module->entry()->root();
  add->AppendOperand(module->entry()->parameter(0));
  EXPECT_EQ(VerifyError(*module), "<input>:6:8: error: %c: in computation %main: add expects 2 operands, got 3");
  std::unique_ptr<Module> other = ParseModule(kModule);
  other->entry()->root()->set_shape(Shape(ElementType::kF32, {2, 8}));
  EXPECT_EQ(VerifyError(*other),
            "<input>:6:8: error: %c: in computation %main: result f32[2,8] does not match f32[8,2], the shape its "
            "operands and attributes give");
}

TEST(VerifierTest, CheckShardingForTuples) {
  Shape tuple = Shape::Tuple({Shape(ElementType::kF32, {8}), Shape::Tuple({Shape(ElementType::kS32, {})})});
  EXPECT_EQ(CheckSharding(Sharding::Replicated(), tuple, 8), "");
  EXPECT_EQ(CheckSharding(Sharding::Tuple({Sharding::Replicated(), Sharding::Replicated()}), tuple, 8), "");
  EXPECT_EQ(CheckSharding(Sharding::Tuple({Sharding::Replicated()}), tuple, 8),
            "tuple sharding has 1 element, expected 2 (one per element of (f32[8], (s32[])))");
  EXPECT_EQ(CheckSharding(Sharding::Tiled(TileAssignment::Iota({8})), tuple, 8),
            "sharding tiles 1 dimension, expected 0 (the rank of s32[])");
}

}  // namespace
}  // namespace gspmd
