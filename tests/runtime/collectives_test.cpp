// Tests of the collective kernels (all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast) on 1..8 simulated devices, every replica-group form.
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/literal.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

// Runs `text` on n devices (partitions), device d getting arguments[d]; returns every
// device's result. A device's error aborts the others and is rethrown.
std::vector<Literal> RunOnDevices(const std::string& text, int64_t n,
                                  const std::vector<std::vector<Literal>>& arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  LocalCommunicator communicator(n);
  std::vector<Literal> results(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      try {
        DeviceContext context;
        context.partition_id = d;
        context.num_partitions = n;
        context.communicator = &communicator;
        Evaluator evaluator(*module, context);
        results[static_cast<size_t>(d)] = evaluator.Run(arguments[static_cast<size_t>(d)]);
        communicator.DeviceFinished(d);
      } catch (const CommunicatorAborted&) {
      } catch (...) {
        errors[static_cast<size_t>(d)] = std::current_exception();
        communicator.Abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

// The value of element e of device d's input k: distinct and exact in f32.
double V(int64_t d, int64_t e, int64_t k = 0) { return static_cast<double>(d * 1000 + k * 100 + e + 1); }

Literal Input(int64_t d, std::vector<int64_t> dims, int64_t k = 0,
              ElementType type = ElementType::kF32) {
  Literal literal(Shape(type, std::move(dims)));
  for (int64_t e = 0; e < literal.element_count(); ++e) literal.SetFromDouble(e, V(d, e, k));
  return literal;
}

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

struct GroupCase {
  int64_t n;
  std::string text;
  Groups groups;
};

std::string Describe(const GroupCase& c) { return std::to_string(c.n) + " devices, groups " + c.text; }

// Groups of equal size, in every text form.
std::vector<GroupCase> EvenCases() {
  return {
      {1, "{}", {{0}}},
      {1, "{{0}}", {{0}}},
      {2, "{}", {{0, 1}}},
      {2, "{{1,0}}", {{1, 0}}},
      {2, "[2,1]<=[2]", {{0}, {1}}},
      {2, "[1,2]<=[2]", {{0, 1}}},
      {3, "{}", {{0, 1, 2}}},
      {3, "{{2,0,1}}", {{2, 0, 1}}},
      {4, "{{0,1},{2,3}}", {{0, 1}, {2, 3}}},
      {4, "{{3,1},{2,0}}", {{3, 1}, {2, 0}}},
      {4, "[2,2]<=[2,2]T(1,0)", {{0, 2}, {1, 3}}},
      {4, "mesh['a'=2,'b'=2] {'b'}", {{0, 1}, {2, 3}}},
      {4, "mesh['a'=2,'b'=2] {'a'}", {{0, 2}, {1, 3}}},
      {5, "{}", {{0, 1, 2, 3, 4}}},
      {6, "{{0,1,2},{3,4,5}}", {{0, 1, 2}, {3, 4, 5}}},
      {6, "[3,2]<=[2,3]T(1,0)", {{0, 3}, {1, 4}, {2, 5}}},
      {7, "{}", {{0, 1, 2, 3, 4, 5, 6}}},
      {8, "{}", {{0, 1, 2, 3, 4, 5, 6, 7}}},
      {8, "{{7,6,5,4,3,2,1,0}}", {{7, 6, 5, 4, 3, 2, 1, 0}}},
      {8, "[2,4]<=[8]", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {8, "[4,2]<=[2,4]T(1,0)", {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {8, "mesh['a'=2,'b'=4] {'a'}", {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
      {8, "mesh['a'=2,'b'=4] {'b'}", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {8, "[8,1]<=[8]", {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
  };
}

// Groups of different sizes (fine for ops whose result shape does not depend on the size).
std::vector<GroupCase> UnevenCases() {
  return {
      {3, "{{0},{1,2}}", {{0}, {1, 2}}},
      {5, "{{0},{2,1},{3,4}}", {{0}, {2, 1}, {3, 4}}},
      {8, "{{0,1,2},{3,4},{5},{7,6}}", {{0, 1, 2}, {3, 4}, {5}, {7, 6}}},
  };
}

std::vector<GroupCase> AllCases() {
  std::vector<GroupCase> cases = EvenCases();
  for (GroupCase& c : UnevenCases()) cases.push_back(c);
  return cases;
}

// The group of device d and d's index in it.
std::pair<std::vector<int64_t>, int64_t> GroupOf(const GroupCase& c, int64_t d) {
  for (const std::vector<int64_t>& group : c.groups)
    for (size_t i = 0; i < group.size(); ++i)
      if (group[i] == d) return {group, static_cast<int64_t>(i)};
  ADD_FAILURE() << "device " << d << " in no group";
  return {};
}

const char* kSum = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
)";

// A reducer the kernels do not recognize as one op: takes the evaluator path.
const char* kGenericSum = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  z = f32[] constant(0)
  ROOT r = f32[] add(s, z)
}
)";

std::string ModuleText(int64_t n, const std::string& computations, const std::string& params,
                   const std::string& root) {
  return "HloModule m, num_partitions=" + std::to_string(n) + "\n" + computations + "\nENTRY e {\n" +
         params + "  ROOT r = " + root + "\n}\n";
}

std::string Collective(const std::string& groups) {
  return ", channel_id=1, replica_groups=" + groups + ", use_global_device_ids=true";
}

void ExpectAllReduceSum(const GroupCase& c, const char* reducer) {
  SCOPED_TRACE(Describe(c) + (reducer == kSum ? " native" : " generic"));
  std::string text = ModuleText(c.n, reducer, "  p = f32[2,3] parameter(0)\n",
                            "f32[2,3] all-reduce(p)" + Collective(c.text) + ", to_apply=sum");
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, {2, 3})});
  std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
  for (int64_t d = 0; d < c.n; ++d) {
    auto [group, index] = GroupOf(c, d);
    std::vector<double> expected(6, 0.0);
    for (int64_t m : group)
      for (int64_t e = 0; e < 6; ++e) expected[static_cast<size_t>(e)] += V(m, e);
    EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
  }
}

TEST(CollectivesTest, AllReduceSumEveryGroupForm) {
  for (const GroupCase& c : AllCases()) ExpectAllReduceSum(c, kSum);
}

TEST(CollectivesTest, AllReduceGenericReducerEveryGroupForm) {
  for (const GroupCase& c : AllCases()) ExpectAllReduceSum(c, kGenericSum);
}

TEST(CollectivesTest, AllReduceTupleAndTypes) {
  // Tuple all-reduce of two arrays, s32 max, pred or, bf16 add, on 4 devices in pairs.
  const int64_t n = 4;
  std::string text = "HloModule m, num_partitions=4\n"
                     "sum {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)\n}\n"
                     "mx {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT r = s32[] maximum(a, b)\n}\n"
                     "lor {\n a = pred[] parameter(0)\n b = pred[] parameter(1)\n ROOT r = pred[] or(a, b)\n}\n"
                     "bsum {\n a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n ROOT r = bf16[] add(a, b)\n}\n"
                     "ENTRY e {\n"
                     "  p = f32[3] parameter(0)\n  q = f32[2,2] parameter(1)\n"
                     "  s = s32[5] parameter(2)\n  b = pred[4] parameter(3)\n  h = bf16[3] parameter(4)\n"
                     "  t = (f32[3], f32[2,2]) all-reduce(p, q), channel_id=1, replica_groups={{0,1},{2,3}}, "
                     "use_global_device_ids=true, to_apply=sum\n"
                     "  m = s32[5] all-reduce(s), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=mx\n"
                     "  o = pred[4] all-reduce(b), channel_id=3, replica_groups={}, use_global_device_ids=true, to_apply=lor\n"
                     "  hb = bf16[3] all-reduce(h), channel_id=4, replica_groups={}, use_global_device_ids=true, to_apply=bsum\n"
                     "  t0 = f32[3] get-tuple-element(t), index=0\n  t1 = f32[2,2] get-tuple-element(t), index=1\n"
                     "  ROOT r = (f32[3], f32[2,2], s32[5], pred[4], bf16[3]) tuple(t0, t1, m, o, hb)\n}\n";
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < n; ++d) {
    Literal s(Shape(ElementType::kS32, {5}));
    for (int64_t e = 0; e < 5; ++e) s.SetFromInt64(e, (d * 7 + e * 3) % 11 - 5);
    Literal b(Shape(ElementType::kPred, {4}));
    b.SetFromInt64(d, 1);  // device d sets element d
    arguments.push_back({Input(d, {3}), Input(d, {2, 2}, 1), s, b, Input(d, {3}, 0, ElementType::kBF16)});
  }
  std::vector<Literal> results = RunOnDevices(text, n, arguments);
  for (int64_t d = 0; d < n; ++d) {
    const std::vector<Literal>& leaves = results[static_cast<size_t>(d)].tuple_elements();
    ASSERT_EQ(leaves.size(), 5u);
    const int64_t partner = d ^ 1;
    for (int64_t e = 0; e < 3; ++e) EXPECT_EQ(leaves[0].GetAsDouble(e), V(d, e) + V(partner, e));
    for (int64_t e = 0; e < 4; ++e) EXPECT_EQ(leaves[1].GetAsDouble(e), V(d, e, 1) + V(partner, e, 1));
    for (int64_t e = 0; e < 5; ++e)
      EXPECT_EQ(leaves[2].GetAsInt64(e), std::max((d * 7 + e * 3) % 11 - 5, (partner * 7 + e * 3) % 11 - 5));
    for (int64_t e = 0; e < 4; ++e) EXPECT_EQ(leaves[3].GetAsInt64(e), 1);
    for (int64_t e = 0; e < 3; ++e) {
      // bf16 sums in group order, rounding after each step.
      float sum = static_cast<float>(BFloat16(static_cast<float>(V(0, e))));
      for (int64_t m = 1; m < n; ++m)
        sum = static_cast<float>(BFloat16(sum + static_cast<float>(BFloat16(static_cast<float>(V(m, e))))));
      EXPECT_EQ(leaves[4].GetAsDouble(e), sum);
    }
  }
}

TEST(CollectivesTest, AllGatherEveryGroupForm) {
  for (const GroupCase& c : EvenCases()) {
    const int64_t g = static_cast<int64_t>(c.groups[0].size());
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE(Describe(c) + " dim " + std::to_string(dim));
      std::string result_type = dim == 0 ? "f32[" + std::to_string(2 * g) + ",3]"
                                         : "f32[2," + std::to_string(3 * g) + "]";
      std::string text = ModuleText(c.n, "", "  p = f32[2,3] parameter(0)\n",
                                result_type + " all-gather(p)" + Collective(c.text) +
                                    ", dimensions={" + std::to_string(dim) + "}");
      std::vector<std::vector<Literal>> arguments;
      for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, {2, 3})});
      std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
      for (int64_t d = 0; d < c.n; ++d) {
        auto [group, index] = GroupOf(c, d);
        std::vector<double> expected;
        if (dim == 0) {
          for (int64_t m : group)
            for (int64_t e = 0; e < 6; ++e) expected.push_back(V(m, e));
        } else {
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t m : group)
              for (int64_t j = 0; j < 3; ++j) expected.push_back(V(m, i * 3 + j));
        }
        EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
      }
    }
  }
}

