// RemoveShardingAnnotations: every annotation or only the intermediates', manual regions kept.
#include <gtest/gtest.h>

#include "api/gspmd.h"
#include "builder/remove_annotations.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

const char kAnnotated[] = R"(HloModule m, num_partitions=2

ENTRY %main (x: f32[8,4], y: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %y = f32[8,4]{1,0} parameter(1)
  %s = f32[8,4]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  %a = f32[8,4]{1,0} add(%s, %y), sharding={replicated}
  ROOT %r = f32[8,4]{1,0} custom-call(%a), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
}
)";

TEST(RemoveShardingAnnotations, AllOfThem) {
  std::unique_ptr<Module> module = ParseModule(kAnnotated);
  EXPECT_EQ(RemoveShardingAnnotations(*module), 4);
  const std::string text = PrintModule(*module);
  EXPECT_EQ(text.find("sharding="), std::string::npos) << text;
  EXPECT_EQ(text.find("Sharding"), std::string::npos) << text;
  EXPECT_NE(text.find("ROOT %a = f32[8,4]{1,0} add(%x, %y)"), std::string::npos) << text;
}

TEST(RemoveShardingAnnotations, IntermediatesOnlyKeepTheBoundary) {
  std::unique_ptr<Module> module = ParseModule(kAnnotated);
  EXPECT_EQ(RemoveShardingAnnotations(*module, AnnotationsToRemove::kIntermediates), 2);
  const std::string text = PrintModule(*module);
  EXPECT_NE(text.find("%x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}"), std::string::npos) << text;
  EXPECT_NE(text.find("ROOT %r = f32[8,4]{1,0} custom-call(%a), custom_call_target=\"Sharding\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("%a = f32[8,4]{1,0} add(%x, %y)\n"), std::string::npos) << text;
}

// StableHLO's Shardy shardings arrive as xla.sdy.sharding attributes: they go too (autoshard
// --keep-annotations none on a .mlir input left them, and propagation still followed them).
TEST(RemoveShardingAnnotations, ShardyAttributesOfStableHlo) {
  const char mlir[] = R"(module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"model"}]> : tensor<16x64xf32>
    return %1 : tensor<16x64xf32>
  }
}
)";
  for (AnnotationsToRemove what : {AnnotationsToRemove::kAll, AnnotationsToRemove::kIntermediates}) {
    std::unique_ptr<Module> module = api::Program::FromText(mlir, "m.mlir").CopyModule();
    EXPECT_GT(RemoveShardingAnnotations(*module, what), 0);
    const Instruction* x = module->entry()->parameter(0);
    if (what == AnnotationsToRemove::kAll) {
      for (const auto& instruction : module->entry()->instructions())
        EXPECT_EQ(instruction->FrontendAttribute("xla.sdy.sharding"), "") << "%" << instruction->name();
      // Nothing says how to split any value now: propagation leaves every one replicated.
      const api::Propagated propagated = api::Propagate(api::Program::FromModule(std::move(module), "m"));
      for (const auto& instruction : propagated.program.module().entry()->instructions())
        if (instruction->sharding()) EXPECT_TRUE(instruction->sharding()->IsReplicated()) << "%" << instruction->name();
    } else {
      EXPECT_NE(x->FrontendAttribute("xla.sdy.sharding"), "") << "a parameter keeps its sharding";
    }
  }
}

TEST(RemoveShardingAnnotations, WithoutFrontendAttributeKeepsTheOthers) {
  EXPECT_EQ(WithoutFrontendAttribute("a=\"1\",xla.sdy.sharding=\"#sdy<{\\\"x\\\"}>\",b=2", "xla.sdy.sharding"),
            "a=\"1\",b=2");
  EXPECT_EQ(WithoutFrontendAttribute("xla.sdy.sharding=\"s\"", "xla.sdy.sharding"), "");
  EXPECT_EQ(WithoutFrontendAttribute("a=1", "b"), "a=1");
}

TEST(RemoveShardingAnnotations, ManualRegionsStay) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2

%body (p: f32[4,4]) -> f32[4,4] {
  %p = f32[4,4]{1,0} parameter(0)
  ROOT %n = f32[4,4]{1,0} negate(%p)
}

ENTRY %main (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %s = f32[8,4]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
  %m = f32[4,4]{1,0} custom-call(%s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %c = f32[4,4]{1,0} call(%m), to_apply=%body, sharding={manual}
  %t = f32[4,4]{1,0} custom-call(%c), custom_call_target="Sharding", sharding={manual}
  ROOT %f = f32[8,4]{1,0} custom-call(%t), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
}
)");
  RemoveShardingAnnotations(*module);
  const std::string text = PrintModule(*module);
  EXPECT_NE(text.find("%s = f32[8,4]{1,0} custom-call(%x), custom_call_target=\"Sharding\""), std::string::npos) << text;
  EXPECT_NE(text.find("custom_call_target=\"SPMDFullToShardShape\", sharding={manual}"), std::string::npos) << text;
  EXPECT_NE(text.find("to_apply=%body, sharding={manual}"), std::string::npos) << text;
  EXPECT_NE(text.find("custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2,1]<=[2]}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%x = f32[8,4]{1,0} parameter(0)\n"), std::string::npos) << text;
}

// `gspmd model NAME --set sharding=none`: every model's step with no annotation at all.
TEST(RemoveShardingAnnotations, EveryModelWithShardingNone) {
  for (const char* model : {"dense_lm", "gshard_moe", "pipelined_lm"}) {
    const std::string text = api::Model(api::ModelOptions{model, "", {"sharding=none"}, ""}).Text();
    EXPECT_EQ(text.find("sharding={"), std::string::npos) << model;
    EXPECT_EQ(text.find("\"Sharding\""), std::string::npos) << model;
    const std::string annotated = api::Model(api::ModelOptions{model, "", {}, ""}).Text();
    EXPECT_NE(annotated.find("sharding={"), std::string::npos) << model;
  }
}

}  // namespace
}  // namespace gspmd
