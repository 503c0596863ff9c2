// The asynchronous collective-permute under `mpirun ... gspmd run --backend mpi`: MPI_Isend /
// MPI_Irecv at collective-permute-start, MPI_Testall at -done. A ring loop with two permutes in
// flight per trip gives the bits of the threads backend (and of blocking permutes); programs
// partitioned with --windowed-einsum always (whose loops run their permutes asynchronously)
// equal off; a rank that stops or dies while a permute is in flight ends the job with an
// error naming it; and the dense LM trains with windowed einsum like one device.
#include <string>
#include <vector>

#include "io/npy.h"
#include "runtime/async_permute_program.h"
#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

using async_permute_test::RingInputs;
using async_permute_test::RingProgram;

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class MpiAsyncPermuteTest : public MpiTest {
 protected:
  // Writes the ring program for n devices (async or not) and its inputs; returns the args of
  // `gspmd run` without -o.
  std::vector<std::string> RingRun(int64_t n, bool async) {
    const std::string program = Path(StrCat("ring", n, async ? "_async" : "_sync", ".hlo"));
    std::ofstream(program) << RingProgram(n, async);
    std::vector<std::string> args = {"run", program, "--per-device"};
    std::vector<Literal> inputs = RingInputs(n);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string file = Path(StrCat("ring", n, "_in", i, ".npy"));
      WriteNpy(file, inputs[i]);
      args.push_back("-i");
      args.push_back(file);
    }
    return args;
  }
};

std::vector<std::string> MpiFlags(const MpiLayout& layout, double timeout = 60) {
  return {"--backend", "mpi", "--devices-per-rank", std::to_string(layout.devices_per_rank), "--collective-timeout",
          std::to_string(timeout)};
}

TEST_F(MpiAsyncPermuteTest, RingLoopGivesTheBitsOfThreadsAndOfBlockingPermutes) {
  for (int64_t n : {4, 8}) {
    SCOPED_TRACE(n);
    const std::string threads = Path(StrCat("threads", n)), sync = Path(StrCat("sync", n));
    const Launch on_threads = Gspmd(Concat(RingRun(n, true), {"-o", threads}));
    ASSERT_EQ(on_threads.exit_code, 0) << on_threads.err;
    const Launch blocking = Gspmd(Concat(RingRun(n, false), {"-o", sync}));
    ASSERT_EQ(blocking.exit_code, 0) << blocking.err;
    ExpectSameOutputs(threads, sync, 0);
    std::vector<MpiLayout> layouts = {MpiLayout{static_cast<int>(n), 1, ""}, MpiLayout{2, static_cast<int>(n / 2), ""}};
    if (SoakMode()) layouts.push_back(MpiLayout{static_cast<int>(n), 1, "self,tcp"});
    for (const MpiLayout& layout : layouts) {
      SCOPED_TRACE(layout.Name());
      const std::string out = Path(StrCat("mpi", n, "_", layout.Name()));
      const Launch mpi = Mpi(layout, Concat(Concat(RingRun(n, true), MpiFlags(layout)), {"-o", out}));
      ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
      ExpectSameOutputs(out, threads, 0);
    }
  }
}

// A dot whose LHS rows are split over n devices, its result replicated: windowed, the loop's
// permute runs asynchronously.
std::string FreeDimDot(int n) {
  return StrCat("HloModule m, num_partitions=", n, "\nENTRY e {\n  %x = f32[", 3 * n,
                ",16] parameter(0), sharding={devices=[", n, ",1]<=[", n,
                "]}\n  %w = f32[16,24] parameter(1), sharding={replicated}\n  ROOT %d = f32[", 3 * n,
                ",24] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n}\n");
}

TEST_F(MpiAsyncPermuteTest, WindowedEinsumAlwaysEqualsOff) {
  for (int n : {4, 8}) {
    SCOPED_TRACE(n);
    const std::string program = Path(StrCat("dot", n, ".hlo"));
    std::ofstream(program) << FreeDimDot(n);
    const Launch partitioned = Gspmd({"partition", program, "--windowed-einsum", "always"});
    ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
    EXPECT_NE(partitioned.out.find("collective-permute-start"), std::string::npos) << partitioned.out;
    const std::vector<std::string> inputs = {"-i", Path(StrCat("x", n, ".npy")), "-i", Path(StrCat("w", n, ".npy"))};
    Literal x(Shape(ElementType::kF32, {3 * n, 16})), w(Shape(ElementType::kF32, {16, 24}));
    for (int64_t e = 0; e < x.element_count(); ++e) x.SetFromDouble(e, static_cast<double>((e * 13) % 29) / 8 - 1.5);
    for (int64_t e = 0; e < w.element_count(); ++e) w.SetFromDouble(e, static_cast<double>((e * 7) % 19) / 4 - 2.0);
    WriteNpy(inputs[1], x);
    WriteNpy(inputs[3], w);
    const std::string off = Path(StrCat("off", n));
    const Launch reference = Gspmd(Concat({"run", program, "--windowed-einsum", "off", "-o", off}, inputs));
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    const std::string threads = Path(StrCat("always_threads", n));
    const Launch windowed = Gspmd(Concat({"run", program, "--windowed-einsum", "always", "-o", threads}, inputs));
    ASSERT_EQ(windowed.exit_code, 0) << windowed.err;
    ExpectSameOutputs(threads, off, 0);
    const MpiLayout layout{n, 1, ""};
    const std::string mpi_out = Path(StrCat("always_mpi", n));
    const Launch mpi = Mpi(layout, Concat(Concat({"run", program, "--windowed-einsum", "always", "-o", mpi_out},
                                                 MpiFlags(layout)),
                                          inputs));
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    ExpectSameOutputs(mpi_out, off, 0);
  }
}