TEST(CollectivesTest, ReduceScatterEveryGroupForm) {
  for (const char* reducer : {kSum, kGenericSum}) {
    for (const GroupCase& c : EvenCases()) {
      const int64_t g = static_cast<int64_t>(c.groups[0].size());
      for (int64_t dim : {0, 1}) {
        SCOPED_TRACE(Describe(c) + " dim " + std::to_string(dim) + (reducer == kSum ? " native" : " generic"));
        std::vector<int64_t> in_dims = dim == 0 ? std::vector<int64_t>{2 * g, 3} : std::vector<int64_t>{2, 3 * g};
        std::string in_type = "f32[" + std::to_string(in_dims[0]) + "," + std::to_string(in_dims[1]) + "]";
        std::string text = ModuleText(c.n, reducer, "  p = " + in_type + " parameter(0)\n",
                                  "f32[2,3] reduce-scatter(p)" + Collective(c.text) + ", dimensions={" +
                                      std::to_string(dim) + "}, to_apply=sum");
        std::vector<std::vector<Literal>> arguments;
        for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, in_dims)});
        std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
        for (int64_t d = 0; d < c.n; ++d) {
          auto [group, index] = GroupOf(c, d);
          std::vector<double> expected(6, 0.0);
          for (int64_t m : group) {
            for (int64_t i = 0; i < 2; ++i) {
              for (int64_t j = 0; j < 3; ++j) {
                int64_t source = dim == 0 ? (index * 2 + i) * 3 + j : i * 3 * g + index * 3 + j;
                expected[static_cast<size_t>(i * 3 + j)] += V(m, source);
              }
            }
          }
          EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
        }
      }
    }
  }
}

