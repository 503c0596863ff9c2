// The asynchronous collective-permute (collective-permute-start / -done): its text form, the
// verifier's checks, the interpreter on one device, the threads runtime on N devices (the same
// bits as the blocking permute, also with several permutes in flight finished in any order),
// and the errors: a start no done finishes, devices that start different permutes, a source
// that never starts. LocalCommunicator's start does not wait for anybody.
#include <cstdint>
#include <exception>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/literal.h"
#include "ir/verifier.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/async_permute_program.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

using async_permute_test::RingInputs;
using async_permute_test::RingProgram;

std::vector<Literal> RunRing(const std::string& text, int64_t n) {
  std::unique_ptr<Module> module = ParseModule(text);
  VerifyModule(*module);
  std::vector<Literal> inputs = RingInputs(n);
  return RunSpmd(*module, inputs, SpmdRunOptions{});
}

TEST(AsyncPermuteTest, TextRoundTripsWithTypedAttributes) {
  const std::string text = RingProgram(4, /*async=*/true);
  std::unique_ptr<Module> module = ParseModule(text);
  VerifyModule(*module);
  const Instruction* start = module->computations()[1]->FindInstruction("sa");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kCollectivePermuteStart);
  EXPECT_EQ(start->channel_id, 1);
  ASSERT_EQ(start->source_target_pairs().size(), 4u);
  EXPECT_EQ(start->source_target_pairs()[0].source, 0);
  EXPECT_EQ(start->source_target_pairs()[0].target, 3);
  EXPECT_TRUE(start->extra_attributes().empty());
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("%sa = (f32[2,8], f32[2,8], u32[], u32[]) collective-permute-start(%a), channel_id=1, "
                         "source_target_pairs={{0,3},{1,0},{2,1},{3,2}}\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("%na = f32[2,8] collective-permute-done(%sa)\n"), std::string::npos) << printed;
  EXPECT_EQ(PrintModule(*ParseModule(printed)), printed);
}

