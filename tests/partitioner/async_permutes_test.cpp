// Tests of ConvertPermutesToAsync (partitioner/async_permutes.h): which permutes become
// collective-permute-start / -done pairs, where the two halves go, and that the programs still
// compute the same bits; PartitionModule applies it to windowed einsum loops only.
#include "partitioner/async_permutes.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "partition_test_harness.h"
#include "simulate/chip_spec.h"
#include "simulate/simulator.h"
#include "simulate/topology.h"

namespace gspmd::partition_test {
namespace {

// A loop whose body passes a window round a ring of 4 devices while a dot uses it (what
// windowed einsum emits), and, outside the loop, one more permute.
constexpr char kLoop[] = R"(HloModule loop, num_partitions=4

cond {
  s = (s32[], f32[2,8], f32[8,4], f32[2,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  limit = s32[] constant(4)
  ROOT lt = pred[] compare(i, limit), direction=LT
}

body {
  s = (s32[], f32[2,8], f32[8,4], f32[2,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  a = f32[2,8] get-tuple-element(s), index=1
  w = f32[8,4] get-tuple-element(s), index=2
  acc = f32[2,4] get-tuple-element(s), index=3
  next = f32[2,8] collective-permute(a), channel_id=1, source_target_pairs={{0,3},{1,0},{2,1},{3,2}}
  d = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  acc2 = f32[2,4] add(acc, d)
  ROOT t = (s32[], f32[2,8], f32[8,4], f32[2,4]) tuple(i2, next, w, acc2)
}

ENTRY main {
  x = f32[2,8] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[8,4] parameter(1), sharding={replicated}
  shifted = f32[2,8] collective-permute(x), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  zero = f32[] constant(0)
  acc = f32[2,4] broadcast(zero), dimensions={}
  i = s32[] constant(0)
  init = (s32[], f32[2,8], f32[8,4], f32[2,4]) tuple(i, shifted, w, acc)
  loop = (s32[], f32[2,8], f32[8,4], f32[2,4]) while(init), condition=cond, body=body
  ROOT out = f32[2,4] get-tuple-element(loop), index=3, sharding={devices=[4,1]<=[4]}
}
)";

// The position of each named instruction in its computation's order.
size_t Position(const Computation& computation, const std::string& name) {
  for (size_t i = 0; i < computation.instructions().size(); ++i)
    if (computation.instructions()[i]->name() == name) return i;
  ADD_FAILURE() << "no " << name << " in " << computation.name();
  return 0;
}

const Instruction* OnlyWith(const Computation& computation, Opcode opcode) {
  const Instruction* found = nullptr;
  for (const auto& instruction : computation.instructions())
    if (instruction->opcode() == opcode) {
      EXPECT_EQ(found, nullptr) << "two " << OpcodeName(opcode) << " in " << computation.name();
      found = instruction.get();
    }
  EXPECT_NE(found, nullptr) << "no " << OpcodeName(opcode) << " in " << computation.name();
  return found;
}

std::vector<Literal> Inputs() {
  std::vector<Literal> inputs;
  for (const auto& dims : std::vector<std::vector<int64_t>>{{8, 8}, {8, 4}}) {
    Literal literal(Shape(ElementType::kF32, dims));
    for (int64_t e = 0; e < literal.element_count(); ++e)
      literal.SetFromDouble(e, static_cast<double>((e * 37) % 23) / 3.0 - 3.5);
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

std::vector<Literal> RunLoop(const Module& module) { return RunSpmd(module, Inputs(), SpmdRunOptions{}); }

TEST(AsyncPermutes, LoopPermuteStartsEarlyAndFinishesBeforeItsFirstUse) {
  std::unique_ptr<Module> module = ParseModule(kLoop);
  const std::vector<Literal> blocking = RunLoop(*module);
  EXPECT_EQ(ConvertPermutesToAsync(*module, AsyncPermuteScope::kWindowedLoops), 1);
  VerifyModule(*module);
  const Computation& body = *module->computations()[1];
  ASSERT_EQ(body.name(), "body");
  EXPECT_EQ(CountOf(*module, Opcode::kCollectivePermute), 1);  // the entry's stays
  const Instruction* start = OnlyWith(body, Opcode::kCollectivePermuteStart);
  const Instruction* done = OnlyWith(body, Opcode::kCollectivePermuteDone);
  ASSERT_TRUE(start && done);
  EXPECT_EQ(start->operand(0)->name(), "a");
  EXPECT_EQ(start->channel_id, 1);
  EXPECT_EQ(start->source_target_pairs().size(), 4u);
  EXPECT_EQ(start->shape().ToString(false), "(f32[2,8], f32[2,8], u32[], u32[])");
  EXPECT_EQ(done->operand(0), start);
  EXPECT_EQ(done->users().size(), 1u);
  EXPECT_EQ(done->users()[0], body.root());
  // Right after its operand; the dot and the add in between; the done right before the tuple.
  EXPECT_EQ(Position(body, start->name()), Position(body, "a") + 1);
  EXPECT_LT(Position(body, start->name()), Position(body, "d"));
  EXPECT_LT(Position(body, "acc2"), Position(body, done->name()));
  EXPECT_EQ(Position(body, done->name()) + 1, Position(body, "t"));
  // The text reads back as it prints, and the program computes the same bits.
  const std::string text = PrintModule(*module);
  std::unique_ptr<Module> reread = ParseModule(text);
  EXPECT_EQ(PrintModule(*reread), text);
  const std::vector<Literal> async = RunLoop(*reread);
  ASSERT_EQ(async.size(), 1u);
  EXPECT_TRUE(async[0].BitwiseEquals(blocking[0])) << text;
}

TEST(AsyncPermutes, EverywhereTakesStraightLinePermutesToo) {
  std::unique_ptr<Module> module = ParseModule(kLoop);
  const std::vector<Literal> blocking = RunLoop(*module);
  EXPECT_EQ(ConvertPermutesToAsync(*module, AsyncPermuteScope::kEverywhere), 2);
  VerifyModule(*module);
  EXPECT_EQ(CountOf(*module, Opcode::kCollectivePermute), 0);
  EXPECT_EQ(CountOf(*module, Opcode::kCollectivePermuteStart), 2);
  EXPECT_EQ(CountOf(*module, Opcode::kCollectivePermuteDone), 2);
  // In the entry the done goes right before the tuple that uses it, after the broadcast.
  const Computation& entry = *module->entry();
  const Instruction* done = OnlyWith(entry, Opcode::kCollectivePermuteDone);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(Position(entry, done->name()) + 1, Position(entry, "init"));
  EXPECT_TRUE(RunLoop(*module)[0].BitwiseEquals(blocking[0]));
}

// Beside a windowed loop, a permute with a dot between its operand and its first use (the
// bidirectional loop's first windows, leaving while the peeled first dot runs) goes async too;
// without the loop, or without the dot in between, it stays.
TEST(AsyncPermutes, PermutesBesideTheLoopGoAsyncWhenADotOverlapsThem) {
  std::string text = kLoop;
  const std::string zero = "  zero = f32[] constant(0)\n";
  text.replace(text.find(zero), zero.size(),
               zero + "  early = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  const std::string root = "ROOT out = f32[2,4] get-tuple-element(loop), index=3";
  text.replace(text.find(root), root.size(),
               "last = f32[2,4] get-tuple-element(loop), index=3\n  ROOT out = f32[2,4] add(last, early)");
  std::unique_ptr<Module> module = ParseModule(text);
  const std::vector<Literal> blocking = RunLoop(*module);
  EXPECT_EQ(ConvertPermutesToAsync(*module, AsyncPermuteScope::kWindowedLoops), 2);
  VerifyModule(*module);
  const Computation& entry = *module->entry();
  const Instruction* start = OnlyWith(entry, Opcode::kCollectivePermuteStart);
  const Instruction* done = OnlyWith(entry, Opcode::kCollectivePermuteDone);
  ASSERT_TRUE(start && done);
  EXPECT_EQ(Position(entry, start->name()), Position(entry, "x") + 1);
  EXPECT_LT(Position(entry, start->name()), Position(entry, "early"));
  EXPECT_LT(Position(entry, "early"), Position(entry, done->name()));
  EXPECT_TRUE(RunLoop(*module)[0].BitwiseEquals(blocking[0]));

  // The same entry without the loop: nothing to do.
  std::unique_ptr<Module> straight = ParseModule(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[2,8] parameter(0), sharding={devices=[2,1]<=[2]}
  w = f32[8,4] parameter(1), sharding={replicated}
  p = f32[2,8] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}
  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[2,4] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[2,4] add(d, e), sharding={devices=[2,1]<=[2]}
}
)");
  EXPECT_EQ(ConvertPermutesToAsync(*straight, AsyncPermuteScope::kWindowedLoops), 0);
  EXPECT_EQ(ConvertPermutesToAsync(*straight, AsyncPermuteScope::kEverywhere), 1);
}

TEST(AsyncPermutes, LoopsWithoutADotKeepTheirPermutes) {
  std::string text = kLoop;
  const std::string dot = "d = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  text.replace(text.find(dot), dot.size(), "d = f32[2,4] slice(w), slice={[0:2], [0:4]}");
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_EQ(ConvertPermutesToAsync(*module, AsyncPermuteScope::kWindowedLoops), 0);
  EXPECT_EQ(PrintModule(*module), PrintModule(*ParseModule(text)));
}

// A permute that is its computation's root, and one nothing uses.
TEST(AsyncPermutes, RootAndUnusedPermutes) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4] parameter(0), sharding={replicated}
  unused = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{0,1}}
  n = f32[4] negate(p)
  ROOT r = f32[4] collective-permute(n), channel_id=2, source_target_pairs={{0,1},{1,0}}, sharding={replicated}
}
)");
  EXPECT_EQ(ConvertPermutesToAsync(*module), 2);
  VerifyModule(*module);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->opcode(), Opcode::kCollectivePermuteDone);
  ASSERT_TRUE(root->sharding().has_value());
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "n");
  Literal p = Literal::FromDoubles(Shape(ElementType::kF32, {4}), std::vector<double>{1, 2, 3, 4});
  std::vector<Literal> out = RunSpmd(*module, std::span<const Literal>(&p, 1), SpmdRunOptions{});
  EXPECT_EQ(out[0].GetAsDouble(3), -4.0);
}