TEST(CollectivesTest, AllToAllArrayEveryGroupForm) {
  for (const GroupCase& c : EvenCases()) {
    const int64_t g = static_cast<int64_t>(c.groups[0].size());
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE(Describe(c) + " dim " + std::to_string(dim));
      std::vector<int64_t> dims = dim == 0 ? std::vector<int64_t>{2 * g, 3} : std::vector<int64_t>{2, 3 * g};
      std::string type = "f32[" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "]";
      std::string text = ModuleText(c.n, "", "  p = " + type + " parameter(0)\n",
                                type + " all-to-all(p)" + Collective(c.text) + ", dimensions={" +
                                    std::to_string(dim) + "}");
      std::vector<std::vector<Literal>> arguments;
      for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, dims)});
      std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
      for (int64_t d = 0; d < c.n; ++d) {
        auto [group, index] = GroupOf(c, d);
        std::vector<double> expected(static_cast<size_t>(dims[0] * dims[1]), 0.0);
        for (size_t m = 0; m < group.size(); ++m) {
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t j = 0; j < 3; ++j) {
              // Member m sent us its chunk `index`; it lands at chunk m.
              int64_t source = dim == 0 ? (index * 2 + i) * 3 + j : i * 3 * g + index * 3 + j;
              int64_t target = dim == 0 ? (static_cast<int64_t>(m) * 2 + i) * 3 + j
                                        : i * 3 * g + static_cast<int64_t>(m) * 3 + j;
              expected[static_cast<size_t>(target)] = V(group[m], source);
            }
          }
        }
        EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
      }
    }
  }
}