// Rank 1 stops (or dies) at its second permute-start of the first trip, while its first is in
// flight: the job ends within the timeout with an error naming rank 1 (exit code 1; a crash
// is mpirun's to report, with the signal), and writes nothing. With 2 devices per rank, both
// of rank 0's devices wait for permutes at once.
TEST_F(MpiAsyncPermuteTest, RankThatStopsWithAPermuteInFlightEndsTheJob) {
  const double timeout = 2;
  for (const MpiLayout& layout : {MpiLayout{4, 1, ""}, MpiLayout{2, 2, ""}}) {
    SCOPED_TRACE(layout.Name());
    const std::vector<std::string> args =
        Concat(Concat(RingRun(4, true), MpiFlags(layout, timeout)), {"-o", Path("out")});
    const Launch hang = Mpi(layout, args, "rank=1,after=1,mode=hang");
    EXPECT_EQ(hang.exit_code, 1) << hang.err;
    EXPECT_GE(hang.seconds, timeout);
    EXPECT_LT(hang.seconds, timeout + 10) << hang.err;
    EXPECT_NE(hang.err.find("collective-permute-done"), std::string::npos) << hang.err;
    EXPECT_NE(hang.err.find("--collective-timeout 2.0 s"), std::string::npos) << hang.err;
    // Whichever rank reports (the one that waited longest), rank 1 is the one that never came.
    EXPECT_NE(hang.err.find("rank 1 has completed 0 collectives and is not in one"), std::string::npos) << hang.err;
    EXPECT_TRUE(FilesIn(dir_ / "out").empty());
  }
  const MpiLayout layout{4, 1, ""};
  const std::vector<std::string> args = Concat(Concat(RingRun(4, true), MpiFlags(layout, 60)), {"-o", Path("out")});
  const Launch crash = Mpi(layout, args, "rank=1,after=1,mode=crash");
  EXPECT_NE(crash.exit_code, 0) << crash.err;
  EXPECT_LT(crash.seconds, 10) << crash.err;
  EXPECT_NE(crash.err.find("rank 1"), std::string::npos) << crash.err;
  EXPECT_NE(crash.err.find("signal 11"), std::string::npos) << crash.err;
  EXPECT_TRUE(FilesIn(dir_ / "out").empty());
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

// The dense LM with windowed einsum: on threads every step matches one device (--check); under
// MPI the losses and the last step's outputs are the threads backend's.
TEST_F(MpiAsyncPermuteTest, DenseLmWithWindowedEinsumTrainsLikeOneDevice) {
  const std::string model = Path("dense.hlo");
  ASSERT_EQ(Gspmd({"model", "dense_lm", "-o", model}).exit_code, 0);
  const std::vector<std::string> train = {"train", model, "--steps", "2", "--windowed-einsum", "always",
                                          "--progress", "lines"};
  const Launch partitioned = Gspmd({"partition", model, "--windowed-einsum", "always"});
  ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
  EXPECT_NE(partitioned.out.find("collective-permute-start"), std::string::npos);
  const Launch threads = Gspmd(Concat(train, {"--check", "-o", Path("threads")}));
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  EXPECT_NE(threads.out.find("every step matched one device"), std::string::npos) << threads.out;
  ASSERT_EQ(Losses(threads.out).size(), 2u) << threads.out;
  const MpiLayout layout{8, 1, ""};
  const Launch mpi = Mpi(layout, Concat(train, Concat(MpiFlags(layout), {"-o", Path("mpi")})));
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  const std::vector<double> losses = Losses(mpi.out);
  ASSERT_EQ(losses.size(), 2u) << mpi.out;
  for (size_t k = 0; k < losses.size(); ++k) EXPECT_NEAR(losses[k], Losses(threads.out)[k], 2e-4) << k;
}

}  // namespace
}  // namespace gspmd::mpi_test
