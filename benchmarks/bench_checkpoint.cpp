// Benchmark of checkpoint write and restore bandwidth on 8 MPI ranks, side by side with a plain
// write and read of the same bytes: 1 GiB of state (8 f32 arrays of 128 MiB, each split 8 ways,
// so every rank holds 128 MiB), written as a checkpoint (rank 0 prepares, every rank writes its
// chunks and syncs, rank 0 gathers the file list and commits) and as one plain file per rank
// (write + fsync), then restored (each rank reads its shards' regions of the chunks) and read
// back plainly. Reads are served from the page cache when it holds the files.
//   mpirun --oversubscribe --bind-to none -np 8 build/benchmarks/bench_checkpoint [--benchmark_repetitions=3]
// Counters: GiB/s of each, and checkpoint / plain (target >= 0.8); verify_s is rank 0 reading
// and checksumming the whole checkpoint (what --resume does before loading).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <memory>
#include <sstream>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/durable_files.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/spmd_plan.h"
#include "sharding/sharding_text.h"
#include "support/diagnostic.h"

namespace gspmd {

MpiSession* g_session = nullptr;
namespace fs = std::filesystem;

constexpr int64_t kArrays = 8;
constexpr int64_t kRows = 8 * 4096;  // x 1024 f32 = 128 MiB per array
constexpr int64_t kCols = 1024;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Rank 0 gathers every rank's file list (as text, like the trainer's coordinator).
std::vector<CheckpointFile> Gather(MpiSession& session, std::vector<CheckpointFile> files) {
  constexpr int kTag = 0x4351;
  if (session.rank() != 0) {
    const std::string text = WriteFileList(files);
    const uint64_t size = text.size();
    session.Send(0, kTag, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&size), 8), "size");
    session.Send(0, kTag + 1, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), size), "files");
    return files;
  }
  for (int r = 1; r < session.size(); ++r) {
    uint64_t size = 0;
    session.Recv(r, kTag, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&size), 8), "size");
    std::string text(size, '\0');
    session.Recv(r, kTag + 1, std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), size), "files");
    ReadFileList(text, files);
  }
  return files;
}