TEST(CollectivesTest, AllToAllTupleEveryGroupForm) {
  for (const GroupCase& c : EvenCases()) {
    SCOPED_TRACE(Describe(c));
    const int64_t g = static_cast<int64_t>(c.groups[0].size());
    std::string params, operands, types;
    for (int64_t k = 0; k < g; ++k) {
      params += "  p" + std::to_string(k) + " = f32[2] parameter(" + std::to_string(k) + ")\n";
      operands += (k > 0 ? ", p" : "p") + std::to_string(k);
      types += (k > 0 ? ", f32[2]" : "f32[2]");
    }
    std::string text = ModuleText(c.n, "", params, "(" + types + ") all-to-all(" + operands + ")" + Collective(c.text));
    std::vector<std::vector<Literal>> arguments(static_cast<size_t>(c.n));
    for (int64_t d = 0; d < c.n; ++d)
      for (int64_t k = 0; k < g; ++k) arguments[static_cast<size_t>(d)].push_back(Input(d, {2}, k));
    std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
    for (int64_t d = 0; d < c.n; ++d) {
      auto [group, index] = GroupOf(c, d);
      const Literal& result = results[static_cast<size_t>(d)];
      ASSERT_EQ(static_cast<int64_t>(result.tuple_elements().size()), g);
      for (int64_t m = 0; m < g; ++m) {
        // Element m comes from member m: its operand number `index`.
        std::vector<double> expected = {V(group[static_cast<size_t>(m)], 0, index),
                                        V(group[static_cast<size_t>(m)], 1, index)};
        EXPECT_EQ(Doubles(result.tuple_elements()[static_cast<size_t>(m)]), expected)
            << "device " << d << " element " << m;
      }
    }
  }
}

