// api::RunJob and api::TrainJob, the calls `gspmd run` and `gspmd train` make: files in, files
// out, the same values as api::Run and api::Train on arrays in memory (the MPI jobs run under
// mpirun in gspmd_mpi_tests).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/gspmd.h"
#include "io/array_source.h"
#include "io/npy.h"

namespace gspmd::api {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd";

std::vector<std::string> InputFiles(const fs::path& dir, int count) {
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) files.push_back((dir / ("in" + std::to_string(i) + ".npy")).string());
  return files;
}

int CountInputs(const fs::path& dir) {
  int count = 0;
  while (fs::exists(dir / ("in" + std::to_string(count) + ".npy"))) ++count;
  return count;
}

// out_dir/out<i>.npy, or with `names` (train --save) the file index.json names for output i.
void ExpectSameBytes(const std::vector<Literal>& expected, const fs::path& out_dir, bool names = false) {
  nlohmann::json index;
  if (names) index = nlohmann::json::parse(std::ifstream(out_dir / "index.json"))["outputs"];
  if (names) ASSERT_EQ(index.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string file = names ? index[i]["file"].get<std::string>() : "out" + std::to_string(i) + ".npy";
    const Literal written = ReadArrayFile((out_dir / file).string());
    ASSERT_TRUE(written.shape().Compatible(expected[i].shape())) << "output " << i;
    const std::vector<uint8_t> written_bytes(written.raw(), written.raw() + written.byte_size());
    const std::vector<uint8_t> expected_bytes(expected[i].raw(), expected[i].raw() + expected[i].byte_size());
    EXPECT_EQ(written_bytes, expected_bytes) << "output " << i;
  }
}

class JobApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gspmd_job_api_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(JobApiTest, RunJobWritesWhatRunReturns) {
  const fs::path case_dir = kCorpus / "dp_matmul";
  RunJobOptions job;
  job.file = (case_dir / "pre.hlo").string();
  job.inputs = InputFiles(case_dir, CountInputs(case_dir));
  job.out_dir = (dir_ / "out").string();
  ASSERT_TRUE(RunJob(job));
  std::vector<Literal> inputs;
  for (const std::string& file : job.inputs) inputs.push_back(ReadArrayFile(file));
  ExpectSameBytes(api::Run(Program::Load(job.file), inputs), dir_ / "out");
}

TEST_F(JobApiTest, RunJobOfAPerDeviceProgramWithItsGlobalOne) {
  const fs::path case_dir = kCorpus / "transformer_train_1l";
  RunJobOptions job;
  job.file = (case_dir / "partitioned.hlo").string();
  job.per_device = true;
  job.like = (case_dir / "propagated.hlo").string();
  job.inputs = InputFiles(case_dir, CountInputs(case_dir));
  job.out_dir = (dir_ / "out").string();
  ASSERT_TRUE(RunJob(job));
  std::vector<Literal> inputs;
  for (const std::string& file : job.inputs) inputs.push_back(ReadArrayFile(file));
  const Program like = Program::Load(job.like);
  RunOptions options;
  options.like = &like;
  ExpectSameBytes(api::Run(Program::Load(job.file), inputs, options), dir_ / "out");
}

TEST_F(JobApiTest, TrainJobSavesWhatTrainReturns) {
  const fs::path case_dir = kCorpus / "transformer_train_1l";
  TrainJobOptions job;
  job.file = (case_dir / "pre.hlo").string();
  job.steps = 2;
  job.inputs = InputFiles(case_dir, CountInputs(case_dir));
  job.train.carry = "1:2,2:3,3:4,4:5,5:6,6:7,7:8,8:9";
  job.save = (dir_ / "saved").string();
  job.progress = "quiet";
  ASSERT_TRUE(TrainJob(job));
  TrainOptions options;
  options.carry = "1:2,2:3,3:4,4:5,5:6,6:7,7:8,8:9";
  for (const std::string& file : job.inputs) options.inputs.push_back(ReadArrayFile(file));
  ExpectSameBytes(Train(Program::Load(job.file), 2, std::move(options)), dir_ / "saved", true);
}

}  // namespace
}  // namespace gspmd::api
