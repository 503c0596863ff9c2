// Every collective, element type and reducer through the MPI communicator, with replica
// groups in every form (cross-partition lists, flattened iota groups, {} for all devices,
// cross-replica), on 4 devices laid out as 4 ranks, 2 ranks x 2 devices and 1 rank x 4
// devices, over shared memory and TCP: the per-device results equal the threads backend's
// exactly (the inputs are small integers, so no float sum depends on the reduction order).
#include <cmath>
#include <limits>

#include "io/npy.h"
#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

struct TypeCase {
  const char* name;
  ElementType type;
  bool is_float;
  bool is_integer;
};

constexpr TypeCase kTypes[] = {
    {"pred", ElementType::kPred, false, false}, {"s8", ElementType::kS8, false, true},
    {"s16", ElementType::kS16, false, true},    {"s32", ElementType::kS32, false, true},
    {"s64", ElementType::kS64, false, true},    {"u8", ElementType::kU8, false, true},
    {"u16", ElementType::kU16, false, true},    {"u32", ElementType::kU32, false, true},
    {"u64", ElementType::kU64, false, true},    {"f16", ElementType::kF16, true, false},
    {"bf16", ElementType::kBF16, true, false},  {"f32", ElementType::kF32, true, false},
    {"f64", ElementType::kF64, true, false},
};

std::vector<std::string> OpsOf(const TypeCase& type) {
  // The verifier takes pred only in and, or and xor (add, multiply, maximum and minimum need numbers).
  if (type.type == ElementType::kPred) return {"and", "or", "xor"};
  if (type.is_integer) return {"add", "multiply", "maximum", "minimum", "and", "or", "xor"};
  return {"add", "multiply", "maximum", "minimum"};
}

// The three forms of replica groups on 4 partitions, and the attributes that select them.
const char* const kGroupForms[] = {
    "channel_id=1, replica_groups={{0,1},{2,3}}",                                  // partition ids
    "channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true",  // {{0,2},{1,3}}
    "channel_id=1, replica_groups={}, use_global_device_ids=true",                  // every device
};

Literal InputFor(const TypeCase& type, int64_t elements) {
  Literal value(Shape(type.type, {elements}));
  for (int64_t i = 0; i < elements; ++i) {
    double x;
    if (type.type == ElementType::kPred) x = i % 3 == 0;
    else if (type.is_float) x = static_cast<double>((i * 5) % 3 + 1);
    else if (type.type == ElementType::kU8 || type.type == ElementType::kU16) x = static_cast<double>((i * 53) % 251);
    else if (type.type == ElementType::kU32 || type.type == ElementType::kU64) x = static_cast<double>((i * 977) % 4001);
    else x = static_cast<double>((i * 37 + 11) % 7 - 3);
    value.SetFromDouble(i, x);
  }
  if (type.is_float) value.SetFromDouble(7, std::numeric_limits<double>::quiet_NaN());  // max/min propagate NaN
  return value;
}

struct Program {
  std::string text;
  std::vector<std::string> inputs;
};

// One parameter per type (16 elements, 4 per device), every collective on it, and a root that
// keeps every device's result (tiled over the devices along dimension 0).
Program CollectivesProgram(const MpiTest& test) {
  std::string computations, body, root_types, root_values, root_shardings;
  int id = 0;
  auto add_result = [&](const std::string& type, const std::string& name) {
    root_types += std::string(root_types.empty() ? "" : ", ") + type;
    root_values += std::string(root_values.empty() ? "" : ", ") + name;
    root_shardings += std::string(root_shardings.empty() ? "" : ", ") + "{devices=[4]<=[4]}";
  };
  Program program;
  for (size_t t = 0; t < std::size(kTypes); ++t) {
    const TypeCase& type = kTypes[t];
    const std::string T = type.name;
    const std::string p = "p" + std::to_string(t);
    body += "  " + p + " = " + T + "[4] parameter(" + std::to_string(t) + "), sharding={devices=[4]<=[4]}\n";
    program.inputs.push_back(test.Path("in" + std::to_string(t) + ".npy"));
    WriteNpy(program.inputs.back(), InputFor(type, 16));
    for (const std::string& op : OpsOf(type)) {
      const std::string reducer = op + "_" + T;
      computations += reducer + " {\n  a = " + T + "[] parameter(0)\n  b = " + T + "[] parameter(1)\n  ROOT r = " + T +
                      "[] " + op + "(a, b)\n}\n\n";
      for (const char* form : kGroupForms) {
        const std::string name = "ar" + std::to_string(id++);
        body += "  " + name + " = " + T + "[4] all-reduce(" + p + "), " + form + ", to_apply=" + reducer + "\n";
        add_result(T + "[4]", name);
      }
    }
    const std::string sum = OpsOf(type)[0] + "_" + T;
    const std::string n = std::to_string(id++);
    body += "  ag" + n + " = " + T + "[8] all-gather(" + p + "), channel_id=1, replica_groups={{0,2},{1,3}}, dimensions={0}, use_global_device_ids=true\n";
    add_result(T + "[8]", "ag" + n);
    body += "  rs" + n + " = " + T + "[2] reduce-scatter(" + p + "), channel_id=1, replica_groups={{1,0},{2,3}}, dimensions={0}, to_apply=" + sum + "\n";
    add_result(T + "[2]", "rs" + n);
    body += "  aa" + n + " = " + T + "[4] all-to-all(" + p + "), channel_id=1, replica_groups={{3,1,2,0}}, dimensions={0}\n";
    add_result(T + "[4]", "aa" + n);
    body += "  cp" + n + " = " + T + "[4] collective-permute(" + p + "), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n";
    add_result(T + "[4]", "cp" + n);
    body += "  cq" + n + " = " + T + "[4] collective-permute(" + p + "), channel_id=1, source_target_pairs={{0,2},{3,1}}\n";
    add_result(T + "[4]", "cq" + n);
    body += "  cb" + n + " = " + T + "[4] collective-broadcast(" + p + "), channel_id=1, replica_groups={{2,0,1,3}}\n";
    add_result(T + "[4]", "cb" + n);
  }
  program.text = "HloModule collectives, num_partitions=4\n\n" + computations + "ENTRY e {\n" + body +
                 "  ROOT out = (" + root_types + ") tuple(" + root_values + "), sharding={" + root_shardings + "}\n}\n";
  return program;
}