TEST(CollectivesTest, CollectiveBroadcastEveryGroupForm) {
  for (const GroupCase& c : AllCases()) {
    SCOPED_TRACE(Describe(c));
    std::string text = ModuleText(c.n, "", "  p = f32[4] parameter(0)\n",
                              "f32[4] collective-broadcast(p)" + Collective(c.text));
    std::vector<std::vector<Literal>> arguments;
    for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, {4})});
    std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
    for (int64_t d = 0; d < c.n; ++d) {
      auto [group, index] = GroupOf(c, d);
      std::vector<double> expected;
      for (int64_t e = 0; e < 4; ++e) expected.push_back(V(group[0], e));
      EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
    }
  }
}

struct PermuteCase {
  int64_t n;
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

TEST(CollectivesTest, CollectivePermute) {
  std::vector<PermuteCase> cases = {
      {1, {{0, 0}}},
      {1, {}},
      {2, {{0, 1}, {1, 0}}},
      {3, {{0, 1}, {1, 2}, {2, 0}}},
      {4, {{0, 1}, {2, 3}}},           // devices 0 and 2 receive nothing
      {5, {{4, 0}, {0, 4}, {2, 2}}},   // self pair; 1 and 3 receive nothing
      {8, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}}},
      {8, {{7, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}}},
      {6, {{0, 3}}},                   // one device sends, five receive nothing
  };
  for (const PermuteCase& c : cases) {
    std::string pairs;
    for (auto [source, target] : c.pairs)
      pairs += (pairs.empty() ? "{" : ",{") + std::to_string(source) + "," + std::to_string(target) + "}";
    SCOPED_TRACE(std::to_string(c.n) + " devices, pairs {" + pairs + "}");
    std::string text = ModuleText(c.n, "", "  p = f32[2,2] parameter(0)\n",
                              "f32[2,2] collective-permute(p), channel_id=1, source_target_pairs={" + pairs + "}");
    std::vector<std::vector<Literal>> arguments;
    for (int64_t d = 0; d < c.n; ++d) arguments.push_back({Input(d, {2, 2})});
    std::vector<Literal> results = RunOnDevices(text, c.n, arguments);
    for (int64_t d = 0; d < c.n; ++d) {
      std::vector<double> expected(4, 0.0);
      for (auto [source, target] : c.pairs)
        if (target == d)
          for (int64_t e = 0; e < 4; ++e) expected[static_cast<size_t>(e)] = V(source, e);
      EXPECT_EQ(Doubles(results[static_cast<size_t>(d)]), expected) << "device " << d;
    }
  }
}

TEST(CollectivesTest, ModesWithoutGlobalDeviceIds) {
  // channel_id without use_global_device_ids: ids are partition ids (one replica here).
  std::string cross_partition = ModuleText(4, kSum, "  p = f32[2] parameter(0)\n",
                                       "f32[2] all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, to_apply=sum");
  // No channel_id: cross-replica; with one replica every device is alone.
  std::string cross_replica = ModuleText(4, kSum, "  p = f32[2] parameter(0)\n",
                                     "f32[2] all-reduce(p), replica_groups={}, to_apply=sum");
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < 4; ++d) arguments.push_back({Input(d, {2})});
  std::vector<Literal> partitioned = RunOnDevices(cross_partition, 4, arguments);
  std::vector<Literal> replicated = RunOnDevices(cross_replica, 4, arguments);
  const int64_t partner[] = {3, 2, 1, 0};
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(Doubles(partitioned[static_cast<size_t>(d)]),
              (std::vector<double>{V(d, 0) + V(partner[d], 0), V(d, 1) + V(partner[d], 1)}));
    EXPECT_EQ(Doubles(replicated[static_cast<size_t>(d)]), (std::vector<double>{V(d, 0), V(d, 1)}));
  }
}