// `gspmd report` counts each pair once, as the permute it replaces; the simulator prices it as
// that permute (launched at the start, ready at the done), so nothing changes in either.
TEST(AsyncPermutes, ReportAndSimulatorCountAPairAsItsPermute) {
  std::unique_ptr<Module> blocking = ParseModule(kLoop);
  std::unique_ptr<Module> async = ParseModule(kLoop);
  ASSERT_EQ(ConvertPermutesToAsync(*async), 2);
  const CommReport before = AnalyzeCommunication(*blocking), after = AnalyzeCommunication(*async);
  ASSERT_EQ(after.by_kind.size(), 1u);
  EXPECT_EQ(after.by_kind.begin()->first, "collective-permute");
  EXPECT_EQ(after.by_kind.begin()->second.count, 5);  // the entry's, and the loop's 4 trips
  EXPECT_EQ(after.by_kind.begin()->second.count, before.by_kind.at("collective-permute").count);
  EXPECT_EQ(after.comm_bytes_per_device, before.comm_bytes_per_device);
  // The buffer in flight is live from the start to the done.
  EXPECT_GE(after.peak_bytes_per_device, before.peak_bytes_per_device);

  const simulate::ChipSpec chip = simulate::LoadChipSpec("tpu-v3");
  const simulate::Topology topology = simulate::Topology::Build(chip, 4);
  const simulate::SimulationReport sync_report = simulate::Simulate(*blocking, chip, topology);
  const simulate::SimulationReport async_report = simulate::Simulate(*async, chip, topology);
  ASSERT_EQ(async_report.comm_by_kind.count("collective-permute"), 1u);
  const simulate::KindTotals& sync_permutes = sync_report.comm_by_kind.at("collective-permute");
  const simulate::KindTotals& async_permutes = async_report.comm_by_kind.at("collective-permute");
  EXPECT_EQ(async_permutes.count, sync_permutes.count);
  EXPECT_DOUBLE_EQ(async_permutes.bytes, sync_permutes.bytes);
  EXPECT_DOUBLE_EQ(async_permutes.time_s, sync_permutes.time_s);
  EXPECT_GT(async_permutes.time_s, 0);
  EXPECT_DOUBLE_EQ(async_permutes.exposed_s, sync_permutes.exposed_s);
  EXPECT_DOUBLE_EQ(async_report.step_time_s, sync_report.step_time_s);
  EXPECT_DOUBLE_EQ(async_report.compute_s, sync_report.compute_s);
}

