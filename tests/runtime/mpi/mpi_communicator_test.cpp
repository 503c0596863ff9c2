// MpiCommunicator driven directly (tests/runtime/mpi/worker): uneven all-to-all, sub-
// communicators created once per group set, and a described error when ranks disagree.
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

}  // namespace
}  // namespace gspmd::mpi_test
