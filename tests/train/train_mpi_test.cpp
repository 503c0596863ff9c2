// `gspmd train --backend mpi`: the carry stays sharded on the ranks between steps, and the
// last step equals the threads backend's (our MoE model, and JAX's corpus step with --carry);
// --check matches every step with one device (the dense LM and the MoE with windowed einsums)
// and ends the job at the first difference; options that need the other backend, and a job
// that does not fit the step, get clear errors.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/mpi/mpi_test_util.h"
#include "train/windowed_train_util.h"

namespace gspmd::mpi_test {
namespace {

const fs::path kTrainStep = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd" / "transformer_train_1l";

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> MpiFlags(const MpiLayout& layout) {
  return {"--backend", "mpi", "--devices-per-rank", std::to_string(layout.devices_per_rank), "--progress", "lines"};
}

// Both runs saved the same files (index.json names them after the parameters they update)
// holding the same values.
void ExpectSameSavedOutputs(const fs::path& actual_dir, const fs::path& expected_dir, double rtol) {
  const std::string index = ReadText(expected_dir / "index.json");
  ASSERT_FALSE(index.empty()) << expected_dir;
  EXPECT_EQ(ReadText(actual_dir / "index.json"), index);
  const nlohmann::json outputs = nlohmann::json::parse(index)["outputs"];
  EXPECT_GT(outputs.size(), 0u);
  for (const nlohmann::json& output : outputs) {
    const std::string file = output["file"];
    const LiteralComparison comparison = CompareLiterals(ReadArrayFile((actual_dir / file).string()),
                                                         ReadArrayFile((expected_dir / file).string()), rtol);
    EXPECT_TRUE(comparison.matches) << actual_dir / file << ": " << comparison.message;
  }
}

// The "loss X" values of the per-step lines.
std::vector<double> Losses(const std::string& out) {
  std::vector<double> losses;
  for (size_t at = out.find("\nstep "); at != std::string::npos; at = out.find("\nstep ", at + 1)) {
    const size_t loss = out.find(" loss ", at);
    if (loss == std::string::npos) break;
    losses.push_back(std::stod(out.substr(loss + 6, out.find(' ', loss + 6) - loss - 6)));
  }
  return losses;
}

class TrainMpiTest : public MpiTest {};

TEST_F(TrainMpiTest, ShardedCarryTrainsLikeThreads) {
  const std::string model = Path("moe.hlo");
  ASSERT_EQ(Gspmd({"model", "gshard_moe", "-o", model}).exit_code, 0);
  const std::vector<std::string> train = {"train", model, "--steps", "3", "--progress", "lines"};
  const Launch threads = Gspmd(Concat(train, {"-o", Path("threads")}));
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  ASSERT_EQ(Losses(threads.out).size(), 3u) << threads.out;

  std::vector<MpiLayout> layouts = {MpiLayout{2, 4, ""}, MpiLayout{8, 1, ""}};
  if (SoakMode()) layouts.push_back(MpiLayout{4, 2, "self,tcp"});
  for (const MpiLayout& layout : layouts) {
    SCOPED_TRACE(layout.Name());
    const std::string saved = Path("mpi_" + layout.Name());
    const Launch mpi = Mpi(layout, Concat({"train", model, "--steps", "3", "-o", saved}, MpiFlags(layout)));
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    EXPECT_NE(mpi.out.find("MPI rank"), std::string::npos) << mpi.out;
    EXPECT_NE(mpi.out.find("sharded carry"), std::string::npos) << mpi.out;
    // Rank 0 alone reports: one line per step, the losses of the threads backend (printed with
    // 4 decimals; the sums' order differs between the backends, so the last digit may too).
    const std::vector<double> losses = Losses(mpi.out);
    ASSERT_EQ(losses.size(), 3u) << mpi.out;
    for (size_t k = 0; k < losses.size(); ++k) EXPECT_NEAR(losses[k], Losses(threads.out)[k], 2e-4) << k;
    ExpectSameSavedOutputs(saved, Path("threads"), 1e-5);
  }
}

TEST_F(TrainMpiTest, CorpusStepWithCarryTrainsLikeThreads) {
  std::vector<std::string> train = {"train", (kTrainStep / "pre.hlo").string(), "--steps", "3", "--carry",
                                    "1:2,2:3,3:4,4:5,5:6,6:7,7:8,8:9"};
  for (int i = 0; i < 10; ++i) train = Concat(train, {"-i", (kTrainStep / ("in" + std::to_string(i) + ".npy")).string()});
  const Launch threads = Gspmd(Concat(train, {"-o", Path("threads")}));
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  const MpiLayout layout{2, 4, ""};
  const Launch mpi = Mpi(layout, Concat(Concat(train, {"-o", Path("mpi")}), MpiFlags(layout)));
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  ExpectSameSavedOutputs(Path("mpi"), Path("threads"), 1e-5);
}

// Issue 26: the dense LM and the MoE with their dots as windowed loops (asynchronous permutes:
// MPI_Isend/Irecv in flight while the trip's dot runs) train with --check under MPI: the ranks
// assemble every step's outputs on rank 0, which matches them with one device. The job runs the
// windowed program (its header gives that program's communication) and saves what the threads
// backend does.
TEST_F(TrainMpiTest, WindowedEinsumAlwaysMatchesOneDeviceOnEveryStep) {
  const std::vector<windowed_train::WindowedModel> models = windowed_train::WindowedModels();
  const std::vector<MpiLayout> layouts = {MpiLayout{8, 1, ""}, MpiLayout{2, 4, ""}};
  for (size_t m = 0; m < models.size(); ++m) {
    const windowed_train::WindowedModel& model = models[m];
    const MpiLayout& layout = layouts[m % layouts.size()];
    SCOPED_TRACE(model.name + " on " + layout.Name());
    const std::string hlo = Path(model.name + ".hlo");
    const Launch written = Gspmd(Concat(Concat({"model"}, model.args), {"-o", hlo}));
    ASSERT_EQ(written.exit_code, 0) << written.err;
    const std::string part = Path(model.name + ".part.hlo");
    const Launch partitioned = Gspmd({"partition", hlo, "--windowed-einsum", "always", "-o", part});
    ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
    EXPECT_GT(windowed_train::CountWindowedLoops(ReadText(part)), 0);
    EXPECT_GT(windowed_train::Occurrences(ReadText(part), "collective-permute-start("), 0);
    const std::string communicated = windowed_train::CommunicatedPerDevice(partitioned.err);
    ASSERT_FALSE(communicated.empty()) << partitioned.err;

    const std::vector<std::string> train = {"train", hlo, "--steps", "3", "--check", "--windowed-einsum", "always"};
    const std::string mpi_dir = Path(model.name + "_mpi"), threads_dir = Path(model.name + "_threads");
    const Launch mpi = Mpi(layout, Concat(Concat(train, {"-o", mpi_dir}), MpiFlags(layout)));
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err << mpi.out;
    EXPECT_NE(mpi.out.find("sharded carry"), std::string::npos) << mpi.out;
    EXPECT_NE(mpi.out.find("communication per step and device: " + communicated + ":"), std::string::npos)
        << communicated << "\n" << mpi.out;
    EXPECT_EQ(windowed_train::Occurrences(mpi.out, "  check ok"), 3) << mpi.out;
    EXPECT_NE(mpi.out.find("every step matched one device"), std::string::npos) << mpi.out;

    const Launch threads = Gspmd(Concat(train, {"-o", threads_dir, "--progress", "lines"}));
    ASSERT_EQ(threads.exit_code, 0) << threads.err << threads.out;
    ExpectSameSavedOutputs(mpi_dir, threads_dir, 1e-5);
    const std::vector<double> checked = Losses(threads.out), losses = Losses(mpi.out);
    ASSERT_EQ(losses.size(), 3u) << mpi.out;
    ASSERT_EQ(checked.size(), 3u) << threads.out;
    for (size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(losses[i], checked[i], 2e-4) << i;
  }
}

// A step that differs from one device (tolerances no summation order meets) ends the whole
// job after that step: rank 0 says which output differs, every rank stops, nothing is saved.
TEST_F(TrainMpiTest, CheckEndsTheJobAtTheFirstDifference) {
  const std::string model = Path("lm.hlo");
  ASSERT_EQ(Gspmd({"model", "dense_lm", "-o", model}).exit_code, 0);
  const MpiLayout layout{4, 2, ""};
  const Launch mpi = Mpi(layout, Concat({"train", model, "--steps", "3", "--check", "--rtol", "1e-12", "--atol",
                                         "1e-15", "--windowed-einsum", "always", "-o", Path("saved")},
                                        MpiFlags(layout)));
  EXPECT_NE(mpi.exit_code, 0);
  EXPECT_NE(mpi.out.find("step 1/3"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.out.find("DIFFERS from one device"), std::string::npos) << mpi.out;
  EXPECT_EQ(mpi.out.find("step 2/3"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.err.find("gspmd: rank 0: " + model + ": error: step 1 on 8 devices differs from one device: output "),
            std::string::npos)
      << mpi.err;
  EXPECT_NE(mpi.err.find("(rtol 1e-12, atol 1e-15)"), std::string::npos) << mpi.err;
  EXPECT_EQ(mpi.err.find("internal error"), std::string::npos) << mpi.err;
  EXPECT_FALSE(fs::exists(Path("saved")));
}

TEST_F(TrainMpiTest, OptionsAndJobSizesThatDoNotFitGetClearErrors) {
  const std::string model = Path("moe.hlo");
  ASSERT_EQ(Gspmd({"model", "gshard_moe", "-o", model}).exit_code, 0);
  const MpiLayout two{2, 1, ""};
  struct Case {
    bool mpirun;
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {false, {"train", model, "--devices-per-rank", "2"}, "--devices-per-rank needs --backend mpi"},
      {false, {"train", model, "--backend", "mpi"}, "not started by an MPI launcher"},
      {true, Concat({"train", model, "--devices", "8"}, MpiFlags(two)), "--devices 8 does not match 2 MPI ranks"},
      {true, Concat({"train", model}, MpiFlags(two)), "the step is written for num_partitions=8 devices but the job has 2 MPI ranks x 1 device per rank = 2"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.message);
    const Launch launch = k.mpirun ? Mpi(two, k.args) : Gspmd(k.args);
    EXPECT_NE(launch.exit_code, 0);
    EXPECT_NE(launch.err.find(k.message), std::string::npos) << launch.err;
    EXPECT_EQ(launch.err.find("internal error"), std::string::npos) << launch.err;
  }
  EXPECT_FALSE(fs::exists(Path("saved")));
}

}  // namespace
}  // namespace gspmd::mpi_test
