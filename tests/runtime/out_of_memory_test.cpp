// Memory running out while a program runs (injected with SetAllocationFaultForTesting): a
// UserError located at the instruction, naming the device and the bytes; one device failing
// while the others wait in a collective releases them; the devices' threads are reusable after.
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "runtime/interp/evaluator.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/allocation.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

// Puts the allocator's test fault back however a test ends.
class InjectedFault {
 public:
  explicit InjectedFault(AllocationFault fault) : before_(SetAllocationFaultForTesting(fault)) {}
  ~InjectedFault() { SetAllocationFaultForTesting(before_); }

 private:
  AllocationFault before_;
};

Literal Filled(std::vector<int64_t> dims, float value) {
  Literal literal(Shape(ElementType::kF32, std::move(dims)));
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.data<float>()[i] = value;
  return literal;
}

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

constexpr const char* kBroadcast = R"(HloModule m, num_partitions=8
ENTRY %e (p: f32[]) -> f32[8,1024] {
  %p = f32[] parameter(0)
  ROOT %b = f32[8,1024]{1,0} broadcast(%p), dimensions={}, sharding={devices=[8,1]<=[8]}
}
)";

TEST(OutOfMemoryTest, InterpreterErrorIsLocatedAtTheInstruction) {
  std::unique_ptr<Module> module = ParseModule(kBroadcast);
  const std::vector<Literal> arguments = {Filled({}, 1)};
  const InjectedFault fault({4096, 0});
  const std::string error = ErrorOf([&] { EvaluateModule(*module, arguments); });
  EXPECT_NE(error.find(":4:8: error: %b: out of memory: cannot allocate 32.0 KiB (32768 bytes) for f32[8,1024]"),
            std::string::npos)
      << error;
}

// Every device fails at the same instruction; one of them is reported, with its id.
TEST(OutOfMemoryTest, EveryDeviceFailingIsOneErrorNamingADevice) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=8
ENTRY %e (p: f32[]) -> f32[1,1024] {
  %p = f32[] parameter(0)
  ROOT %b = f32[1,1024]{1,0} broadcast(%p), dimensions={}, sharding={devices=[8,1]<=[8]}
}
)");
  const std::vector<Literal> one = {Filled({}, 1)};
  {
    const InjectedFault fault({1024, 0});
    const std::string error = ErrorOf([&] { RunSpmd(*module, one, {}); });
    EXPECT_TRUE(error.rfind("device ", 0) == 0) << error;
    EXPECT_NE(error.find("error: %b: out of memory: cannot allocate 4.00 KiB (4096 bytes) for f32[1,1024]"),
              std::string::npos)
        << error;
  }
  // The same threads run the next program.
  std::vector<Literal> outputs = RunSpmd(*module, std::vector<Literal>{Filled({}, 2)}, {});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape().dims(), (std::vector<int64_t>{8, 1024}));
  EXPECT_EQ(outputs[0].data<float>()[8 * 1024 - 1], 2.0f);
}

// One allocation of one device fails (the 17th of the run: 8 arguments and 8 adds come first,
// in whatever order the threads make them), typically the all-reduce's result on the device
// that gets there last; the devices already waiting in the all-reduce are released, and the
// run ends with that device's error instead of hanging.
TEST(OutOfMemoryTest, OneDeviceFailingReleasesTheOthersFromTheirCollective) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=8
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY %e (x: f32[16]) -> f32[16] {
  %x = f32[16] parameter(0)
  %twice = f32[16] add(%x, %x)
  %ar = f32[16] all-reduce(%twice), channel_id=1, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%sum
  ROOT %square = f32[16] multiply(%ar, %ar)
}
)");
  const std::vector<Literal> arguments = {Filled({16}, 1)};
  for (int64_t call : {1, 9, 17}) {
    const InjectedFault fault({UINT64_MAX, call});
    const std::string error = ErrorOf([&] { RunSpmd(*module, arguments, {}); });
    EXPECT_TRUE(error.rfind("device ", 0) == 0) << "call " << call << ": " << error;
    EXPECT_NE(error.find("out of memory: cannot allocate 64 bytes"), std::string::npos) << "call " << call << ": "
                                                                                         << error;
  }
  std::vector<Literal> outputs = RunSpmd(*module, arguments, {});
  EXPECT_EQ(outputs[0].data<float>()[0], 256.0f);  // (8 * 2)^2
}

// The scratch a collective passes its data through: an all-reduce whose reducer has no native
// kernel gathers every member's operand (8 x 16 bytes) before folding them.
TEST(OutOfMemoryTest, CollectiveScratchIsNamed) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=8
%first (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] subtract(%a, %b)
}
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%x), channel_id=1, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%first
}
)");
  const std::vector<Literal> arguments = {Filled({4}, 1)};
  const InjectedFault fault({64, 0});
  const std::string error = ErrorOf([&] { RunSpmd(*module, arguments, {}); });
  EXPECT_NE(error.find("%ar: out of memory: cannot allocate 128 bytes for the collective's scratch buffer"),
            std::string::npos)
      << error;
}

// A device's shard of an argument that does not fit says which argument it was.
TEST(OutOfMemoryTest, ArgumentShardIsNamed) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
ENTRY %e (x: f32[1,64]) -> f32[1,64] {
  %x = f32[1,64]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT %n = f32[1,64]{1,0} negate(%x), sharding={devices=[2,1]<=[2]}
}
)");
  const std::vector<Literal> arguments = {Filled({2, 64}, 1)};  // allocated before the fault
  const InjectedFault fault({128, 0});
  const std::string error = ErrorOf([&] { RunSpmd(*module, arguments, {}); });
  EXPECT_TRUE(std::regex_search(error, std::regex("^device [01]: out of memory: cannot allocate 256 bytes for "
                                                  "f32\\[1,64\\] \\(the device's shard of parameter 0, ")))
      << error;
}

}  // namespace
}  // namespace gspmd
