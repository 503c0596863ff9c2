// `gspmd model` and `gspmd train`: JAX's train step trained for three steps equals three
// chained `gspmd eval`s (the corpus's one-layer step and deeper ones written like it), our
// models train with --check and --save, and bad input gets clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "io/npy.h"
#include "models/model_registry.h"
#include "models/transformer.h"
#include "text/printer.h"
#include "train/step_inputs.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

class TrainCliTest : public CliTest {
 protected:
  // Runs `gspmd eval` `steps` times, feeding outputs OUT to inputs IN per `carry`; the last
  // step's outputs land in DIR/chain<steps>/.
  std::string ChainEval(const std::string& hlo, std::vector<std::string> inputs,
                        const std::vector<std::pair<int, int>>& carry, int steps) {
    std::string dir;
    for (int step = 1; step <= steps; ++step) {
      dir = Path("chain" + std::to_string(step));
      std::vector<std::string> args = {"eval", hlo, "-o", dir, "-i"};
      args.insert(args.end(), inputs.begin(), inputs.end());
      CommandResult r = Gspmd(args);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      for (auto [out, in] : carry) inputs[in] = dir + "/out" + std::to_string(out) + ".npy";
    }
    return dir;
  }

  void ExpectTrainEqualsChainedEval(const std::string& hlo, const std::vector<std::string>& inputs,
                                    const std::vector<std::pair<int, int>>& carry, int outputs) {
    std::string carry_text;
    for (auto [out, in] : carry) carry_text += (carry_text.empty() ? "" : ",") + std::to_string(out) + ":" + std::to_string(in);
    std::vector<std::string> args = {"train", hlo, "--steps", "3", "--carry", carry_text, "-o", Path("trained"), "-i"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    CommandResult r = Gspmd(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("carry: " + std::to_string(carry.size()) + " outputs feed the next step's inputs (from --carry)"),
              std::string::npos)
        << r.out;
    const std::string chained = ChainEval(hlo, inputs, carry, 3);
    ExpectSavedClose(Path("trained"), chained, outputs, 1e-5);
  }

  // train --save wrote output i as the file index.json names for it: it matches
  // expected_dir/out<i>.npy for each of the `count` outputs.
  void ExpectSavedClose(const fs::path& saved_dir, const fs::path& expected_dir, int count, double rtol) {
    const nlohmann::json outputs = nlohmann::json::parse(ReadText(saved_dir / "index.json"))["outputs"];
    ASSERT_EQ(outputs.size(), static_cast<size_t>(count)) << saved_dir;
    for (int i = 0; i < count; ++i) {
      EXPECT_EQ(outputs[i]["output"], i);
      const std::string file = outputs[i]["file"];
      const LiteralComparison comparison =
          CompareLiterals(ReadNpy((saved_dir / file).string()),
                          ReadNpy((expected_dir / ("out" + std::to_string(i) + ".npy")).string()), rtol);
      EXPECT_TRUE(comparison.matches) << file << " (output " << i << "): " << comparison.message;
    }
  }
};

TEST_F(TrainCliTest, CorpusTrainStepTrainsLikeThreeChainedEvals) {
  const fs::path c = kCorpus / "transformer_train_1l";
  std::vector<std::pair<int, int>> carry;
  for (int i = 1; i <= 8; ++i) carry.push_back({i, i + 1});
  ExpectTrainEqualsChainedEval((c / "pre.hlo").string(), CaseInputs(c), carry, 9);
}

// Deeper steps written like JAX's (x, y, then each layer's weights; loss, then the new
// weights with the weights' shardings), as the corpus has only the one-layer one. Inputs
// drawn at the corpus case's scale: x and y normal(1), LayerNorm scales one, weights
// normal(0.2) (the second MLP weight normal(0.1)).
TEST_F(TrainCliTest, DeeperJaxLikeStepsTrainLikeChainedEvals) {
  for (int64_t layers : {4, 8}) {
    SCOPED_TRACE(layers);
    ModelOptions options;
    options.layers = layers;
    options.train = true;
    std::unique_ptr<Module> module = BuildTransformer(options);
    const std::string hlo = WriteFile("step" + std::to_string(layers) + ".hlo", PrintModule(*module));
    std::vector<std::string> inputs;
    std::vector<Literal> values;
    for (const Instruction* parameter : module->entry()->parameters()) {
      const std::string& name = parameter->name();
      const bool scale = name.find("ln") != std::string::npos;
      const char* init = parameter->parameter_number < 2 ? "normal(1)"
                         : scale                         ? "ones"
                         : name.find("w2") != std::string::npos ? "normal(0.1)"
                                                                : "normal(0.2)";
      StepInput input{name, "", init, parameter->shape()};
      values.push_back(InitialValue(input, parameter->parameter_number, static_cast<uint64_t>(layers)));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      inputs.push_back(Path("in" + std::to_string(layers) + "_" + std::to_string(i) + ".npy"));
      WriteNpy(inputs.back(), values[i]);
    }
    std::vector<std::pair<int, int>> carry;
    const int weights = static_cast<int>(values.size()) - 2;
    for (int i = 1; i <= weights; ++i) carry.push_back({i, i + 1});
    ExpectTrainEqualsChainedEval(hlo, inputs, carry, weights + 1);
  }
}

TEST_F(TrainCliTest, CarryIsInferredFromMatchingTrailingOutputsAndSaid) {
  const fs::path c = kCorpus / "transformer_train_1l";
  std::vector<std::string> args = {"train", (c / "pre.hlo").string(), "--steps", "2", "--check", "-i"};
  for (const std::string& input : CaseInputs(c)) args.push_back(input);
  CommandResult r = Gspmd(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(inferred: trailing outputs match trailing inputs)\n  output:input "
                       "1:2,2:3,3:4,4:5,5:6,6:7,7:8,8:9"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step 2/2  loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  check ok"), std::string::npos) << r.out;
}

TEST_F(TrainCliTest, ModelTrainsWithCheckAndSavesItsLastOutputs) {
  const std::string hlo = Path("moe.hlo");
  CommandResult model = Gspmd({"model", "gshard_moe", "--set", "layers=2", "--mesh", "data=2,expert=4", "-o", hlo});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_EQ(model.out, "");
  CommandResult r = Gspmd({"train", hlo, "--steps", "3", "--check", "-o", Path("saved"), "--plot", Path("loss.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("train " + hlo + " (model gshard_moe) on 8 devices"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(recorded in the module)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all-to-all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dropped_tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 3/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every step matched one device"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(Path("saved/loss.npy")));
  EXPECT_EQ(ReadNpy(Path("saved/loss.npy")).shape().rank(), 0);
  // --plot: the loss curve, three points, and the last one's value as printed.
  EXPECT_NE(r.out.find("wrote " + Path("loss.svg") + " (loss of 3 steps)"), std::string::npos) << r.out;
  const std::string svg = ReadText(Path("loss.svg"));
  EXPECT_NE(svg.find("gshard_moe: loss per step on 8 devices"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("<title>step 3: loss "), std::string::npos);
}

TEST_F(TrainCliTest, DataFolderFeedsTheBatch) {
  const std::string hlo = Path("lm.hlo");
  ASSERT_EQ(Gspmd({"model", "dense_lm", "--set", "batch=8", "--set", "seq=16", "-o", hlo}).exit_code, 0);
  fs::create_directories(Path("data"));
  Literal tokens(Shape(ElementType::kS32, {2, 8, 16}));
  Literal weights(Shape(ElementType::kF32, {2, 8, 16}));
  for (int64_t i = 0; i < tokens.element_count(); ++i) {
    tokens.data<int32_t>()[i] = static_cast<int32_t>(i % 16);
    weights.data<float>()[i] = 1.0f;
  }
  WriteNpy(Path("data/tokens.npy"), tokens);
  WriteNpy(Path("data/targets.npy"), tokens);
  WriteNpy(Path("data/weights.npy"), weights);
  CommandResult r = Gspmd({"train", hlo, "--steps", "3", "--data", Path("data"), "--check"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A batch file of the wrong shape names the file and the shape it needs.
  WriteNpy(Path("data/weights.npy"), Literal(Shape(ElementType::kF32, {2, 8})));
  r = Gspmd({"train", hlo, "--steps", "1", "--data", Path("data")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("weights.npy: error: holds f32[2,8] but input"), std::string::npos) << r.err;
}

TEST_F(TrainCliTest, ModelListPrintsNameThenKeys) {
  CommandResult r = Gspmd({"model", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < r.out.size();) {
    const size_t end = r.out.find('\n', pos);
    lines.push_back(r.out.substr(pos, end - pos));
    pos = end == std::string::npos ? r.out.size() : end + 1;
  }
  for (const std::string prefix : {"dense_lm layers=2 ", "gshard_moe layers=2 ", "pipelined_lm layers=8 ",
                                   "gshard-128e-12l model=gshard_moe layers=12 ",
                                   "gshard-2048e-36l model=gshard_moe layers=36 ", "dense-1t model=dense_lm layers=128 "}) {
    const bool found =
        std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.rfind(prefix, 0) == 0; });
    EXPECT_TRUE(found) << prefix << "\n" << r.out;
  }
  CommandResult keys = Gspmd({"model", "gshard_moe", "--keys"});
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  EXPECT_NE(keys.out.find("capacity_factor"), std::string::npos) << keys.out;
  CommandResult preset = Gspmd({"model", "--preset", "gshard-128e-12l", "-o", Path("g.hlo")});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  EXPECT_NE(ReadText(Path("g.hlo")).find("num_partitions=128"), std::string::npos);
}

TEST_F(TrainCliTest, BadInputGetsClearErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string lm = Path("lm.hlo");
  ASSERT_EQ(Gspmd({"model", "dense_lm", "-o", lm}).exit_code, 0);
  const fs::path c = kCorpus / "transformer_train_1l";
  std::vector<std::string> corpus_train = {"train", (c / "pre.hlo").string(), "--carry", "0:2", "-i"};
  for (const std::string& input : CaseInputs(c)) corpus_train.push_back(input);
  const std::vector<Case> cases = {
      {{"model", "resnet", "-o", Path("x.hlo")}, "unknown model 'resnet' (known: dense_lm, gshard_moe, pipelined_lm"},
      {{"model", "dense_lm", "--set", "depth=3", "-o", Path("x.hlo")}, "model dense_lm has no key 'depth' (known: layers,"},
      {{"model", "dense_lm", "--set", "heads=4", "--mesh", "x=1,y=8", "-o", Path("x.hlo")},
       "heads=4 cannot be split 8 ways over mesh axes y"},
      {{"model", "gshard_moe", "--mesh", "model=2", "-o", Path("x.hlo")}, "has the axes data, expert"},
      {{"model", "--preset", "gshard-3e", "-o", Path("x.hlo")}, "unknown preset 'gshard-3e'"},
      {{"model", "-o", Path("x.hlo")}, "expected a model NAME or --preset NAME"},
      {corpus_train, "--carry 0:2: output 0 is f32[] but input 2 (%"},
      {{"train", lm, "--carry", "1:x"}, "--carry '1:x': expected OUT:IN"},
      {{"train", lm, "--carry", "1:200"}, "--carry 1:200: the step has"},
      {{"train", lm, "--steps", "0"}, "--steps '0' is not a positive number of steps"},
      {{"train", lm, "--backend", "nccl"}, "error: --backend: 'nccl' is not one of threads, mpi"},
      {{"train", lm, "--plot", Path("loss.png")}, "--plot " + Path("loss.png") + ": expected a file name ending in .svg"},
      {{"train", lm, "--plot", Path("none/loss.svg")}, "the directory " + Path("none") + " does not exist"},
      {{"train", (c / "pre.hlo").string()}, "says nothing about its first value (no gspmd.init attribute); give the "
                                            "first step's inputs with -i"},
  };
  for (const Case& k : cases) {
    CommandResult r = Gspmd(k.args);
    EXPECT_EQ(r.exit_code, 1) << k.args[0] << " " << k.args[1] << "\n" << r.err;
    EXPECT_NE(r.err.find(k.message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(Path("x.hlo"))) << "no partial output on errors";
}

}  // namespace
}  // namespace gspmd
