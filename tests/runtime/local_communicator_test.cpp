// Tests of LocalCommunicator called directly from device threads: data movement, reductions,
// size mismatches, aborts and devices that finish without joining a collective.
#include "runtime/comm/local_communicator.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/comm/reduction.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

template <typename T>
std::span<const uint8_t> In(const std::vector<T>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)};
}
template <typename T>
std::span<uint8_t> Out(std::vector<T>& v) {
  return {reinterpret_cast<uint8_t*>(v.data()), v.size() * sizeof(T)};
}

// What happened on each device thread.
struct Outcome {
  bool ok = false;
  bool aborted = false;
  std::string user_error;
};

// Runs body(d) on n threads sharing one communicator, with the executor's error handling.
std::vector<Outcome> OnThreads(LocalCommunicator& communicator,
                               const std::function<void(int64_t)>& body) {
  const int64_t n = communicator.num_devices();
  std::vector<Outcome> outcomes(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      Outcome& outcome = outcomes[static_cast<size_t>(d)];
      try {
        body(d);
        communicator.DeviceFinished(d);
        outcome.ok = true;
      } catch (const CommunicatorAborted&) {
        outcome.aborted = true;
      } catch (const UserError& error) {
        outcome.user_error = error.what();
        communicator.Abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(LocalCommunicatorTest, AllReduceLargeBufferSplitsWorkAcrossMembers) {
  // Larger than one reduction block, and not a multiple of the member count.
  const int64_t n = 5, count = 100003;
  LocalCommunicator communicator(n);
  std::vector<std::vector<double>> outputs(n, std::vector<double>(count));
  std::vector<int64_t> group = Iota(n);
  OnThreads(communicator, [&](int64_t d) {
    std::vector<double> input(count);
    for (int64_t e = 0; e < count; ++e) input[e] = static_cast<double>(d * count + e);
    communicator.AllReduce(d, group, ElementType::kF64, BinaryReducer::kAdd, In(input), Out(outputs[d]));
  });
  for (int64_t d = 0; d < n; ++d)
    for (int64_t e = 0; e < count; e += 997)
      EXPECT_EQ(outputs[d][e], static_cast<double>(n * e + count * (n * (n - 1) / 2)));
}

TEST(LocalCommunicatorTest, AllReduceInPlace) {
  const int64_t n = 3;
  LocalCommunicator communicator(n);
  std::vector<std::vector<int32_t>> data(n, std::vector<int32_t>(7));
  OnThreads(communicator, [&](int64_t d) {
    for (int e = 0; e < 7; ++e) data[d][e] = static_cast<int32_t>(d + e);
    communicator.AllReduce(d, Iota(n), ElementType::kS32, BinaryReducer::kMaximum, In(data[d]), Out(data[d]));
  });
  for (int64_t d = 0; d < n; ++d)
    for (int e = 0; e < 7; ++e) EXPECT_EQ(data[d][e], 2 + e);
}

TEST(LocalCommunicatorTest, ReductionKernelsFollowHloSemantics) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> acc = {1.0f, nan, 3.0f};
  std::vector<float> in = {nan, 2.0f, -1.0f};
  ReduceInto(ElementType::kF32, BinaryReducer::kMaximum, acc.data(), in.data(), 3);
  EXPECT_TRUE(std::isnan(acc[0]));
  EXPECT_TRUE(std::isnan(acc[1]));
  EXPECT_EQ(acc[2], 3.0f);
  std::vector<int8_t> wrap = {127, -128};
  std::vector<int8_t> one = {1, -1};
  ReduceInto(ElementType::kS8, BinaryReducer::kAdd, wrap.data(), one.data(), 2);
  EXPECT_EQ(wrap[0], -128);
  EXPECT_EQ(wrap[1], 127);
  std::vector<uint8_t> p = {0, 1, 1, 0};
  std::vector<uint8_t> q = {0, 0, 1, 1};
  ReduceInto(ElementType::kPred, BinaryReducer::kAdd, p.data(), q.data(), 4);
  EXPECT_EQ(p, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_FALSE(IsNativeReduction(BinaryReducer::kXor, ElementType::kF32));
  EXPECT_TRUE(IsNativeReduction(BinaryReducer::kXor, ElementType::kU16));
  EXPECT_FALSE(IsNativeReduction(BinaryReducer::kUnknown, ElementType::kS32));
}

TEST(LocalCommunicatorTest, DisjointGroupsProceedIndependently) {
  // Devices 0,1 run two all-gathers while 2,3 run theirs in the same sequence positions.
  const int64_t n = 4;
  LocalCommunicator communicator(n);
  std::vector<std::vector<int16_t>> results(n, std::vector<int16_t>(2));
  OnThreads(communicator, [&](int64_t d) {
    std::vector<int64_t> group = d < 2 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{2, 3};
    std::vector<int16_t> mine = {static_cast<int16_t>(d)};
    communicator.AllGather(d, group, In(mine), Out(results[d]));
  });
  EXPECT_EQ(results[0], (std::vector<int16_t>{1, 0}));
  EXPECT_EQ(results[1], (std::vector<int16_t>{1, 0}));
  EXPECT_EQ(results[2], (std::vector<int16_t>{2, 3}));
  EXPECT_EQ(results[3], (std::vector<int16_t>{2, 3}));
}

TEST(LocalCommunicatorTest, ManyCollectivesInARow) {
  const int64_t n = 8;
  LocalCommunicator communicator(n);
  std::vector<int64_t> totals(n, 0);
  OnThreads(communicator, [&](int64_t d) {
    for (int round = 0; round < 200; ++round) {
      std::vector<int64_t> group = round % 2 == 0 ? Iota(n) : std::vector<int64_t>{d};
      std::vector<int64_t> value = {d + round}, sum = {0};
      communicator.AllReduce(d, group, ElementType::kS64, BinaryReducer::kAdd, In(value), Out(sum));
      totals[d] += sum[0];
    }
  });
  for (int64_t d = 0; d < n; ++d) {
    int64_t expected = 0;
    for (int round = 0; round < 200; ++round)
      expected += round % 2 == 0 ? (n * (n - 1) / 2 + n * round) : d + round;
    EXPECT_EQ(totals[d], expected);
  }
}

TEST(LocalCommunicatorTest, SizeMismatchIsAUserErrorOnEveryMember) {
  LocalCommunicator communicator(2);
  std::vector<Outcome> outcomes = OnThreads(communicator, [&](int64_t d) {
    std::vector<float> send(static_cast<size_t>(d + 1)), recv(static_cast<size_t>(d + 1));
    communicator.AllReduce(d, Iota(2), ElementType::kF32, BinaryReducer::kAdd, In(send), Out(recv));
  });
  for (const Outcome& outcome : outcomes) {
    EXPECT_FALSE(outcome.ok);
    if (!outcome.aborted) EXPECT_NE(outcome.user_error.find("disagree"), std::string::npos) << outcome.user_error;
  }
}

TEST(LocalCommunicatorTest, ErrorOnOneDeviceAbortsTheOthers) {
  const int64_t n = 6;
  LocalCommunicator communicator(n);
  std::vector<Outcome> outcomes = OnThreads(communicator, [&](int64_t d) {
    if (d == 3) GSPMD_USER_ERROR("device 3 failed");
    std::vector<float> buffer(4);
    communicator.AllReduce(d, Iota(n), ElementType::kF32, BinaryReducer::kAdd, In(buffer), Out(buffer));
  });
  EXPECT_EQ(outcomes[3].user_error, "device 3 failed");
  for (int64_t d = 0; d < n; ++d)
    if (d != 3) EXPECT_TRUE(outcomes[d].aborted) << d;
  EXPECT_TRUE(communicator.aborted());
}

TEST(LocalCommunicatorTest, DeviceThatFinishesWithoutJoiningFailsTheCollective) {
  LocalCommunicator communicator(3);
  std::vector<Outcome> outcomes = OnThreads(communicator, [&](int64_t d) {
    if (d == 2) return;  // skips the collective
    std::vector<float> send(1), recv(3);
    communicator.AllGather(d, Iota(3), In(send), Out(recv));
  });
  EXPECT_TRUE(outcomes[2].ok);
  int errors = 0;
  for (int64_t d = 0; d < 2; ++d) {
    EXPECT_FALSE(outcomes[d].ok);
    if (!outcomes[d].user_error.empty()) {
      ++errors;
      EXPECT_NE(outcomes[d].user_error.find("finished"), std::string::npos) << outcomes[d].user_error;
    }
  }
  EXPECT_GE(errors, 1);
}

TEST(LocalCommunicatorTest, AllToAllWithUnequalChunks) {
  // Member i sends i+j+1 bytes to member j.
  const int64_t n = 3;
  LocalCommunicator communicator(n);
  std::vector<std::vector<std::vector<uint8_t>>> received(n);
  OnThreads(communicator, [&](int64_t d) {
    std::vector<std::vector<uint8_t>> send_data, recv_data;
    for (int64_t j = 0; j < n; ++j) {
      send_data.emplace_back(static_cast<size_t>(d + j + 1), static_cast<uint8_t>(10 * d + j));
      recv_data.emplace_back(static_cast<size_t>(d + j + 1), 0);
    }
    std::vector<std::span<const uint8_t>> send(send_data.begin(), send_data.end());
    std::vector<std::span<uint8_t>> recv(recv_data.begin(), recv_data.end());
    communicator.AllToAll(d, Iota(n), send, recv);
    received[d] = recv_data;
  });
  for (int64_t d = 0; d < n; ++d)
    for (int64_t m = 0; m < n; ++m)
      EXPECT_EQ(received[d][m], std::vector<uint8_t>(static_cast<size_t>(d + m + 1), static_cast<uint8_t>(10 * m + d)));
}

TEST(LocalCommunicatorTest, BroadcastFromAnyRoot) {
  const int64_t n = 4;
  LocalCommunicator communicator(n);
  std::vector<std::vector<int32_t>> data(n);
  OnThreads(communicator, [&](int64_t d) {
    data[d] = {static_cast<int32_t>(d), static_cast<int32_t>(d * 2)};
    communicator.Broadcast(d, std::vector<int64_t>{3, 1, 0, 2}, 1, Out(data[d]));
  });
  for (int64_t d = 0; d < n; ++d) EXPECT_EQ(data[d], (std::vector<int32_t>{1, 2}));
}

TEST(LocalCommunicatorTest, BadGroupsAreUserErrors) {
  LocalCommunicator communicator(2);
  std::vector<float> buffer(1);
  std::vector<int64_t> missing = {1};
  EXPECT_THROW(communicator.AllReduce(0, missing, ElementType::kF32, BinaryReducer::kAdd, In(buffer), Out(buffer)),
               UserError);
  std::vector<int64_t> twice = {0, 0};
  EXPECT_THROW(communicator.AllGather(0, twice, In(buffer), Out(buffer)), UserError);
  std::vector<int64_t> out_of_range = {0, 2};
  EXPECT_THROW(communicator.AllGather(0, out_of_range, In(buffer), Out(buffer)), UserError);
}

}  // namespace
}  // namespace gspmd
