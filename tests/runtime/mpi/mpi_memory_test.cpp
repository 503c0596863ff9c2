// Data at scale: 8 ranks add two 512 MiB inputs (1 GiB in all) sharded by rows. Each rank reads
// only its rows and rank 0 writes the 512 MiB global result window by window, so no rank's peak
// resident memory exceeds the bytes of its own shards by more than a fixed overhead (the
// process itself, MPI, the output window). The figures are printed for docs/performance.md.
#include <regex>

#include "io/npy.h"
#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

constexpr int64_t kRows = 16384, kColumns = 8192;  // f32: 512 MiB per input
// What a rank may hold beyond its shards: the binary and its libraries (oneDNN, OpenMPI),
// the allocator's slack, MPI's buffers, rank 0's 16 MiB output window and the piece it receives.
constexpr double kOverheadMiB = 64;

float A(int64_t i, int64_t j) { return static_cast<float>((i * 7 + j) % 1024); }
float B(int64_t i, int64_t j) { return static_cast<float>((i + j * 3) % 512); }

// Writes an f32[kRows, kColumns] .npy file row block by row block (never the whole array).
void WriteBigInput(const std::string& path, float (*value)(int64_t, int64_t)) {
  const std::string header = NpyHeaderBytes(ElementType::kF32, {kRows, kColumns});
  std::ofstream out(path, std::ios::binary);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  std::vector<float> rows(static_cast<size_t>(256 * kColumns));
  for (int64_t block = 0; block < kRows; block += 256) {
    for (int64_t i = 0; i < 256; ++i)
      for (int64_t j = 0; j < kColumns; ++j) rows[static_cast<size_t>(i * kColumns + j)] = value(block + i, j);
    out.write(reinterpret_cast<const char*>(rows.data()), static_cast<std::streamsize>(rows.size() * sizeof(float)));
  }
  ASSERT_TRUE(out.good()) << path;
}

class MpiMemoryTest : public MpiTest {};

TEST_F(MpiMemoryTest, PeakMemoryStaysNearOwnShards) {
  const std::string per_rank = std::to_string(kRows / 8);
  const std::string program = Path("add.hlo");
  std::ofstream(program) << "HloModule add_big, num_partitions=8\n\nENTRY e {\n  a = f32[" << per_rank << "," << kColumns
                         << "] parameter(0), sharding={devices=[8,1]<=[8]}\n  b = f32[" << per_rank << "," << kColumns
                         << "] parameter(1), sharding={devices=[8,1]<=[8]}\n  ROOT c = f32[" << per_rank << ","
                         << kColumns << "] add(a, b), sharding={devices=[8,1]<=[8]}\n}\n";
  WriteBigInput(Path("a.npy"), A);
  WriteBigInput(Path("b.npy"), B);

  const Launch launch = Mpi({8, 1, ""}, {"run", program, "--per-device", "--backend", "mpi", "--report-memory", "-i",
                                         Path("a.npy"), "-i", Path("b.npy"), "-o", Path("out")});
  ASSERT_EQ(launch.exit_code, 0) << launch.err;

  // "gspmd: rank 3: peak RSS 230.1 MiB; own shards 192.0 MiB (...)"
  const std::regex line(R"(gspmd: rank (\d+): peak RSS ([0-9.]+) MiB; own shards ([0-9.]+) MiB)");
  int reports = 0;
  double worst_excess = 0;
  for (std::sregex_iterator it(launch.err.begin(), launch.err.end(), line), end; it != end; ++it) {
    const double peak = std::stod((*it)[2]), shards = std::stod((*it)[3]);
    EXPECT_NEAR(shards, 192.0, 0.1);
    EXPECT_LE(peak, shards + kOverheadMiB) << (*it)[0];
    worst_excess = std::max(worst_excess, peak - shards);
    ++reports;
    std::printf("%s\n", std::string((*it)[0]).c_str());
  }
  EXPECT_EQ(reports, 8) << launch.err;
  std::printf("largest peak RSS beyond own shards: %.1f MiB (bound %.0f MiB); global inputs 1024 MiB\n", worst_excess,
              kOverheadMiB);

  // The result, spot-checked row by row without reading it whole.
  const std::string out = Path("out/out0.npy");
  const NpyHeader header = ReadNpyHeader(out);
  ASSERT_EQ(header.dims, (std::vector<int64_t>{kRows, kColumns}));
  for (int64_t row : {int64_t{0}, int64_t{2047}, int64_t{2048}, int64_t{9000}, kRows - 1}) {
    std::vector<float> values(static_cast<size_t>(kColumns));
    ReadNpyBox(out, header, Box{{row, 0}, {1, kColumns}}, reinterpret_cast<uint8_t*>(values.data()), {1, kColumns},
               {0, 0});
    for (int64_t j = 0; j < kColumns; j += 511) ASSERT_EQ(values[static_cast<size_t>(j)], A(row, j) + B(row, j)) << row;
  }
}

}  // namespace
}  // namespace gspmd::mpi_test