TEST(AsyncPermuteTest, VerifierChecksThePairsShapes) {
  auto error_of = [](const std::string& body) {
    try {
      std::unique_ptr<Module> module = ParseModule(StrCat("HloModule m, num_partitions=2\nENTRY e {\n", body, "}\n"));
      VerifyModule(*module);
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  // XLA's forms: two u32 contexts, or none.
  EXPECT_EQ(error_of("  p = f32[4] parameter(0)\n"
                     "  s = (f32[4], f32[4]) collective-permute-start(p), channel_id=1, source_target_pairs={{0,1}}\n"
                     "  ROOT d = f32[4] collective-permute-done(s)\n"),
            "");
  EXPECT_NE(error_of("  p = f32[4] parameter(0)\n"
                     "  s = (f32[4], f32[5], u32[], u32[]) collective-permute-start(p), channel_id=1, "
                     "source_target_pairs={{0,1}}\n"
                     "  ROOT d = f32[5] collective-permute-done(s)\n")
                .find("must be (f32[4], f32[4]) followed by u32[] contexts"),
            std::string::npos);
  EXPECT_NE(error_of("  p = f32[4] parameter(0)\n"
                     "  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), channel_id=1, "
                     "source_target_pairs={{0,1}}\n"
                     "  ROOT d = f32[5] collective-permute-done(s)\n")
                .find("does not match f32[4]"),
            std::string::npos);
  EXPECT_NE(error_of("  p = f32[4] parameter(0)\n"
                     "  t = (f32[4], f32[4], u32[], u32[]) custom-call(p), custom_call_target=\"x\"\n"
                     "  ROOT d = f32[4] collective-permute-done(t)\n")
                .find("expected the collective-permute-start it finishes"),
            std::string::npos);
  EXPECT_NE(error_of("  p = f32[4] parameter(0)\n"
                     "  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), channel_id=1, "
                     "source_target_pairs={{0,1},{1,1}}\n"
                     "  ROOT d = f32[4] collective-permute-done(s)\n")
                .find("appears in two pairs"),
            std::string::npos);
}

// One device, no communicator: start + done is the ordinary permute.
TEST(AsyncPermuteTest, InterpreterOnOneDeviceIsThePermute) {
  std::unique_ptr<Module> module = ParseModule(
      "HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n"
      "  s = (f32[3], f32[3], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,0}}\n"
      "  z = (f32[3], f32[3], u32[], u32[]) collective-permute-start(p), source_target_pairs={}\n"
      "  n = f32[3] negate(p)\n  d = f32[3] collective-permute-done(s)\n"
      "  dz = f32[3] collective-permute-done(z)\n  ROOT t = (f32[3], f32[3], f32[3]) tuple(d, dz, n)\n}\n");
  Literal p = Literal::FromDoubles(Shape(ElementType::kF32, {3}), std::vector<double>{1, 2, 3});
  std::vector<Literal> out = FlattenTuple(EvaluateModule(*module, std::span<const Literal>(&p, 1)));
  EXPECT_TRUE(out[0].BitwiseEquals(p));
  EXPECT_EQ(out[1].GetAsDouble(2), 0.0);  // no pair targets the device: zeros
  EXPECT_EQ(out[2].GetAsDouble(0), -1.0);
}

TEST(AsyncPermuteTest, RingLoopIsBitIdenticalToBlockingPermutes) {
  for (int64_t n : {1, 2, 3, 4, 8}) {
    SCOPED_TRACE(n);
    std::vector<Literal> sync = RunRing(RingProgram(n, false), n);
    std::vector<Literal> async = RunRing(RingProgram(n, true), n);
    ASSERT_EQ(sync.size(), 1u);
    ASSERT_EQ(async.size(), 1u);
    EXPECT_TRUE(async[0].BitwiseEquals(sync[0]));
    // Every window visited every device: the result is not the accumulator's start.
    EXPECT_NE(async[0].GetAsDouble(0), 0.0);
  }
}

TEST(AsyncPermuteTest, StartWithoutDoneIsAnErrorAtTheEnd) {
  std::unique_ptr<Module> module = ParseModule(
      "HloModule m, num_partitions=2\nENTRY e {\n  p = f32[4] parameter(0), sharding={replicated}\n"
      "  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), channel_id=1, "
      "source_target_pairs={{0,1},{1,0}}\n"
      "  ROOT t = ((f32[4], f32[4], u32[], u32[]), f32[4]) tuple(s, p), sharding={replicated}\n}\n");
  Literal p(Shape(ElementType::kF32, {4}));
  try {
    RunSpmd(*module, std::span<const Literal>(&p, 1), SpmdRunOptions{});
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("%s"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("in flight"), std::string::npos) << error.what();
  }
}

TEST(AsyncPermuteTest, ReadingTheStartsBuffersIsAnError) {
  std::unique_ptr<Module> module = ParseModule(
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,0}}\n"
      "  g = f32[4] get-tuple-element(s), index=1\n  d = f32[4] collective-permute-done(s)\n"
      "  ROOT a = f32[4] add(g, d)\n}\n");
  Literal p(Shape(ElementType::kF32, {4}));
  try {
    EvaluateModule(*module, std::span<const Literal>(&p, 1));
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("holds no data"), std::string::npos) << error.what();
  }
}

// ---- LocalCommunicator directly ----

Literal Vector(std::vector<double> values) {
  return Literal::FromDoubles(Shape(ElementType::kF32, {static_cast<int64_t>(values.size())}), values);
}

// One thread plays every device: a start returns before the receiver has done anything, and
// permutes finish in any order.
TEST(AsyncPermuteTest, StartsDoNotWaitAndFinishInAnyOrder) {
  LocalCommunicator communicator(3);
  const std::vector<SourceTargetPair> ring = {{0, 1}, {1, 2}, {2, 0}};
  const std::vector<SourceTargetPair> to_zero = {{2, 0}};
  std::vector<int64_t> first(3), second(3);
  for (int64_t d = 0; d < 3; ++d) first[d] = communicator.StartCollectivePermute(d, ring, Vector({1.0 * d, 10.0 * d}));
  for (int64_t d = 0; d < 3; ++d) second[d] = communicator.StartCollectivePermute(d, to_zero, Vector({100.0 + d, 0}));
  for (int64_t d = 2; d >= 0; --d) {
    bool received = false;
    Literal late = communicator.FinishCollectivePermute(d, second[d], &received);
    EXPECT_EQ(received, d == 0);
    EXPECT_EQ(late.GetAsDouble(0), d == 0 ? 102.0 : 0.0);
    Literal early = communicator.FinishCollectivePermute(d, first[d], &received);
    EXPECT_TRUE(received);
    EXPECT_EQ(early.GetAsDouble(1), 10.0 * ((d + 2) % 3));
  }
}

