// Every reference case, from its pre.hlo (propagated and partitioned by gspmd on each rank), run
// by `mpirun ... gspmd run --backend mpi` with one device per rank and with several devices
// per rank, over shared memory and over TCP: the outputs equal the threads backend's (integers
// and booleans exactly, floats within rtol 1e-6; the ranks reduce in another order).
#include <algorithm>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

struct CorpusRun {
  std::string name;  // "gspmd_megatron_mlp_8x1"
  fs::path dir;
  MpiLayout layout;
};

void PrintTo(const CorpusRun& run, std::ostream* out) { *out << run.name; }

int64_t MeshDevices(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  const nlohmann::json meta = nlohmann::json::parse(in);
  int64_t devices = 1;
  for (const nlohmann::json& size : meta.at("mesh_shape")) devices *= size.get<int64_t>();
  return devices;
}

std::vector<CorpusRun> CorpusRuns() {
  std::vector<CorpusRun> runs;
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  std::vector<fs::path> cases;
  for (const char* flavor : {"gspmd", "shardy"}) {
    if (!fs::is_directory(root / flavor)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(root / flavor))
      if (fs::exists(entry.path() / "pre.hlo")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  for (const fs::path& dir : cases) {
    const int n = static_cast<int>(MeshDevices(dir));
    std::vector<MpiLayout> layouts = {{n, 1, ""}, {2, n / 2, ""}, {n, 1, "self,tcp"}, {2, n / 2, "self,tcp"}};
    // Soak: also n/2 ranks x 2 devices, unless that is the 2 x n/2 layout already (n = 4).
    if (SoakMode() && n % 4 == 0 && n / 2 != 2) layouts.push_back({n / 2, 2, ""});
    for (const MpiLayout& layout : layouts)
      runs.push_back({dir.parent_path().filename().string() + "_" + dir.filename().string() + "_" + layout.Name(), dir,
                      layout});
  }
  return runs;
}

class MpiCorpusTest : public MpiTest, public ::testing::WithParamInterface<CorpusRun> {};

TEST_P(MpiCorpusTest, OutputsEqualThreadsBackend) {
  const CorpusRun& run = GetParam();
  std::vector<std::string> inputs;
  for (int i = 0; fs::exists(run.dir / ("in" + std::to_string(i) + ".npy")); ++i) {
    inputs.push_back("-i");
    inputs.push_back((run.dir / ("in" + std::to_string(i) + ".npy")).string());
  }
  std::vector<std::string> threads = {"run", (run.dir / "pre.hlo").string(), "-o", Path("threads")};
  threads.insert(threads.end(), inputs.begin(), inputs.end());
  const Launch baseline = Gspmd(threads);
  ASSERT_EQ(baseline.exit_code, 0) << baseline.err;

  std::vector<std::string> mpi = {"run", (run.dir / "pre.hlo").string(), "--backend", "mpi", "--devices-per-rank",
                                  std::to_string(run.layout.devices_per_rank), "-o", Path("mpi")};
  mpi.insert(mpi.end(), inputs.begin(), inputs.end());
  const Launch launch = Mpi(run.layout, mpi);
  ASSERT_EQ(launch.exit_code, 0) << launch.err;
  ExpectSameOutputs(dir_ / "mpi", dir_ / "threads", 1e-6);
  // Rank 0 alone prints the output lines, the same as the threads backend's (but for the directory).
  size_t lines = static_cast<size_t>(std::count(launch.out.begin(), launch.out.end(), '\n'));
  EXPECT_EQ(lines, static_cast<size_t>(std::count(baseline.out.begin(), baseline.out.end(), '\n'))) << launch.out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, MpiCorpusTest, ::testing::ValuesIn(CorpusRuns()),
                         [](const ::testing::TestParamInfo<CorpusRun>& info) { return info.param.name; });

}  // namespace
}  // namespace gspmd::mpi_test
