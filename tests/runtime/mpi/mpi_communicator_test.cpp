// MpiCommunicator driven directly (tests/runtime/mpi/worker): uneven all-to-all, sub-
// communicators created once per group set, and a described error when ranks disagree (with
// both forms of the agreement check).
#include <algorithm>

#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

class MpiCommunicatorTest : public MpiTest {};

TEST_F(MpiCommunicatorTest, WorkerChecksPassOnEveryLayout) {
  for (const MpiLayout& layout : {MpiLayout{4, 1, ""}, MpiLayout{2, 2, ""}, MpiLayout{4, 2, "self,tcp"}}) {
    SCOPED_TRACE(layout.Name());
    const Launch launch =
        Run(MpirunPrefix(layout) + " " + Quote(GSPMD_MPI_WORKER) + " " + std::to_string(layout.devices_per_rank));
    EXPECT_EQ(launch.exit_code, 0) << launch.out << launch.err;
    EXPECT_EQ(std::count(launch.out.begin(), launch.out.end(), '\n'), layout.ranks + 1) << launch.out;
    EXPECT_EQ(launch.out.find("FAIL"), std::string::npos) << launch.out;
    EXPECT_NE(launch.out.find("rank 0 reports: ranks disagree"), std::string::npos) << launch.out;
  }
}

// Groups of more than GSPMD_MPI_GATHERED_CHECK_RANKS ranks (64 unless a test lowers it) check
// that they agree with a reduction instead of gathering every rank's signature: the same checks,
// the same report of the disagreeing ranks.
TEST_F(MpiCommunicatorTest, WorkerChecksPassWithTheReducedAgreementCheck) {
  const MpiLayout layout{4, 1, ""};
  const Launch launch = Run("env GSPMD_MPI_GATHERED_CHECK_RANKS=1 " + MpirunPrefix(layout) +
                            " -x GSPMD_MPI_GATHERED_CHECK_RANKS " + Quote(GSPMD_MPI_WORKER) + " 1");
  EXPECT_EQ(launch.exit_code, 0) << launch.out << launch.err;
  EXPECT_EQ(launch.out.find("FAIL"), std::string::npos) << launch.out;
  EXPECT_NE(launch.out.find("rank 0 reports: ranks disagree"), std::string::npos) << launch.out;
}

// Ranks that disagree on an all-reduce's size block inside MPI: the watchdog ends the job
// after the timeout, describing what each rank waits in.
TEST_F(MpiCommunicatorTest, DisagreeingSizesEndAfterTheTimeout) {
  const Launch launch = Run(MpirunPrefix({4, 1, ""}) + " " + Quote(GSPMD_MPI_WORKER) + " 1 sizes");
  EXPECT_NE(launch.exit_code, 0);
  EXPECT_LT(launch.seconds, 2 + 10);
  EXPECT_EQ(launch.out.find("returned"), std::string::npos) << launch.out;
  EXPECT_NE(launch.err.find("every rank has reached it, so the ranks disagree on what it is"), std::string::npos)
      << launch.err;
  // Whichever rank reports names both collectives (its own first).
  EXPECT_NE(launch.err.find("collective #1 (all-reduce of 8 bytes of u8 (add)"), std::string::npos) << launch.err;
  EXPECT_NE(launch.err.find("collective #1 (all-reduce of 16 bytes of u8 (add)"), std::string::npos) << launch.err;
}

}  // namespace
}  // namespace gspmd::mpi_test
