// Step inputs: seeded initial values, synthetic copy / reverse batches, --data folders.
#include "train/step_inputs.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "io/npy.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// splitmix64: a small, well-mixed generator whose stream depends only on its seed.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
  // Box-Muller; one value per call keeps the stream simple.
  double Normal() {
    const double u1 = 1.0 - Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

uint64_t Mix(uint64_t a, uint64_t b) { return Random(a * 0xD1B54A32D192ED03ULL ^ (b + 0x8CB92BA72F3D8DD7ULL)).Next(); }

// "normal(0.25)" -> 0.25; false when `init` is not normal(number).
bool ParseNormal(const std::string& init, double& stddev) {
  if (init.rfind("normal(", 0) != 0 || init.back() != ')') return false;
  const std::string number = init.substr(7, init.size() - 8);
  char* end = nullptr;
  stddev = std::strtod(number.c_str(), &end);
  return !number.empty() && end == number.c_str() + number.size() && stddev >= 0;
}

// "task(tokens)" -> "tokens" ("" when `init` is not a task field).
std::string TaskField(const std::string& init) {
  if (init.rfind("task(", 0) != 0 || init.back() != ')') return "";
  return init.substr(5, init.size() - 6);
}

Literal Row(const Literal& rows, int64_t row) {
  std::vector<int64_t> dims(rows.shape().dims().begin() + 1, rows.shape().dims().end());
  Literal value(Shape(rows.element_type(), dims));
  const int64_t bytes = value.byte_size();
  std::memcpy(value.raw(), rows.raw() + row * bytes, static_cast<size_t>(bytes));
  return value;
}

}  // namespace

Literal InitialValue(const StepInput& input, int64_t index, uint64_t seed) {
  Literal value(input.shape);
  if (input.init == "zeros") return value;
  if (input.init == "ones") {
    for (int64_t i = 0; i < value.element_count(); ++i) value.SetFromDouble(i, 1.0);
    return value;
  }
  double stddev = 0;
  if (!ParseNormal(input.init, stddev))
    GSPMD_USER_ERROR("input %", input.name, ": init \"", input.init,
                     "\" is not one of normal(STDDEV), zeros, ones (task(FIELD) inputs come from the task)");
  Random random(Mix(seed, static_cast<uint64_t>(index)));
  for (int64_t i = 0; i < value.element_count(); ++i) value.SetFromDouble(i, stddev * random.Normal());
  return value;
}

TaskBatch MakeTaskBatch(const std::string& task, int64_t vocab, int64_t batch, int64_t seq, uint64_t seed,
                        int64_t step) {
  if (task != "copy" && task != "reverse") GSPMD_USER_ERROR("unknown synthetic task '", task, "' (known: copy, reverse)");
  if (seq < 2) GSPMD_USER_ERROR("the ", task, " task needs sequences of at least 2 tokens, got ", seq);
  if (vocab < 1) GSPMD_USER_ERROR("the ", task, " task needs a vocabulary, got ", vocab);
  const Shape shape(ElementType::kS32, {batch, seq});
  TaskBatch out{Literal(shape), Literal(shape), Literal(Shape(ElementType::kF32, {batch, seq}))};
  Random random(Mix(seed ^ 0x7A5EULL, static_cast<uint64_t>(step)));
  const int64_t half = seq / 2;
  std::vector<int32_t> row(static_cast<size_t>(seq));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < half; ++t) row[t] = static_cast<int32_t>(random.Below(vocab));
    for (int64_t t = half; t < seq; ++t) {
      const int64_t j = (t - half) % half;
      row[t] = row[task == "copy" ? j : half - 1 - j];
    }
    for (int64_t t = 0; t < seq; ++t) {
      const int64_t i = b * seq + t;
      out.tokens.data<int32_t>()[i] = row[t];
      out.targets.data<int32_t>()[i] = t + 1 < seq ? row[t + 1] : 0;
      out.weights.data<float>()[i] = (t + 1 >= half && t + 1 < seq) ? 1.0f : 0.0f;
    }
  }
  return out;
}

BatchSource::BatchSource(const StepSignature& signature, const std::string& data_dir, uint64_t seed, bool draw_task)
    : signature_(signature), seed_(seed) {
  namespace fs = std::filesystem;
  for (int64_t i = 0; i < static_cast<int64_t>(signature.inputs.size()); ++i) {
    const StepInput& input = signature.inputs[i];
    if (signature.IsCarried(i)) continue;
    const std::string field = TaskField(input.init);
    if (field == "tokens") tokens_per_step_ = input.shape.element_count();
    if (!data_dir.empty()) {
      fs::path path = fs::path(data_dir) / (input.name + ".npy");
      if (!fs::exists(path)) path = fs::path(data_dir) / ("in" + std::to_string(i) + ".npy");
      if (!fs::exists(path)) {
        if (!field.empty())
          GSPMD_USER_ERROR(data_dir, ": error: no ", input.name, ".npy or in", i, ".npy for batch input ", i, " (%",
                           input.name, ", ", input.shape.ToString(false), ")");
        continue;
      }
      Literal rows = ReadNpy(path.string());
      std::vector<int64_t> row_dims(rows.shape().dims());
      const bool fits = rows.shape().rank() == input.shape.rank() + 1 && rows.shape().dim(0) >= 1 &&
                        rows.element_type() == input.shape.element_type() &&
                        std::vector<int64_t>(row_dims.begin() + 1, row_dims.end()) == input.shape.dims();
      if (!fits)
        GSPMD_USER_ERROR(path.string(), ": error: holds ", rows.shape().ToString(false), " but input ", i, " (%",
                         input.name, ") takes ", input.shape.ToString(false), " per step (expected [N, ",
                         input.shape.ToString(false), "]: N batches)");
      data_.push_back({i, std::move(rows)});
      continue;
    }
    if (field.empty() || !draw_task) continue;
    if (field != "tokens" && field != "targets" && field != "weights")
      GSPMD_USER_ERROR("input %", input.name, ": unknown task field '", field, "' (known: tokens, targets, weights)");
    if (signature.task.empty())
      GSPMD_USER_ERROR("input %", input.name, " is drawn from the task, but the module names none (gspmd.task)");
    if (input.shape.rank() != 2)
      GSPMD_USER_ERROR("task input %", input.name, " is ", input.shape.ToString(false), "; expected [batch, seq]");
    task_inputs_.push_back(i);
  }
}

bool BatchSource::Feeds(int64_t input) const {
  for (const DataFile& file : data_)
    if (file.input == input) return true;
  for (int64_t i : task_inputs_)
    if (i == input) return true;
  return false;
}

void BatchSource::Fill(int64_t step, std::vector<Literal>& inputs) const {
  for (const DataFile& file : data_) inputs[file.input] = Row(file.rows, step % file.rows.shape().dim(0));
  if (task_inputs_.empty()) return;
  const Shape& shape = signature_.inputs[task_inputs_[0]].shape;
  TaskBatch batch = MakeTaskBatch(signature_.task, signature_.vocab, shape.dim(0), shape.dim(1), seed_, step);
  for (int64_t i : task_inputs_) {
    const StepInput& input = signature_.inputs[i];
    const std::string field = TaskField(input.init);
    const Literal& value = field == "tokens" ? batch.tokens : field == "targets" ? batch.targets : batch.weights;
    if (!value.shape().Compatible(input.shape))
      GSPMD_USER_ERROR("task input %", input.name, " is ", input.shape.ToString(false), " but the task's ", field,
                       " are ", value.shape().ToString(false));
    inputs[i] = value;
  }
}

}  // namespace gspmd