TEST(CollectivesTest, SingleDeviceWithoutCommunicator) {
  std::string text = ModuleText(1, kSum, "  p = f32[3] parameter(0)\n",
                            "f32[3] all-reduce(p), channel_id=1, replica_groups={}, use_global_device_ids=true, to_apply=sum");
  std::unique_ptr<gspmd::Module> module = ParseModule(text);
  Literal result = EvaluateModule(*module, std::vector<Literal>{Input(0, {3})});
  EXPECT_EQ(Doubles(result), Doubles(Input(0, {3})));
  std::string permute = ModuleText(1, "", "  p = f32[3] parameter(0)\n",
                               "f32[3] collective-permute(p), channel_id=1, source_target_pairs={}");
  module = ParseModule(permute);
  EXPECT_EQ(Doubles(EvaluateModule(*module, std::vector<Literal>{Input(0, {3})})),
            (std::vector<double>{0, 0, 0}));
}

std::string ErrorOf(const std::string& text, int64_t n, std::vector<int64_t> dims) {
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < n; ++d) arguments.push_back({Input(d, dims)});
  try {
    RunOnDevices(text, n, arguments);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(CollectivesTest, DeviceInNoGroupIsAUserError) {
  std::string text = ModuleText(4, kSum, "  p = f32[2] parameter(0)\n",
                            "f32[2] all-reduce(p)" + Collective("{{0,1},{2}}") + ", to_apply=sum");
  std::string error = ErrorOf(text, 4, {2});
  EXPECT_NE(error.find("%r"), std::string::npos) << error;
  EXPECT_NE(error.find("no group"), std::string::npos) << error;
}

TEST(CollectivesTest, BadGroupsAndShapesAreUserErrors) {
  // A device id past the device count.
  EXPECT_NE(ErrorOf(ModuleText(2, kSum, "  p = f32[2] parameter(0)\n",
                           "f32[2] all-reduce(p)" + Collective("{{0,5}}") + ", to_apply=sum"),
                    2, {2}).find("%r"), std::string::npos);
  // A device listed twice.
  EXPECT_NE(ErrorOf(ModuleText(4, kSum, "  p = f32[2] parameter(0)\n",
                           "f32[2] all-reduce(p)" + Collective("{{0,1},{1,2,3}}") + ", to_apply=sum"),
                    4, {2}).find("more than once"), std::string::npos);
  // all-gather result shape that does not match the group size.
  EXPECT_NE(ErrorOf(ModuleText(2, "", "  p = f32[2] parameter(0)\n",
                           "f32[6] all-gather(p)" + Collective("{}") + ", dimensions={0}"),
                    2, {2}).find("does not match f32[4]"), std::string::npos);
  // reduce-scatter of a dimension the group does not divide.
  EXPECT_NE(ErrorOf(ModuleText(2, kSum, "  p = f32[3] parameter(0)\n",
                           "f32[1] reduce-scatter(p)" + Collective("{}") + ", dimensions={0}, to_apply=sum"),
                    2, {3}).find("divisible by the group size 2"), std::string::npos);
  // A device that is the target of two pairs.
  EXPECT_NE(ErrorOf(ModuleText(3, "", "  p = f32[2] parameter(0)\n",
                           "f32[2] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{2,1}}"),
                    3, {2}).find("target 1 appears in two pairs"), std::string::npos);
}

}  // namespace
}  // namespace gspmd