void BM_CheckpointVsPlain(benchmark::State& state) {
  MpiSession& session = *g_session;
  const int rank = session.rank();
  const int64_t devices = session.size();
  const std::string root = (fs::temp_directory_path() / "gspmd_bench_checkpoint").string();
  if (rank == 0) {
    fs::remove_all(root);
    fs::create_directories(root + "/plain");
  }
  session.Barrier("setup");

  CheckpointMeta meta;
  meta.fingerprint = "0000000000000000";
  meta.num_devices = devices;
  const Shape global(ElementType::kF32, {kRows, kCols});
  for (int64_t i = 0; i < kArrays; ++i) {
    SpmdLeaf leaf;
    leaf.sharding = ParseSharding(StrCat("{devices=[", devices, ",1]<=[", devices, "]}"));
    leaf.global = global;
    leaf.local = Shape(ElementType::kF32, leaf.sharding.ShardDims(global.dims()));
    meta.arrays.push_back({StrCat("w", i), i, i, leaf});
  }
  std::vector<Literal> shards;
  for (int64_t i = 0; i < kArrays; ++i) {
    shards.emplace_back(meta.arrays[i].leaf.local);
    float* data = shards.back().data<float>();
    for (int64_t e = 0; e < shards.back().element_count(); ++e) data[e] = static_cast<float>(e % 977) * 0.5f + rank;
  }
  std::vector<const Literal*> pointers;
  for (const Literal& shard : shards) pointers.push_back(&shard);
  const double bytes = static_cast<double>(kArrays) * shards[0].byte_size() * devices;

  double plain_write = 0, plain_read = 0, ck_write = 0, ck_read = 0, verify = 0, prepare = 0, chunks = 0;
  int64_t step = 0;
  for (auto _ : state) {
    ++step;
    // Both write new files: last iteration's are removed first, untimed.
    if (rank == 0 && step > 1) fs::remove_all(root + "/" + CheckpointDirName(step - 1));
    fs::remove(StrCat(root, "/plain/rank", rank));
    // Plain: one file per rank, the same bytes, write + fsync.
    session.Barrier("plain write");
    auto start = std::chrono::steady_clock::now();
    {
      std::vector<uint8_t> all;
      const std::string path = StrCat(root, "/plain/rank", rank);
      const int64_t each = shards[0].byte_size();
      all.resize(static_cast<size_t>(each * kArrays));
      for (int64_t i = 0; i < kArrays; ++i) std::memcpy(all.data() + i * each, shards[i].raw(), each);
      start = std::chrono::steady_clock::now();  // the copy above is not I/O
      WriteFileDurably(path, all);
    }
    session.Barrier("plain write done");
    plain_write += Since(start);

    // Checkpoint: prepare (rank 0), chunks (every rank), gather + commit (rank 0).
    session.Barrier("checkpoint write");
    start = std::chrono::steady_clock::now();
    meta.step = step;
    meta.files.clear();
    auto phase = std::chrono::steady_clock::now();
    if (rank == 0) PrepareCheckpoint(root, meta);
    session.Barrier("prepared");
    prepare += Since(phase);
    phase = std::chrono::steady_clock::now();
    const std::string tmp = root + "/.tmp-" + CheckpointDirName(step);
    std::vector<CheckpointFile> mine = WriteDeviceChunks(tmp, meta, rank, pointers);
    SyncFilesystem(tmp);
    meta.files = Gather(session, std::move(mine));
    chunks += Since(phase);
    if (rank == 0) CommitCheckpoint(root, tmp, meta, /*keep=*/0);
    session.Barrier("committed");
    ck_write += Since(start);

    // Plain read.
    session.Barrier("plain read");
    start = std::chrono::steady_clock::now();
    {
      std::ifstream in(StrCat(root, "/plain/rank", rank), std::ios::binary);
      std::vector<char> back(static_cast<size_t>(shards[0].byte_size() * kArrays));
      in.read(back.data(), static_cast<std::streamsize>(back.size()));
      benchmark::DoNotOptimize(back.data());
    }
    session.Barrier("plain read done");
    plain_read += Since(start);

    // Restore: every rank reads its shards' regions of the chunks.
    const std::string dir = root + "/" + CheckpointDirName(step);
    session.Barrier("restore");
    start = std::chrono::steady_clock::now();
    {
      const CheckpointMeta stored = ReadCheckpointMeta(dir);
      const std::vector<std::unique_ptr<ArraySource>> sources = OpenCheckpointArrays(dir, stored);
      for (size_t i = 0; i < sources.size(); ++i) {
        Literal shard = ReadShard(*sources[i], stored.arrays[i].leaf.sharding, rank);
        benchmark::DoNotOptimize(shard.raw());
      }
    }
    session.Barrier("restored");
    ck_read += Since(start);

    if (rank == 0) {
      start = std::chrono::steady_clock::now();
      GSPMD_CHECK(VerifyCheckpoint(dir).empty(), "the checkpoint does not verify");
      verify += Since(start);
    }
    session.Barrier("verified");
  }
  const double n = static_cast<double>(state.iterations());
  const double gib = bytes / (1 << 30);
  state.counters["GiB"] = gib;
  state.counters["plain_write_GiBps"] = gib * n / plain_write;
  state.counters["checkpoint_write_GiBps"] = gib * n / ck_write;
  state.counters["write_ratio"] = plain_write / ck_write;
  state.counters["plain_read_GiBps"] = gib * n / plain_read;
  state.counters["restore_GiBps"] = gib * n / ck_read;
  state.counters["read_ratio"] = plain_read / ck_read;
  state.counters["checkpoint_write_s"] = ck_write / n;
  state.counters["verify_s"] = verify / n;
  state.counters["prepare_s"] = prepare / n;  // rank 0: directories and .zarray files
  state.counters["chunks_s"] = chunks / n;    // every rank's chunks, until rank 0 has the list
  session.Barrier("end");
  if (rank == 0) fs::remove_all(root);
}
BENCHMARK(BM_CheckpointVsPlain)->Unit(benchmark::kSecond)->Iterations(2)->UseRealTime();

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace gspmd

int main(int argc, char** argv) {
  gspmd::MpiSession session(gspmd::MpiSessionOptions{600});
  gspmd::g_session = &session;
  benchmark::Initialize(&argc, argv);
  gspmd::NullReporter quiet;  // only rank 0 reports; the others run the same iterations
  if (session.rank() == 0) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&quiet);
  benchmark::Shutdown();
  return 0;
}