// ---- In PartitionModule ----

// Bidirectional loops where the ring allows, so that both permutes of a trip are in flight.
Partitioned PartitionWindowed(const std::string& hlo, WindowedEinsumMode mode) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionOptions options;
  options.windowed_einsum.mode = mode;
  options.windowed_einsum.direction = WindowedEinsumDirection::kBoth;
  PartitionResult result = PartitionModule(*out.original, options);
  out.text = PrintModule(*result.module);
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

// A dot whose LHS rows are split over n devices and whose result is replicated: windowed,
// its window passes round the ring.
std::string FreeDimDot(int64_t n) {
  return StrCat("HloModule m, num_partitions=", n, "\nENTRY e {\n  %x = f32[", 2 * n,
                ",4] parameter(0), sharding={devices=[", n, ",1]<=[", n,
                "]}\n  %w = f32[4,16] parameter(1), sharding={replicated}\n  ROOT %d = f32[", 2 * n,
                ",16] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n}\n");
}

TEST(AsyncPermutes, WindowedLoopsRunTheirPermutesAsynchronously) {
  for (int64_t n : {2, 4, 8}) {
    SCOPED_TRACE(n);
    Partitioned off = PartitionWindowed(FreeDimDot(n), WindowedEinsumMode::kOff);
    Partitioned always = PartitionWindowed(FreeDimDot(n), WindowedEinsumMode::kAlways);
    EXPECT_EQ(CountOf(off, Opcode::kCollectivePermuteStart), 0) << off.text;
    // No blocking permute anywhere: the bidirectional loop's first windows leave while its
    // peeled first dot runs.
    EXPECT_EQ(CountOf(always, Opcode::kCollectivePermute), 0) << always.text;
    std::vector<const Instruction*> loops = InstructionsWith(*always.module, Opcode::kWhile);
    ASSERT_EQ(loops.size(), 1u) << always.text;
    const Computation& body = *loops[0]->while_body();
    // One permute each way round the ring (bidirectional from 4 devices), each a start/done
    // pair with the loop's dots between its halves: the dots run while the permutes are in flight.
    std::vector<size_t> starts, dones, dots;
    for (size_t i = 0; i < body.instructions().size(); ++i) {
      const Opcode opcode = body.instructions()[i]->opcode();
      EXPECT_NE(opcode, Opcode::kCollectivePermute) << always.text;
      if (opcode == Opcode::kCollectivePermuteStart) starts.push_back(i);
      if (opcode == Opcode::kCollectivePermuteDone) dones.push_back(i);
      if (opcode == Opcode::kDot) dots.push_back(i);
    }
    EXPECT_EQ(starts.size(), n >= 4 ? 2u : 1u) << always.text;
    EXPECT_EQ(dones.size(), starts.size()) << always.text;
    EXPECT_EQ(CollectivesIn(body), static_cast<int64_t>(starts.size())) << always.text;
    ASSERT_FALSE(dots.empty()) << always.text;
    for (size_t start : starts) EXPECT_LT(start, dots.front()) << always.text;
    for (size_t done : dones) EXPECT_GT(done, dots.back()) << always.text;

    std::vector<Literal> inputs = {Values(always.original->entry()->parameter(0)->shape(), 0),
                                   Values(always.original->entry()->parameter(1)->shape(), 1)};
    std::optional<std::vector<Literal>> expected = RunPartitioned(off, inputs);
    std::optional<std::vector<Literal>> actual = RunPartitioned(always, inputs);
    ASSERT_TRUE(expected && actual);
    EXPECT_TRUE((*actual)[0].BitwiseEquals((*expected)[0])) << always.text;
  }
}

}  // namespace
}  // namespace gspmd::partition_test