// Cross-replica collectives (no channel_id: replica ids) of a replicated program.
Program CrossReplicaProgram(const MpiTest& test) {
  Program program;
  program.inputs = {test.Path("r0.npy"), test.Path("r1.npy")};
  WriteNpy(program.inputs[0], InputFor(kTypes[11], 16));  // f32
  WriteNpy(program.inputs[1], InputFor(kTypes[3], 16));   // s32
  program.text = R"(HloModule replicas, replica_count=4

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

smax {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] maximum(a, b)
}

ENTRY e {
  x = f32[4] parameter(0), sharding={devices=[4]<=[4]}
  y = s32[4] parameter(1), sharding={devices=[4]<=[4]}
  a = f32[4] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=sum
  b = f32[4] all-reduce(x), replica_groups={}, to_apply=sum
  c = s32[4] all-reduce(y), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=smax
  d = s32[16] all-gather(y), replica_groups={{3,2,1,0}}, dimensions={0}
  ROOT out = (f32[4], f32[4], s32[4], s32[16]) tuple(a, b, c, d), sharding={{devices=[4]<=[4]}, {devices=[4]<=[4]}, {devices=[4]<=[4]}, {devices=[4]<=[4]}}
}
)";
  return program;
}

class MpiCollectivesTest : public MpiTest {
 protected:
  void CheckProgram(const Program& program, const std::string& name) {
    const std::string file = Path(name + ".hlo");
    std::ofstream(file) << program.text;
    std::vector<std::string> args = {"run", file, "--per-device"};
    for (const std::string& input : program.inputs) {
      args.push_back("-i");
      args.push_back(input);
    }
    std::vector<std::string> threads = args;
    threads.insert(threads.end(), {"-o", Path(name + "_threads")});
    const Launch baseline = Gspmd(threads);
    ASSERT_EQ(baseline.exit_code, 0) << baseline.err;
    std::vector<MpiLayout> layouts = {{4, 1, ""}, {2, 2, ""}, {1, 4, ""}, {2, 2, "self,tcp"}};
    if (SoakMode()) layouts.push_back({4, 1, "self,tcp"});
    for (const MpiLayout& layout : layouts) {
      SCOPED_TRACE(layout.Name());
      const std::string out = name + "_" + layout.Name();
      std::vector<std::string> mpi = args;
      mpi.insert(mpi.end(), {"--backend", "mpi", "--devices-per-rank", std::to_string(layout.devices_per_rank), "-o",
                             Path(out)});
      const Launch launch = Mpi(layout, mpi);
      ASSERT_EQ(launch.exit_code, 0) << launch.err;
      ExpectSameOutputs(dir_ / out, dir_ / (name + "_threads"), 0.0);
    }
  }
};

TEST_F(MpiCollectivesTest, EveryCollectiveTypeAndReducerMatchesThreads) {
  CheckProgram(CollectivesProgram(*this), "collectives");
}

TEST_F(MpiCollectivesTest, CrossReplicaGroupsMatchThreads) { CheckProgram(CrossReplicaProgram(*this), "replicas"); }

}  // namespace
}  // namespace gspmd::mpi_test
