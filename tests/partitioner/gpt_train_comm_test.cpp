// The GPT training step of the corpus (gpt_train_2l: tied vocab-parallel embedding, 2 layers,
// SGD on a 2 (data) x 4 (model) mesh) against an analytic count of what a minimal plan sends.
//
// Per device, on the ring model of analysis/comm_report.h, with act = the [B/x, S, M] residual
// stream and rows = one value per token ([B/x, S]):
//   forward   the embedding lookup (vocabulary split: a sum over model), per layer the
//             attention output (an all-reduce, or gathering the heads and W_o when that is
//             cheaper) and the MLP output; the log-softmax's max and sum and the target logit
//             (over the vocabulary); the loss's mean over the batch
//   backward  the log-softmax's sum, the logits' input gradient, per layer the MLP's input
//             gradient and ONE input gradient for q, k and v together (they are summed before
//             the LayerNorm); every weight gradient summed over data once, the tied
//             embedding's two contributions (the scatter-add of the lookup and the logits'
//             dot) added before that one reduction.
// XLA reduces q, k and v and the embedding's two contributions separately, and all-reduces
// the attention output: its figure is checked against that count too, so the ratio is
// explained by the dims rather than measured alone.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "io/npy.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

const fs::path kCase = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd" / "gpt_train_2l";
constexpr double kF32 = 4;
constexpr int64_t kData = 2, kModel = 4, kLayers = 2;

double AllReduce(int64_t n, double bytes) { return 2.0 * static_cast<double>(n - 1) / n * bytes; }
double Gather(int64_t n, double bytes) { return static_cast<double>(n - 1) / n * bytes; }

// The step's dims, read from its entry parameters (wte, wq, w1, tokens).
struct GptDims {
  double V, M, H, D, F, B, S;
  explicit GptDims(const Module& module) {
    const Computation& entry = *module.entry();
    const std::vector<int64_t>& wte = entry.parameter(0)->shape().dims();
    const std::vector<int64_t>& wq = entry.parameter(4)->shape().dims();
    const std::vector<int64_t>& w1 = entry.parameter(10)->shape().dims();
    const std::vector<int64_t>& tokens = entry.parameter(entry.num_parameters() - 2)->shape().dims();
    V = static_cast<double>(wte[0]), M = static_cast<double>(wte[1]);
    H = static_cast<double>(wq[1]), D = static_cast<double>(wq[2]), F = static_cast<double>(w1[1]);
    B = static_cast<double>(tokens[0]), S = static_cast<double>(tokens[1]);
  }
  double Act() const { return B / kData * S * M * kF32; }
  double Rows() const { return B / kData * S * kF32; }
  // Every weight's shard on one device (Megatron over model), the tied embedding once.
  double WeightShards() const {
    const double y = kModel;
    const double layer = 4 * M * H / y * D + 2 * M * F / y + F / y + M + 4 * M;  // q k v o, w1 w2, b1, b2, 2 LNs
    return (V / y * M + S * M + kLayers * layer + 2 * M) * kF32;
  }
  double AttentionOutput() const {
    const double gather = Gather(kModel, B / kData * H * S * D * kF32) + Gather(kModel, H * D * M * kF32);
    return std::min(AllReduce(kModel, Act()), gather);
  }
  // The minimal plan described above.
  double Minimal() const {
    const double forward = AllReduce(kModel, Act()) + kLayers * (AttentionOutput() + AllReduce(kModel, Act())) +
                           3 * AllReduce(kModel, Rows()) + AllReduce(kData, kF32);
    const double backward =
        AllReduce(kModel, Rows()) + AllReduce(kModel, Act()) + kLayers * 2 * AllReduce(kModel, Act());
    return forward + backward + AllReduce(kData, WeightShards());
  }
  // XLA's plan: the attention output all-reduced, q, k and v reduced one by one, the tied
  // embedding's gradient reduced once per contribution.
  double Xla() const {
    const double forward =
        AllReduce(kModel, Act()) * (1 + 2 * kLayers) + 3 * AllReduce(kModel, Rows()) + AllReduce(kData, kF32);
    const double backward = AllReduce(kModel, Rows()) + AllReduce(kModel, Act()) * (1 + 4 * kLayers);
    return forward + backward + AllReduce(kData, WeightShards() + V / kModel * M * kF32);
  }
};