// The outcome on each device thread of body(d): "" when it ran, else its error.
std::vector<std::string> OnThreads(LocalCommunicator& communicator, const std::function<void(int64_t)>& body) {
  const int64_t n = communicator.num_devices();
  std::vector<std::string> outcomes(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d)
    threads.emplace_back([&, d] {
      try {
        body(d);
        communicator.DeviceFinished(d);
      } catch (const CommunicatorAborted&) {
        outcomes[static_cast<size_t>(d)] = "aborted";
      } catch (const UserError& error) {
        outcomes[static_cast<size_t>(d)] = error.what();
        communicator.Abort();
      }
    });
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

TEST(AsyncPermuteTest, DevicesThatStartDifferentPermutesGetAnError) {
  LocalCommunicator communicator(2);
  std::vector<std::string> outcomes = OnThreads(communicator, [&](int64_t d) {
    const std::vector<SourceTargetPair> pairs =
        d == 0 ? std::vector<SourceTargetPair>{{1, 0}} : std::vector<SourceTargetPair>{{1, 0}, {0, 1}};
    const int64_t handle = communicator.StartCollectivePermute(d, pairs, Vector({1, 2}));
    communicator.FinishCollectivePermute(d, handle, nullptr);
  });
  const std::string errors = outcomes[0] + outcomes[1];
  EXPECT_NE(errors.find("started different collective-permutes"), std::string::npos) << errors;
}

TEST(AsyncPermuteTest, SizesThatDifferGetAnError) {
  LocalCommunicator communicator(2);
  std::vector<std::string> outcomes = OnThreads(communicator, [&](int64_t d) {
    const std::vector<SourceTargetPair> pairs = {{0, 1}, {1, 0}};
    const int64_t handle = communicator.StartCollectivePermute(d, pairs, d == 0 ? Vector({1, 2}) : Vector({1, 2, 3}));
    communicator.FinishCollectivePermute(d, handle, nullptr);
  });
  const std::string errors = outcomes[0] + outcomes[1];
  EXPECT_NE(errors.find("bytes but device"), std::string::npos) << errors;
}

// A source that finishes its program without starting the permute: an error, not a hang.
TEST(AsyncPermuteTest, SourceThatNeverStartsIsAnErrorNotAHang) {
  LocalCommunicator communicator(2);
  std::vector<std::string> outcomes = OnThreads(communicator, [&](int64_t d) {
    if (d == 1) return;
    const int64_t handle = communicator.StartCollectivePermute(d, std::vector<SourceTargetPair>{{1, 0}}, Vector({1}));
    communicator.FinishCollectivePermute(d, handle, nullptr);
  });
  EXPECT_NE(outcomes[0].find("waits for device 1, which finished its program without starting it"),
            std::string::npos)
      << outcomes[0];
  EXPECT_EQ(outcomes[1], "");
}

// An abort (another device failed) releases a device waiting for its permute.
TEST(AsyncPermuteTest, AbortReleasesAWaitingFinish) {
  LocalCommunicator communicator(2);
  std::vector<std::string> outcomes = OnThreads(communicator, [&](int64_t d) {
    if (d == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      GSPMD_USER_ERROR("device 1 fails");
    }
    const int64_t handle = communicator.StartCollectivePermute(d, std::vector<SourceTargetPair>{{1, 0}}, Vector({1}));
    communicator.FinishCollectivePermute(d, handle, nullptr);
  });
  EXPECT_EQ(outcomes[0], "aborted");
  EXPECT_EQ(outcomes[1], "device 1 fails");
}

}  // namespace
}  // namespace gspmd
