// Tests of Simulate on small per-device programs: step time from the roofline, overlap,
// loops, precision and re-typing, utilization, memory split and aliasing, the breakdown; and
// on the corpus, that the byte counts are `gspmd report`'s.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "analysis/comm_report.h"
#include "partitioner/partitioner.h"
#include "simulate/simulator.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd::simulate {
namespace {

namespace fs = std::filesystem;

const char* kAdd = "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                   "  ROOT %s = f32[] add(%a, %b)\n}\n\n";

std::unique_ptr<Module> PerDevice(int64_t partitions, const std::string& body, const std::string& attributes = "") {
  return ParseModule("HloModule m, num_partitions=" + std::to_string(partitions) + attributes + "\n\n" + kAdd +
                     "ENTRY %main_spmd {\n" + body + "}\n");
}

SimulationReport SimulateOn(const Module& module, const std::string& chip_name = "tpu-v3", const SimulateOptions& options = {}) {
  const ChipSpec chip = LoadChipSpec(chip_name);
  return Simulate(module, chip, Topology::Build(chip, module.num_partitions()), options);
}

TEST(SimulatorTest, ADotTakesItsRooflineTime) {
  // 2 x 1024 x 1024 x 1024 FLOPs, f32 at DEFAULT: one bf16 pass at 61.5e12 x 0.85, plus the
  // kernel's fixed cost; the 12 MiB it reads and writes take less at 450 GB/s x 0.85.
  auto module = PerDevice(1, R"(  %x = f32[1024,1024]{1,0} parameter(0)
  %w = f32[1024,1024]{1,0} parameter(1)
  ROOT %d = f32[1024,1024]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/mlp/dot_general"}
)");
  const SimulationReport report = SimulateOn(*module);
  const double overhead = LoadChipSpec("tpu-v3").op_overhead_s;
  const double flops = 2.0 * 1024 * 1024 * 1024;
  EXPECT_EQ(report.matrix_flops, flops);
  EXPECT_EQ(report.vector_flops, 0);
  EXPECT_EQ(report.hbm_bytes, 3.0 * 4 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(report.compute_s, overhead + flops / (61.5e12 * 0.85));
  EXPECT_DOUBLE_EQ(report.step_time_s, report.compute_s);
  EXPECT_DOUBLE_EQ(report.mfu, flops / (report.step_time_s * 61.5e12));
  EXPECT_EQ(report.peak_compute_type, "bf16");
  ASSERT_EQ(report.breakdown.size(), 1u);
  EXPECT_EQ(report.breakdown[0].key, "mlp/dot_general");

  // HIGHEST: six passes. Small dims leave the 128x128 tiles partly empty.
  auto highest = PerDevice(1, R"(  %x = f32[1024,1024]{1,0} parameter(0)
  %w = f32[1024,1024]{1,0} parameter(1)
  ROOT %d = f32[1024,1024]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
)");
  EXPECT_DOUBLE_EQ(SimulateOn(*highest).compute_s, overhead + 6 * flops / (61.5e12 * 0.85));
  auto narrow = PerDevice(1, R"(  %x = bf16[65536,64]{1,0} parameter(0)
  %w = bf16[64,64]{1,0} parameter(1)
  ROOT %d = bf16[65536,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  const double narrow_flops = 2.0 * 65536 * 64 * 64;
  const double matrix_s = narrow_flops / (61.5e12 * 0.85 * 0.25);  // k = n = 64 of 128
  const double memory_s = (65536.0 * 64 * 2 * 2 + 64 * 64 * 2) / (450e9 * 0.85);
  EXPECT_DOUBLE_EQ(SimulateOn(*narrow).compute_s, overhead + std::max(matrix_s, memory_s));
}

TEST(SimulatorTest, CommunicationOverlapsIndependentCompute) {
  auto module = PerDevice(8, R"(  %g = f32[4194304]{0} parameter(0)
  %x = f32[2048,2048]{1,0} parameter(1)
  %r = f32[4194304]{0} all-reduce(%g), replica_groups={}, to_apply=%add
  %d = f32[2048,2048]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[4194304]{0}, f32[2048,2048]{1,0}) tuple(%r, %d)
)");
  const SimulationReport report = SimulateOn(*module);
  ASSERT_EQ(report.collectives.size(), 1u);
  EXPECT_GT(report.comm_s, 0);
  EXPECT_DOUBLE_EQ(report.step_time_no_overlap_s, report.compute_s + report.comm_s);
  EXPECT_DOUBLE_EQ(report.step_time_s, std::max(report.compute_s, report.comm_s));

  // A collective that needs the dot's result waits for it.
  auto dependent = PerDevice(8, R"(  %x = f32[2048,2048]{1,0} parameter(0)
  %d = f32[2048,2048]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r = f32[2048,2048]{1,0} all-reduce(%d), replica_groups={}, to_apply=%add
)");
  const SimulationReport serial = SimulateOn(*dependent);
  EXPECT_DOUBLE_EQ(serial.step_time_s, serial.step_time_no_overlap_s);
}

TEST(SimulatorTest, LoopBodiesCountTripCountTimes) {
  // The loop computations go before the entry.
  const std::string text = "HloModule m, num_partitions=8\n\n" + std::string(kAdd) + R"(%cond (p: (s32[], f32[256,256])) -> pred[] {
  %p = (s32[], f32[256,256]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[256,256])) -> (s32[], f32[256,256]) {
  %q = (s32[], f32[256,256]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %v = f32[256,256]{1,0} get-tuple-element(%q), index=1
  %d = f32[256,256]{1,0} dot(%v, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r = f32[256,256]{1,0} all-reduce(%d), replica_groups={}, to_apply=%add
  ROOT %t = (s32[], f32[256,256]{1,0}) tuple(%next, %r)
}

ENTRY %main_spmd {
  %x = f32[256,256]{1,0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[256,256]{1,0}) tuple(%zero, %x)
  ROOT %w = (s32[], f32[256,256]{1,0}) while(%init), condition=%cond, body=%body
}
)";
  auto loop = ParseModule(text);
  const SimulationReport report = SimulateOn(*loop);
  EXPECT_EQ(report.matrix_flops, 5 * 2.0 * 256 * 256 * 256);
  ASSERT_EQ(report.collectives.size(), 1u);
  EXPECT_EQ(report.collectives[0].executions, 5);
  EXPECT_EQ(report.comm_by_kind.at("all-reduce").count, 5);
  EXPECT_EQ(report.comm.by_kind.at("all-reduce").count, 5);
  EXPECT_DOUBLE_EQ(report.comm_s, 5 * report.collectives[0].estimate.time_s);
  // Inside the body the all-reduce needs the dot: nothing overlaps.
  EXPECT_NEAR(report.step_time_s, report.step_time_no_overlap_s, 1e-12);
}

// A windowed einsum as the partitioner writes it, by hand: 8 trips over 8 devices, each a
// partial dot of the window held (f32[512,2048]) with %w, written into the result's rows,
// while a collective-permute passes the window to the previous device (ring in device order).
std::string WindowedLoop(int64_t n) {
  const std::string window = "f32[512,2048]{1,0}", w = StrCat("f32[2048,", n, "]{1,0}"),
                    part = StrCat("f32[512,", n, "]{1,0}"), result = StrCat("f32[4096,", n, "]{1,0}");
  const std::string state = StrCat("(s32[], ", window, ", ", w, ", ", result, ")");
  return StrCat("HloModule m, num_partitions=8\n\n", kAdd, "%cond (p: ", state, ") -> pred[] {\n  %p = ", state,
                " parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n  %n = s32[] constant(8)\n"
                "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n",
                "%body (q: ", state, ") -> ", state, " {\n  %q = ", state, " parameter(0)\n",
                "  %i = s32[] get-tuple-element(%q), index=0\n  %win = ", window, " get-tuple-element(%q), index=1\n",
                "  %w = ", w, " get-tuple-element(%q), index=2\n  %acc = ", result, " get-tuple-element(%q), index=3\n",
                "  %one = s32[] constant(1)\n  %next = s32[] add(%i, %one)\n",
                "  %d = ", part, " dot(%win, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
                "  %rows = s32[] constant(512)\n  %off = s32[] multiply(%i, %rows)\n  %zero = s32[] constant(0)\n",
                "  %upd = ", result, " dynamic-update-slice(%acc, %d, %off, %zero)\n",
                "  %recv = ", window, " collective-permute(%win), "
                "source_target_pairs={{1,0},{2,1},{3,2},{4,3},{5,4},{6,5},{7,6},{0,7}}\n",
                "  ROOT %t = ", state, " tuple(%next, %recv, %w, %upd)\n}\n\n",
                "ENTRY %main_spmd {\n  %x = ", window, " parameter(0)\n  %w = ", w, " parameter(1)\n  %r = ", result,
                " parameter(2)\n  %zero = s32[] constant(0)\n  %init = ", state, " tuple(%zero, %x, %w, %r)\n",
                "  %loop = ", state, " while(%init), condition=%cond, body=%body\n",
                "  ROOT %out = ", result, " get-tuple-element(%loop), index=3\n}\n");
}

// The loop's permutes overlap the partial dot of their own trip: hidden when the dot is
// longer, exposed by the difference (latency included) when it is shorter. The all-gather the
// loop replaces feeds its dot and is exposed whole.
TEST(SimulatorTest, WindowedLoopPermutesOverlapTheirTripsDot) {
  SimulateOptions by_opcode;
  by_opcode.breakdown = "opcode";
  auto kernel_seconds = [](const SimulationReport& report, const std::string& opcode) {
    for (const BreakdownEntry& entry : report.breakdown)
      if (entry.key == opcode) return entry.compute_s;
    return 0.0;
  };

  // f32[512,2048] x f32[2048,4096]: 164 us per trip, written into the result in place (one
  // kernel with the dynamic-update-slice); the 4 MiB window 53.5 us.
  auto long_dots = ParseModule(WindowedLoop(4096));
  const SimulationReport hidden = SimulateOn(*long_dots, "tpu-v3", by_opcode);
  const KindTotals& permutes = hidden.comm_by_kind.at("collective-permute");
  ASSERT_EQ(hidden.collectives.size(), 1u);
  const CollectiveEstimate& permute = hidden.collectives[0].estimate;
  EXPECT_EQ(permutes.count, 8);
  EXPECT_GT(permute.latency_s, 0);
  EXPECT_DOUBLE_EQ(permutes.time_s, 8 * permute.time_s);  // each trip's latency counted
  EXPECT_DOUBLE_EQ(permute.bandwidth_s, 512.0 * 2048 * 4 / 1e11 / 0.83);  // one message per link
  EXPECT_EQ(kernel_seconds(hidden, "dot"), 0);
  EXPECT_LT(permute.time_s, kernel_seconds(hidden, "dynamic-update-slice") / 8);
  EXPECT_EQ(permutes.exposed_s, 0);
  EXPECT_EQ(hidden.exposed_comm_s, 0);
  EXPECT_NEAR(hidden.step_time_s, hidden.compute_s, 1e-12);
  EXPECT_NEAR(hidden.step_time_no_overlap_s, hidden.compute_s + permutes.time_s, 1e-12);

  // f32[512,2048] x f32[2048,128]: the dot and the body's other kernels take less than the
  // permute, which the trip then waits for.
  auto short_dots = ParseModule(WindowedLoop(128));
  const SimulationReport exposed = SimulateOn(*short_dots, "tpu-v3", by_opcode);
  const KindTotals& waits = exposed.comm_by_kind.at("collective-permute");
  const double body_kernels =
      (kernel_seconds(exposed, "dynamic-update-slice") + kernel_seconds(exposed, "add")) / 8;
  ASSERT_GT(body_kernels, 0);
  ASSERT_GT(exposed.collectives[0].estimate.time_s, body_kernels);
  EXPECT_NEAR(exposed.collectives[0].exposed_s, exposed.collectives[0].estimate.time_s - body_kernels, 1e-12);
  EXPECT_NEAR(waits.exposed_s, 8 * (exposed.collectives[0].estimate.time_s - body_kernels), 1e-12);
  EXPECT_NEAR(exposed.step_time_s, exposed.compute_s + waits.exposed_s, 1e-12);

  // The native form: all-gather, then the one dot it feeds.
  auto native = PerDevice(8, R"(  %x = f32[512,2048]{1,0} parameter(0)
  %w = f32[2048,4096]{1,0} parameter(1)
  %g = f32[4096,2048]{1,0} all-gather(%x), replica_groups={}, dimensions={0}
  ROOT %d = f32[4096,4096]{1,0} dot(%g, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  const SimulationReport gathered = SimulateOn(*native);
  const KindTotals& gather = gathered.comm_by_kind.at("all-gather");
  EXPECT_GT(gather.time_s, 0);
  EXPECT_DOUBLE_EQ(gather.exposed_s, gather.time_s);
  EXPECT_DOUBLE_EQ(gathered.exposed_comm_s, gather.time_s);
  EXPECT_NEAR(gathered.step_time_s, gathered.compute_s + gather.time_s, 1e-12);
  EXPECT_LT(hidden.step_time_s, gathered.step_time_s);  // N dots of 1/N each, and the gather hidden

  // Memory as XLA runs the loop: the state in one buffer (%w, passed through, stays in its
  // parameter's), the result updated in place and the dot written into it; the received
  // window is the only new buffer of a trip (and the counter's scalars).
  const int64_t mib = 1 << 20;
  const int64_t parameters = 4 * mib + 32 * mib + 64 * mib;
  const int64_t state = 4 + 4 * mib + 64 * mib;
  EXPECT_EQ(hidden.memory.peak_bytes, parameters + state + 4 * mib + 4);
  EXPECT_LT(hidden.memory.peak_bytes, hidden.memory.live_range_peak_bytes);

  // The text and JSON forms report both.
  const std::string text = FormatSimulationReport(exposed);
  EXPECT_NE(text.find("exposed"), std::string::npos);
  const nlohmann::json json = SimulationReportToJson(exposed);
  EXPECT_DOUBLE_EQ(json["exposed_comm_time_s"].get<double>(), exposed.exposed_comm_s);
  EXPECT_DOUBLE_EQ(json["exposed_comm_time_by_kind"]["collective-permute"].get<double>(), waits.exposed_s);
  EXPECT_DOUBLE_EQ(json["collective_ops"][0]["exposed_time_s"].get<double>(), exposed.collectives[0].exposed_s);
}

// A collective in flight when a while loop starts runs on beside it (XLA's asynchronous
// collectives cross loops), in the link time the loop's own collectives leave free: an
// all-gather issued before a loop of dots and used after it is hidden by the loop.
TEST(SimulatorTest, ACollectiveInFlightRunsAcrossALoop) {
  auto build = [](bool after) {
    const std::string gather = "  %g = f32[8192,1024]{1,0} all-gather(%w), channel_id=1, replica_groups=[1,8]<=[8], dimensions={0}, use_global_device_ids=true\n";
    return ParseModule(std::string("HloModule m, num_partitions=8\n\n") + R"(%cond (p: (s32[], f32[1024,1024])) -> pred[] {
  %p = (s32[], f32[1024,1024]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(8)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[1024,1024])) -> (s32[], f32[1024,1024]) {
  %q = (s32[], f32[1024,1024]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %v = f32[1024,1024]{1,0} get-tuple-element(%q), index=1
  %d = f32[1024,1024]{1,0} dot(%v, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (s32[], f32[1024,1024]{1,0}) tuple(%next, %d)
}

ENTRY %main_spmd {
  %x = f32[1024,1024]{1,0} parameter(0)
  %w = f32[1024,1024]{1,0} parameter(1)
)" + (after ? "" : gather) + R"(  %zero = s32[] constant(0)
  %init = (s32[], f32[1024,1024]{1,0}) tuple(%zero, %x)
  %loop = (s32[], f32[1024,1024]{1,0}) while(%init), condition=%cond, body=%body
  %y = f32[1024,1024]{1,0} get-tuple-element(%loop), index=1
)" + (after ? gather : "") + R"(  %s = f32[1024,1024]{1,0} slice(%g), slice={[0:1024], [0:1024]}
  ROOT %r = f32[1024,1024]{1,0} add(%y, %s)
}
)");
  };
  const SimulationReport before = SimulateOn(*build(false));
  const SimulationReport after = SimulateOn(*build(true));
  ASSERT_EQ(before.collectives.size(), 1u);
  const double gather_s = before.collectives[0].estimate.time_s;
  EXPECT_GT(gather_s, 0);
  // Issued after the loop it is exposed whole; before it, the loop (no collectives of its own)
  // hides it and the step is shorter by that much.
  EXPECT_NEAR(after.exposed_comm_s, gather_s, 1e-12);
  EXPECT_NEAR(before.exposed_comm_s, 0, 1e-12);
  EXPECT_NEAR(after.step_time_s - before.step_time_s, gather_s, 1e-9);
}

// A value read out of a loop's state lives as long as it is used, and when memory is short
// the loop that made it may be run again (as a recomputed forward pass would).
TEST(SimulatorTest, LoopResultsLiveUntilTheirLastUseAndLoopsMayBeRecomputed) {
  const std::string text = "HloModule m, num_partitions=1\n\n" + std::string(kAdd) + R"(%cond (p: (s32[], f32[1048576])) -> pred[] {
  %p = (s32[], f32[1048576]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[1048576])) -> (s32[], f32[1048576]) {
  %q = (s32[], f32[1048576]{0}) parameter(0)
  %i = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %v = f32[1048576]{0} get-tuple-element(%q), index=1
  %twice = f32[1048576]{0} add(%v, %v)
  ROOT %t = (s32[], f32[1048576]{0}) tuple(%next, %twice)
}

ENTRY %main_spmd {
  %x = f32[1048576]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[1048576]{0}) tuple(%zero, %x)
  %loop = (s32[], f32[1048576]{0}) while(%init), condition=%cond, body=%body
  %y = f32[1048576]{0} get-tuple-element(%loop), index=1
  %a = f32[2097152]{0} concatenate(%x, %x), dimensions={0}
  %b = f32[2097152]{0} negate(%a)
  %c = f32[1048576]{0} slice(%b), slice={[0:1048576]}
  ROOT %r = f32[1048576]{0} add(%y, %c)
}
)";
  auto module = ParseModule(text);
  const int64_t mib4 = 4 << 20;
  // At %b: x, the loop's %y, %a and %b (8 MiB each).
  const SimulationReport plenty = SimulateOn(*module);
  EXPECT_EQ(plenty.memory.peak_bytes, 6 * mib4);
  EXPECT_FALSE(plenty.memory.rematerialized);

  // With 5 x 4 MiB (and a little), %y is dropped over %a, %b and %c, and the loop runs again
  // for %r (x, y, c and r live there, and the loop's counter).
  ChipSpec chip = LoadChipSpec("tpu-v3");
  chip.hbm_bytes = 5 * mib4 + 64;
  const SimulationReport tight = Simulate(*module, chip, Topology::Build(chip, 1));
  EXPECT_TRUE(tight.memory.rematerialized);
  EXPECT_TRUE(tight.memory.fits);
  EXPECT_EQ(tight.memory.peak_bytes, 5 * mib4);  // at %b: x, a, b
  EXPECT_EQ(tight.memory.recomputations, 1);
  // The loop's five trips: an add of 1M elements, the counter's add and the condition's compare.
  EXPECT_EQ(tight.memory.remat_flops, 5.0 * (1048576 + 2));
  EXPECT_GT(tight.memory.remat_seconds, 5 * chip.op_overhead_s);
  EXPECT_NEAR(tight.step_time_s, plenty.step_time_s + tight.memory.remat_seconds, 1e-12);
}

TEST(SimulatorTest, ComputeTypeRetypesBytesAndMath) {
  auto module = PerDevice(8, R"(  %x = f32[1024,1024]{1,0} parameter(0)
  %e = f32[1024,1024]{1,0} exponential(%x)
  ROOT %r = f32[1024,1024]{1,0} all-reduce(%e), replica_groups={}, to_apply=%add
)");
  const SimulationReport f32 = SimulateOn(*module);
  RetypeFloatMath(*module, ElementType::kBF16);
  const SimulationReport bf16 = SimulateOn(*module);
  EXPECT_EQ(bf16.hbm_bytes, f32.hbm_bytes / 2);
  EXPECT_EQ(bf16.comm.comm_bytes_per_device, f32.comm.comm_bytes_per_device / 2);
  EXPECT_EQ(bf16.transcendentals, f32.transcendentals);
}

// Mixed precision: the dots and what feeds them run in bf16; the parameters, and what the step
// computes from them and the dots' results on the way to its outputs (gradient reduction,
// weight update, loss) keep f32.
TEST(SimulatorTest, MixedPrecisionKeepsParametersAndTheUpdate) {
  auto module = PerDevice(8, R"(  %w = f32[256,256]{1,0} parameter(0)
  %x = f32[64,256]{1,0} parameter(1)
  %h = f32[64,256]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a = f32[64,256]{1,0} tanh(%h)
  %g = f32[256,256]{1,0} dot(%x, %a), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %gs = f32[256,256]{1,0} all-reduce(%g), replica_groups={}, to_apply=%add
  %w2 = f32[256,256]{1,0} subtract(%w, %gs)
  %zero = f32[] constant(0)
  %loss = f32[] reduce(%a, %zero), dimensions={0,1}, to_apply=%add
  ROOT %out = (f32[], f32[256,256]{1,0}) tuple(%loss, %w2)
)");
  RetypeFloatMathKeepingState(*module, ElementType::kBF16);
  const Computation& entry = *module->entry();
  auto type = [&](const char* name) { return entry.FindInstruction(name)->shape().element_type(); };
  for (const char* name : {"h", "g"}) EXPECT_EQ(type(name), ElementType::kBF16) << name;
  for (const char* name : {"w", "x", "gs", "w2", "loss", "zero"}) EXPECT_EQ(type(name), ElementType::kF32) << name;
  // tanh feeds the loss without a dot between, so it keeps f32 too; the reducer runs in bf16.
  EXPECT_EQ(type("a"), ElementType::kF32);
  EXPECT_EQ(module->FindComputation("add")->root()->shape().element_type(), ElementType::kBF16);
}

TEST(SimulatorTest, MemorySplitsByRoleAndAliasedOutputsReuseTheirBuffer) {
  // w (param), m (opt_state) and x (batch); the step writes w' and m' into w's and m's buffers.
  auto module = PerDevice(1, R"(  %w = f32[1024]{0} parameter(0), frontend_attributes={gspmd.role="param"}
  %m = f32[1024]{0} parameter(1), frontend_attributes={gspmd.role="opt_state"}
  %x = f32[256]{0} parameter(2), frontend_attributes={gspmd.role="batch"}
  %g = f32[1024]{0} multiply(%w, %w)
  %m2 = f32[1024]{0} add(%m, %g)
  %w2 = f32[1024]{0} subtract(%w, %m2)
  %zero = f32[] constant(0)
  %loss = f32[] reduce(%x, %zero), dimensions={0}, to_apply=%add
  ROOT %out = (f32[], f32[1024]{0}, f32[1024]{0}) tuple(%loss, %w2, %m2)
)", ", frontend_attributes={gspmd.carry=\"1:0,2:1\"}");
  const SimulationReport report = SimulateOn(*module);
  const MemoryEstimate& memory = report.memory;
  EXPECT_EQ(memory.roles_from, "gspmd.role");
  EXPECT_EQ(memory.aliased_outputs, 2);
  EXPECT_EQ(memory.live_range_peak_bytes, PeakLiveBytes(*module));
  // Without aliasing the peak is at %loss: w m x m2 w2, the constant, the loss and the 4
  // bytes of the reducer it calls.
  EXPECT_EQ(memory.live_range_peak_bytes, 4096 + 4096 + 1024 + 4096 + 4096 + 4 + 4 + 4);
  // m2 and w2 live in m's and w's buffers: the peak is at %g.
  EXPECT_EQ(memory.peak_bytes, 4096 + 4096 + 1024 + 4096);
  EXPECT_EQ(memory.parameter_bytes, 4096);
  EXPECT_EQ(memory.optimizer_state_bytes, 4096);
  EXPECT_EQ(memory.batch_bytes, 1024);
  EXPECT_EQ(memory.activation_bytes, 4096);
  EXPECT_TRUE(memory.fits);
  EXPECT_EQ(memory.capacity_bytes, int64_t{16} << 30);
}

TEST(SimulatorTest, ProgramsThatDoNotFitAreRematerialized) {
  // a = x*x is used early (by b) and late (by sa); b and c are the forward's working set. At
  // the peak (%c) x, a, b, c are live: 16 MiB. With 12 MiB + 100 bytes, a is dropped after
  // %b and recomputed from x for %sa.
  auto module = PerDevice(1, R"(  %x = f32[1048576]{0} parameter(0)
  %zero = f32[] constant(0)
  %a = f32[1048576]{0} multiply(%x, %x)
  %b = f32[1048576]{0} negate(%a)
  %c = f32[1048576]{0} multiply(%b, %b)
  %d = f32[] reduce(%c, %zero), dimensions={0}, to_apply=%add
  %sa = f32[] reduce(%a, %zero), dimensions={0}, to_apply=%add
  ROOT %t = (f32[], f32[]) tuple(%d, %sa)
)");
  const int64_t mib4 = 4 << 20;
  MemoryOptions options{true, [](const Instruction&) { return 1e-6; }, {}};
  const MemoryEstimate fitted = EstimateMemory(*module, 3 * mib4 + 100, options);
  EXPECT_EQ(fitted.peak_without_remat_bytes, 4 * mib4 + 4);  // x a b c and the constant, at %c
  EXPECT_TRUE(fitted.rematerialized);
  EXPECT_EQ(fitted.recomputations, 1);
  EXPECT_EQ(fitted.remat_flops, 1048576);
  EXPECT_DOUBLE_EQ(fitted.remat_seconds, 1e-6);
  EXPECT_LE(fitted.peak_bytes, 3 * mib4 + 100);
  EXPECT_TRUE(fitted.fits);
  // Too small for anything: x, a recomputed... nothing more can go.
  const MemoryEstimate stuck = EstimateMemory(*module, mib4, options);
  EXPECT_FALSE(stuck.fits);
  EXPECT_GT(stuck.peak_bytes, mib4);
  // Without rematerialization the live-range peak stands.
  const MemoryEstimate plain = EstimateMemory(*module, 3 * mib4 + 100);
  EXPECT_FALSE(plain.rematerialized);
  EXPECT_EQ(plain.peak_bytes, plain.peak_without_remat_bytes);
  EXPECT_FALSE(plain.fits);
}

// Three slices of one product (q, k and v of one dot in a transformer) are read in the
// forward pass and again, one after another, late. Dropping them recomputes the product
// once: the second and third slices read the copy the first one's recomputation made, kept
// live for them, as XLA's rematerialization reuses its one clone; they do not compute it again.
TEST(SimulatorTest, SlicesOfOneValueShareItsRecomputation) {
  auto module = PerDevice(1, R"(  %x = f32[1,1048576]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %cat = f32[3,1048576]{1,0} concatenate(%x, %x, %x), dimensions={0}
  %p = f32[3,1048576]{1,0} multiply(%cat, %cat)
  %q = f32[1,1048576]{1,0} slice(%p), slice={[0:1], [0:1048576]}
  %k = f32[1,1048576]{1,0} slice(%p), slice={[1:2], [0:1048576]}
  %v = f32[1,1048576]{1,0} slice(%p), slice={[2:3], [0:1048576]}
  %s = f32[1,1048576]{1,0} add(%q, %k)
  %t = f32[1,1048576]{1,0} add(%s, %v)
  %c = f32[1,1048576]{1,0} negate(%t)
  %x1 = f32[1048576]{0} reshape(%x)
  %big = f32[6,1048576]{1,0} broadcast(%x1), dimensions={1}
  %d = f32[] reduce(%big, %zero), dimensions={0,1}, to_apply=%add
  %dc = f32[] reduce(%c, %zero), dimensions={0,1}, to_apply=%add
  %lq = f32[] reduce(%q, %zero), dimensions={0,1}, to_apply=%add
  %lk = f32[] reduce(%k, %zero), dimensions={0,1}, to_apply=%add
  %lv = f32[] reduce(%v, %zero), dimensions={0,1}, to_apply=%add
  ROOT %r = (f32[], f32[], f32[], f32[], f32[]) tuple(%d, %dc, %lq, %lk, %lv)
)");
  const int64_t mib4 = 4 << 20;
  MemoryOptions options{true, [](const Instruction&) { return 1e-6; }, {}};
  // At %big: x, x1, q, k, v and c (4 MiB each) and big (24 MiB): 48 MiB. In 36 MiB, q, k
  // and v must go; the copy of p made for %lq (x, cat, p and q: 32 MiB) is kept for %lk and %lv.
  const MemoryEstimate fitted = EstimateMemory(*module, 9 * mib4 + 100, options);
  ASSERT_TRUE(fitted.fits);
  EXPECT_EQ(fitted.recomputations, 3);
  // cat and p once, and the three slices: five instructions, not nine.
  EXPECT_DOUBLE_EQ(fitted.remat_seconds, 5e-6);
  EXPECT_EQ(fitted.remat_flops, 3 * 1048576);
}

TEST(SimulatorTest, BreakdownGroupsByLayer) {
  auto module = PerDevice(1, R"(  %x = f32[128,128]{1,0} parameter(0)
  %a = f32[128,128]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(step)/layer_0/mlp/dot"}
  %b = f32[128,128]{1,0} dot(%a, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(step)/layer_1/mlp/dot"}
  ROOT %c = f32[128,128]{1,0} dot(%b, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(step)/transpose(jvp(layer_1))/mlp/dot"}
)");
  SimulateOptions options;
  options.breakdown = "layer";
  const SimulationReport report = SimulateOn(*module, "tpu-v3", options);
  ASSERT_EQ(report.breakdown.size(), 2u);
  std::set<std::string> keys;
  for (const BreakdownEntry& entry : report.breakdown) keys.insert(entry.key);
  EXPECT_EQ(keys, (std::set<std::string>{"layer_0", "layer_1"}));  // forward and backward of layer_1 together
  options.breakdown = "op_name";
  options.breakdown_depth = 1;
  const SimulationReport by_name = SimulateOn(*module, "tpu-v3", options);
  EXPECT_EQ(by_name.breakdown.size(), 3u);
}

// Every corpus program, XLA's partitioned one and ours: simulate reports the bytes that
// `gspmd report` does.
TEST(SimulatorTest, CorpusByteCountsEqualTheCommunicationReport) {
  const fs::path corpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd";
  int cases = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus)) {
    std::vector<std::unique_ptr<Module>> programs;
    programs.push_back(ParseModuleFile((entry.path() / "partitioned.hlo").string()));
    auto global = ParseModuleFile((entry.path() / "propagated.hlo").string());
    PartitionOptions options;
    options.num_partitions = global->num_partitions();
    programs.push_back(PartitionModule(*global, options).module);
    for (const auto& program : programs) {
      const SimulationReport report = SimulateOn(*program);
      const CommReport expected = AnalyzeCommunication(*program);
      EXPECT_EQ(report.comm.comm_bytes_per_device, expected.comm_bytes_per_device) << entry.path();
      double bytes = 0, count = 0;
      for (const auto& [kind, totals] : report.comm_by_kind) {
        EXPECT_DOUBLE_EQ(totals.bytes, expected.by_kind.at(kind).bytes) << entry.path() << " " << kind;
        EXPECT_EQ(totals.count, expected.by_kind.at(kind).count) << entry.path() << " " << kind;
        bytes += totals.bytes;
        count += totals.count;
      }
      EXPECT_EQ(report.comm_by_kind.size(), expected.by_kind.size()) << entry.path();
      EXPECT_DOUBLE_EQ(bytes, expected.comm_bytes_per_device) << entry.path();
      EXPECT_EQ(report.memory.live_range_peak_bytes, PeakLiveBytes(*program)) << entry.path();
      // No aliases in the corpus; loops and updates in place may only lower the peak.
      EXPECT_LE(report.memory.peak_bytes, PeakLiveBytes(*program)) << entry.path();
      EXPECT_GT(report.step_time_s, 0) << entry.path();
      EXPECT_LE(report.step_time_s, report.step_time_no_overlap_s * (1 + 1e-12)) << entry.path();
      // The compute stream only waits for collectives: the step is compute + exposed.
      EXPECT_NEAR(report.step_time_s, report.compute_s + report.exposed_comm_s, 1e-9 * report.step_time_s) << entry.path();
      double exposed = 0;
      for (const auto& [kind, totals] : report.comm_by_kind) {
        EXPECT_LE(totals.exposed_s, totals.time_s * (1 + 1e-12)) << entry.path() << " " << kind;
        exposed += totals.exposed_s;
      }
      EXPECT_NEAR(exposed, report.exposed_comm_s, 1e-9 * report.step_time_s) << entry.path();
      ++cases;
    }
  }
  EXPECT_GE(cases, 28);
}

}  // namespace
}  // namespace gspmd::simulate