std::vector<Literal> ReadNumbered(const std::string& prefix) {
  std::vector<Literal> values;
  for (int i = 0; fs::exists(kCase / (prefix + std::to_string(i) + ".npy")); ++i)
    values.push_back(ReadNpy((kCase / (prefix + std::to_string(i) + ".npy")).string()));
  return values;
}

struct Compiled {
  std::unique_ptr<Module> global;
  std::unique_ptr<Module> per_device;
};

Compiled Compile() {
  Compiled compiled;
  compiled.global = ParseModuleFile((kCase / "pre.hlo").string());
  PropagateShardings(*compiled.global);
  PartitionResult result = PartitionModule(*compiled.global);
  for (const std::string& warning : result.warnings) ADD_FAILURE() << warning;
  compiled.per_device = ParseModule(PrintModule(*result.module), "gpt_train_2l/ours.hlo");
  return compiled;
}

// How many `opcode` collectives of `module` reduce or gather an array of `dims` over groups
// of `group_size` devices.
int64_t CountCollectives(const Module& module, Opcode opcode, const std::vector<int64_t>& dims, int64_t group_size) {
  int64_t count = 0;
  ForEachCollective(module, [&](const Instruction& collective, double times) {
    if (collective.opcode() != opcode || collective.shape().dims() != dims) return;
    const std::vector<std::vector<int64_t>> groups = collective.replica_groups().Groups(kData * kModel);
    if (!groups.empty() && static_cast<int64_t>(groups.front().size()) == group_size)
      count += static_cast<int64_t>(times);
  });
  return count;
}

TEST(GptTrainCommTest, XlaSendsItsAnalyticCount) {
  // XLA's entry has the shards' shapes: the dims come from pre.hlo.
  const GptDims dims(*ParseModuleFile((kCase / "pre.hlo").string()));
  std::unique_ptr<Module> xla = ParseModuleFile((kCase / "partitioned.hlo").string());
  EXPECT_NEAR(AnalyzeCommunication(*xla).comm_bytes_per_device, dims.Xla(), 1e-6);
}

TEST(GptTrainCommTest, OursSendsTheMinimalPlanAtMostFourFifthsOfXla) {
  Compiled compiled = Compile();
  const GptDims dims(*compiled.global);
  const double ours = AnalyzeCommunication(*compiled.per_device).comm_bytes_per_device;
  const double xla = AnalyzeCommunication(*ParseModuleFile((kCase / "partitioned.hlo").string())).comm_bytes_per_device;
  std::cout << "[ gpt comm ] ours=" << ours << " minimal=" << dims.Minimal() << " xla=" << xla
            << " ratio=" << ours / xla << "\n";
  EXPECT_LE(ours, dims.Minimal() + 1e-6) << PrintModule(*compiled.per_device);
  EXPECT_LE(ours, 0.80 * xla);

  // The structure behind the count: the residual stream is reduced over model once for the
  // embedding, once per layer for the MLP forward, once for the logits' input gradient and
  // twice per layer backward (the MLP, and q, k and v together); the tied embedding's
  // gradient is reduced over data once.
  const std::vector<int64_t> act = {static_cast<int64_t>(dims.B) / kData, static_cast<int64_t>(dims.S),
                                    static_cast<int64_t>(dims.M)};
  const int64_t attention_reduced = dims.AttentionOutput() < AllReduce(kModel, dims.Act()) ? 0 : kLayers;
  EXPECT_EQ(CountCollectives(*compiled.per_device, Opcode::kAllReduce, act, kModel),
            1 + kLayers + attention_reduced + 1 + 2 * kLayers);
  const std::vector<int64_t> embedding_shard = {static_cast<int64_t>(dims.V) / kModel, static_cast<int64_t>(dims.M)};
  EXPECT_EQ(CountCollectives(*compiled.per_device, Opcode::kAllReduce, embedding_shard, kData), 1);
}

TEST(GptTrainCommTest, PartitionedStepMatchesJax) {
  Compiled compiled = Compile();
  SpmdRunOptions options = OptionsFromLikeModule(*compiled.per_device, compiled.global.get());
  std::vector<Literal> outputs = RunSpmd(*compiled.per_device, ReadNumbered("in"), options);
  std::vector<Literal> expected = ReadNumbered("out");
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << "out" << i << ": " << comparison.message;
  }
}

}  // namespace
}  // namespace gspmd
