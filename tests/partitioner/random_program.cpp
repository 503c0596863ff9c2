// Random program generator for the randomized partitioner test: emits HLO text with many
// opcode families (elementwise, shape ops, dot, convolution, reductions, windows, gather /
// scatter, sort, while) and a random complete sharding on every instruction.
#include "partitioner/random_program.h"

#include <sstream>

#include "partitioner/random_program_generator.h"
#include "support/diagnostic.h"

namespace gspmd::random_program::detail {

// ---------------------------------------------------------------------------------------------
// Mesh and shardings

void Generator::ChooseMesh() {
  static const std::vector<Dims> kMeshes = {
      {1}, {2}, {3}, {4}, {2, 2}, {5}, {6}, {2, 3}, {3, 2}, {7},
      {8}, {2, 4}, {4, 2}, {2, 2, 2}, {4}, {8}, {2, 4}, {2, 2, 2}};
  std::vector<Dims> allowed;
  for (const Dims& mesh : kMeshes)
    if (Product(mesh) <= options_.max_devices) allowed.push_back(mesh);
  program_.mesh = PickOf(allowed);
  program_.num_devices = Product(program_.mesh);
}

std::string Generator::RandomSharding(int64_t rank) {
  const Dims& mesh = program_.mesh;
  int64_t num_axes = static_cast<int64_t>(mesh.size());
  if (program_.num_devices == 1 || rank == 0 || Chance(0.1)) return "{replicated}";
  if (Chance(0.02)) return "{maximal device=" + std::to_string(Uniform(0, program_.num_devices - 1)) + "}";
  std::vector<Dims> per_dim(rank);
  Dims unassigned;
  for (int64_t axis : RandomPermutation(num_axes)) {
    if (Chance(0.3)) unassigned.push_back(axis);
    else per_dim[Uniform(0, rank - 1)].push_back(axis);
  }
  if (static_cast<int64_t>(unassigned.size()) == num_axes) return "{replicated}";
  Dims perm, tiles;
  for (const Dims& axes : per_dim) {
    int64_t tiles_of_dim = 1;
    for (int64_t axis : axes) {
      perm.push_back(axis);
      tiles_of_dim *= mesh[axis];
    }
    tiles.push_back(tiles_of_dim);
  }
  int64_t replicated = 1;
  for (int64_t axis : unassigned) {
    perm.push_back(axis);
    replicated *= mesh[axis];
  }
  if (replicated > 1) tiles.push_back(replicated);
  std::string suffix = replicated > 1 ? " last_tile_dim_replicate" : "";
  if (Chance(0.1)) {
    // An explicit device list: the mesh order, with devices sometimes shuffled.
    Dims strides(num_axes, 1);
    for (int64_t a = num_axes - 2; a >= 0; --a) strides[a] = strides[a + 1] * mesh[a + 1];
    Dims devices;
    Dims index(num_axes, 0);  // over the transposed mesh
    for (int64_t n = 0; n < program_.num_devices; ++n) {
      int64_t device = 0;
      for (int64_t i = 0; i < num_axes; ++i) device += index[i] * strides[perm[i]];
      devices.push_back(device);
      for (int64_t i = num_axes - 1; i >= 0; --i) {
        if (++index[i] < mesh[perm[i]]) break;
        index[i] = 0;
      }
    }
    if (Chance(0.5)) {
      std::shuffle(devices.begin(), devices.end(), rng_);
      program_.shuffled_devices = true;
    }
    return "{devices=[" + Join(tiles) + "]" + Join(devices) + suffix + "}";
  }
  Dims identity(num_axes);
  std::iota(identity.begin(), identity.end(), 0);
  std::string transpose = perm == identity ? "" : "T(" + Join(perm) + ")";
  return "{devices=[" + Join(tiles) + "]<=[" + Join(mesh) + "]" + transpose + suffix + "}";
}

std::string Generator::ShardingFor(int64_t rank, const Value* like) {
  if (like != nullptr && like->rank() == rank && Chance(0.35)) return like->sharding;
  return RandomSharding(rank);
}

// ---------------------------------------------------------------------------------------------
// Emission

Value& Generator::Emit(const std::string& base, ElementType type, const Dims& dims, const std::string& op,
                       bool exact, const std::string& sharding) {
  Value value;
  value.name = base + "." + std::to_string(next_id_++);
  value.type = type;
  value.dims = dims;
  value.exact = exact;
  value.sharding = sharding;
  scope().lines.push_back("%" + value.name + " = " + ShapeText(type, dims) + " " + op + ", sharding=" + sharding);
  scope().values.push_back(value);
  return scope().values.back();
}

Value Generator::EmitTuple(const std::string& base, const std::vector<Value>& elements, const std::string& op,
                           const std::string& sharding) {
  Value value;
  value.name = base + "." + std::to_string(next_id_++);
  std::string shape = "(";
  for (size_t i = 0; i < elements.size(); ++i)
    shape += (i ? ", " : "") + ShapeText(elements[i].type, elements[i].dims);
  shape += ")";
  scope().lines.push_back("%" + value.name + " = " + shape + " " + op + ", sharding=" + sharding);
  return value;  // tuples are not operands of generated ops (only of get-tuple-element)
}

Value& Generator::Find(const std::string& name) {
  for (Value& value : scope().values)
    if (value.name == name) return value;
  GSPMD_CHECK(false, "no value ", name);
  return scope().values.front();
}

Value& Generator::NewParameter(ElementType type, const Dims& dims, int64_t low, int64_t high) {
  GSPMD_CHECK(scope().allows_parameters, "parameters only in the entry");
  int64_t number = num_parameters_++;
  if (type == kPred) low = 0, high = 1;
  program_.parameters.push_back(ParameterSpec{Shape(type, dims), low, high});
  std::string sharding = dims.empty() ? "{replicated}" : RandomSharding(static_cast<int64_t>(dims.size()));
  return Emit("p", type, dims, "parameter(" + std::to_string(number) + ")", true, sharding);
}

Value& Generator::ScalarConstant(ElementType type, const std::string& literal) {
  if (type == kPred) return Emit("c", type, {}, std::string("constant(") + (literal == "0" ? "false" : "true") + ")", true, "{replicated}");
  return Emit("c", type, {}, "constant(" + literal + ")", true, "{replicated}");
}

Value& Generator::OperandLike(ElementType type, const Dims& dims, bool need_exact) {
  auto same = [&](const Value& v) { return v.type == type && v.dims == dims && (v.exact || !need_exact); };
  if (Chance(0.4))
    if (Value* existing = PickValue(same)) return *existing;
  if (scope().allows_parameters && Chance(0.8)) return NewParameter(type, dims);
  std::string literal = type == kF32    ? PickOf(std::vector<std::string>{"0.5", "-1.25", "2", "0"})
                        : type == kPred ? std::to_string(Uniform(0, 1))
                                        : std::to_string(Uniform(-3, 3));
  std::string c = ScalarConstant(type, literal).name;
  std::string op = "broadcast(" + Use(Find(c)) + "), dimensions={}";
  return Emit("bc", type, dims, op, true, RandomSharding(static_cast<int64_t>(dims.size())));
}

Value* Generator::PickValue(const std::function<bool(const Value&)>& accept) {
  std::vector<int64_t> candidates;
  for (size_t i = 0; i < scope().values.size(); ++i)
    if (!scope().values[i].hidden && accept(scope().values[i])) candidates.push_back(static_cast<int64_t>(i));
  if (candidates.empty()) return nullptr;
  // Prefer the most recent value half the time, so programs form chains.
  int64_t index = Chance(0.5) ? candidates.back() : PickOf(candidates);
  return &scope().values[index];
}

Value& Generator::PickOrCreate(const std::function<bool(const Value&)>& accept, ElementType type, int64_t min_rank,
                               int64_t max_rank) {
  if (Chance(0.85) || !scope().allows_parameters)
    if (Value* existing = PickValue(accept)) return *existing;
  Dims dims = RandomDims(Uniform(min_rank, max_rank));
  if (!scope().allows_parameters) return OperandLike(type, dims, false);  // a broadcast constant
  return NewParameter(type, dims);
}

std::string Generator::Region(const std::string& kind, ElementType type) {
  std::string name = kind + "_" + TypeName(type);
  if (std::find(region_names_.begin(), region_names_.end(), name) != region_names_.end()) return name;
  std::string t = TypeName(type);
  std::ostringstream out;
  if (kind == "less" || kind == "greater" || kind == "ge" || kind == "le" || kind == "less2") {
    // Sort and select comparators; less2 compares the first of two (key, value) pairs.
    std::string direction = kind == "greater" ? "GT" : kind == "ge" ? "GE" : kind == "le" ? "LE" : "LT";
    if (kind == "less2") {
      out << "%" << name << " (a: " << t << "[], b: " << t << "[], c: s32[], d: s32[]) -> pred[] {\n"
          << "  %a = " << t << "[] parameter(0)\n  %b = " << t << "[] parameter(1)\n"
          << "  %c = s32[] parameter(2)\n  %d = s32[] parameter(3)\n"
          << "  ROOT %r = pred[] compare(%a, %b), direction=LT\n}\n";
    } else {
      out << "%" << name << " (a: " << t << "[], b: " << t << "[]) -> pred[] {\n"
          << "  %a = " << t << "[] parameter(0)\n  %b = " << t << "[] parameter(1)\n"
          << "  ROOT %r = pred[] compare(%a, %b), direction=" << direction << "\n}\n";
    }
  } else {
    out << "%" << name << " (a: " << t << "[], b: " << t << "[]) -> " << t << "[] {\n"
        << "  %a = " << t << "[] parameter(0)\n  %b = " << t << "[] parameter(1)\n"
        << "  ROOT %r = " << t << "[] " << kind << "(%a, %b)\n}\n";
  }
  regions_.push_back(out.str());
  region_names_.push_back(name);
  return name;
}

std::string Generator::InitFor(const std::string& reducer, ElementType type) {
  if (reducer == "add") return "0";
  if (type == kF32) return reducer == "maximum" ? "-inf" : "inf";
  return reducer == "maximum" ? "-2147483648" : "2147483647";
}

// ---------------------------------------------------------------------------------------------
// Elementwise

bool Generator::GenUnary() {
  Value* x = PickValue([](const Value&) { return true; });
  if (x == nullptr) return false;
  std::vector<std::string> ops;
  if (x->type == kPred) {
    ops = {"not", "copy"};
  } else if (x->type == kF32) {
    ops = {"negate", "abs", "tanh", "sine", "cosine", "logistic", "copy"};
    if (x->exact) ops.insert(ops.end(), {"floor", "ceil", "sign", "round-nearest-even"});
  } else {
    ops = {"negate", "abs", "sign", "not", "copy"};
  }
  std::string op = PickOf(ops);
  ElementType type = x->type;
  Dims dims = x->dims;
  bool exact = x->exact;
  std::string sharding = ShardingFor(x->rank(), x);
  Emit(op == "copy" ? "copy" : "un", type, dims, op + "(" + Use(*x) + ")", exact, sharding);
  return true;
}

bool Generator::GenBinary() {
  Value* picked = PickValue([](const Value&) { return true; });
  if (picked == nullptr) return false;
  std::string x_name = picked->name;
  ElementType type = picked->type;
  Dims dims = picked->dims;
  Value& y = Chance(0.15) ? Find(x_name) : OperandLike(type, dims, false);
  std::string y_name = y.name;
  Value& x = Find(x_name);
  std::vector<std::string> ops = type == kF32    ? std::vector<std::string>{"add", "subtract", "multiply", "maximum", "minimum"}
                                 : type == kPred ? std::vector<std::string>{"and", "or", "xor"}
                                                 : std::vector<std::string>{"add", "subtract", "maximum", "minimum", "and", "or", "xor"};
  std::string op = PickOf(ops);
  bool exact = x.exact && Find(y_name).exact;
  std::string operands = Use(x) + ", " + Use(Find(y_name));
  Emit("bin", type, dims, op + "(" + operands + ")", exact, ShardingFor(static_cast<int64_t>(dims.size()), &Find(x_name)));
  return true;
}

bool Generator::GenSelect() {
  Value* picked = PickValue([](const Value& v) { return v.type != kPred && v.exact; });
  if (picked == nullptr) return false;
  std::string x_name = picked->name;
  ElementType type = picked->type;
  Dims dims = picked->dims;
  std::string y_name = OperandLike(type, dims, true).name;
  static const std::vector<std::string> kDirections = {"LT", "GT", "LE", "GE", "EQ", "NE"};
  int64_t rank = static_cast<int64_t>(dims.size());
  std::string compare_op = "compare(" + Use(Find(x_name)) + ", " + Use(Find(y_name)) + "), direction=" + PickOf(kDirections);
  std::string pred = Emit("cmp", kPred, dims, compare_op, true, ShardingFor(rank, &Find(x_name))).name;
  if (Chance(0.3)) {
    // Keep the comparison as a value too; select on another predicate of these dims.
    Value* other = PickValue([&](const Value& v) { return v.type == kPred && v.dims == dims; });
    if (other != nullptr && other->name != pred) pred = other->name;
    else return true;
  }
  ElementType result_type = Chance(0.7) ? type : (type == kF32 ? kS32 : kF32);
  std::string on_true = OperandLike(result_type, dims, false).name;
  std::string on_false = OperandLike(result_type, dims, false).name;
  bool exact = Find(on_true).exact && Find(on_false).exact;
  std::string op = "select(" + Use(Find(pred)) + ", " + Use(Find(on_true)) + ", " + Use(Find(on_false)) + ")";
  Emit("sel", result_type, dims, op, exact, ShardingFor(rank, &Find(on_true)));
  return true;
}

bool Generator::GenConvert() {
  Value* x = PickValue([](const Value& v) { return v.type != kF32 || v.exact; });
  if (x == nullptr) return false;
  if (x->type == kPred || (x->type == kS32 && Chance(0.2))) {
    ElementType to = x->type == kPred ? (Chance(0.5) ? kF32 : kS32) : kPred;
    Emit("cvt", to, x->dims, "convert(" + Use(*x) + ")", true, ShardingFor(x->rank(), x));
    return true;
  }
  if (x->type == kS32) {
    Emit("cvt", kF32, x->dims, "convert(" + Use(*x) + ")", true, ShardingFor(x->rank(), x));
    return true;
  }
  // f32 -> s32: scale first so that the integers are not all zero.
  Value& scale = ScalarConstant(kF32, "4");
  Value& b = Emit("bc", kF32, x->dims, "broadcast(" + Use(scale) + "), dimensions={}", true, RandomSharding(x->rank()));
  Value& scaled = Emit("scaled", kF32, x->dims, "multiply(" + Use(*x) + ", " + Use(b) + ")", true, ShardingFor(x->rank(), x));
  Emit("cvt", kS32, scaled.dims, "convert(" + Use(scaled) + ")", true, ShardingFor(scaled.rank(), &scaled));
  return true;
}

// ---------------------------------------------------------------------------------------------
// Shape ops

bool Generator::GenBroadcast() {
  Value* x = PickValue([](const Value& v) { return v.rank() <= 3; });
  if (x == nullptr) return false;
  int64_t added = Uniform(1, std::min<int64_t>(2, 4 - x->rank()));
  int64_t rank = x->rank() + added;
  // Choose which result positions hold the operand's dims (in order).
  Dims positions(rank);
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng_);
  positions.resize(x->rank());
  std::sort(positions.begin(), positions.end());
  Dims dims(rank, 0);
  for (int64_t i = 0; i < x->rank(); ++i) dims[positions[i]] = x->dims[i];
  for (int64_t& d : dims)
    if (d == 0) d = Uniform(1, 6);
  if (!Fits(dims)) return false;
  std::string op = "broadcast(" + Use(*x) + "), dimensions={" + Join(positions) + "}";
  Emit("bcast", x->type, dims, op, x->exact, RandomSharding(rank));
  return true;
}

bool Generator::GenTranspose() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 2; });
  if (x == nullptr) return false;
  Dims perm = RandomPermutation(x->rank());
  Dims dims;
  for (int64_t p : perm) dims.push_back(x->dims[p]);
  std::string op = "transpose(" + Use(*x) + "), dimensions={" + Join(perm) + "}";
  Emit("tr", x->type, dims, op, x->exact, RandomSharding(x->rank()));
  return true;
}

bool Generator::GenReshape() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Dims dims = x->dims;
  int64_t mode = Uniform(0, 3);
  if (mode == 0 && dims.size() >= 2) {  // merge two adjacent dims
    int64_t i = Uniform(0, static_cast<int64_t>(dims.size()) - 2);
    dims[i] *= dims[i + 1];
    dims.erase(dims.begin() + i + 1);
  } else if (mode == 1 && dims.size() <= 3) {  // split a dim
    std::vector<int64_t> splittable;
    for (size_t i = 0; i < dims.size(); ++i)
      if (!ProperDivisors(dims[i]).empty()) splittable.push_back(static_cast<int64_t>(i));
    if (splittable.empty()) return false;
    int64_t i = PickOf(splittable);
    int64_t a = PickOf(ProperDivisors(dims[i]));
    int64_t b = dims[i] / a;
    dims[i] = a;
    dims.insert(dims.begin() + i + 1, b);
  } else if (mode == 2) {  // insert or remove a dim of size 1
    auto one = std::find(dims.begin(), dims.end(), 1);
    if (one != dims.end() && Chance(0.5)) dims.erase(one);
    else if (dims.size() <= 3) dims.insert(dims.begin() + Uniform(0, static_cast<int64_t>(dims.size())), 1);
    else return false;
  } else {  // any factorization of the element count into 1..4 dims
    int64_t remaining = Product(dims);
    Dims out;
    int64_t rank = Uniform(1, 4);
    for (int64_t i = 0; i + 1 < rank; ++i) {
      Dims divisors = ProperDivisors(remaining);
      if (divisors.empty()) break;
      int64_t d = PickOf(divisors);
      out.push_back(d);
      remaining /= d;
    }
    out.push_back(remaining);
    dims = out;
  }
  if (dims == x->dims) return false;
  std::string op = "reshape(" + Use(*x) + ")";
  Emit("rs", x->type, dims, op, x->exact, RandomSharding(static_cast<int64_t>(dims.size())));
  return true;
}

bool Generator::GenSlice() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  std::string spec;
  Dims dims;
  bool changed = false;
  for (int64_t i = 0; i < x->rank(); ++i) {
    int64_t size = x->dims[i];
    int64_t start = 0, limit = size, stride = 1;
    if (Chance(0.6)) {
      start = Uniform(0, size - 1);
      limit = Uniform(start + 1, size);
      stride = Chance(0.25) ? Spread(2, 3) : 1;
      changed = true;
    }
    dims.push_back((limit - start + stride - 1) / stride);
    spec += (i ? ", " : "") + std::string("[") + std::to_string(start) + ":" + std::to_string(limit) +
            (stride != 1 ? ":" + std::to_string(stride) : "") + "]";
  }
  if (!changed) return false;
  std::string op = "slice(" + Use(*x) + "), slice={" + spec + "}";
  Emit("sl", x->type, dims, op, x->exact, ShardingFor(x->rank(), x));
  return true;
}

bool Generator::GenPad() {
  Value* picked = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (picked == nullptr) return false;
  std::string x_name = picked->name;
  std::string pad_value = ScalarConstant(picked->type, Chance(0.5) ? "0" : "1").name;
  Value& x = Find(x_name);
  std::string config;
  Dims dims;
  for (int64_t i = 0; i < x.rank(); ++i) {
    int64_t size = x.dims[i];
    int64_t low = 0, high = 0, interior = 0;
    if (Chance(0.6)) {
      low = Spread(-2, 3);
      high = Spread(-2, 3);
      interior = Chance(0.2) ? Uniform(1, 2) : 0;
    }
    int64_t out = size + (size - 1) * interior + low + high;
    if (out < 1) {
      low = std::max<int64_t>(low, 0);
      high = std::max<int64_t>(high, 0);
      out = size + (size - 1) * interior + low + high;
    }
    dims.push_back(out);
    config += (i ? "x" : "") + std::to_string(low) + "_" + std::to_string(high) +
              (interior ? "_" + std::to_string(interior) : "");
  }
  if (!Fits(dims)) return false;
  std::string op = "pad(" + Use(x) + ", " + Use(Find(pad_value)) + "), padding=" + config;
  Emit("pad", x.type, dims, op, x.exact, ShardingFor(x.rank(), &Find(x_name)));
  return true;
}

bool Generator::GenConcatenate() {
  Value* picked = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (picked == nullptr) return false;
  std::string x_name = picked->name;
  ElementType type = picked->type;
  Dims dims = picked->dims;
  int64_t dim = Uniform(0, picked->rank() - 1);
  std::vector<std::string> names = {x_name};
  int64_t others = Uniform(1, 2);
  for (int64_t k = 0; k < others; ++k) {
    Dims other = dims;
    other[dim] = Uniform(1, 6);
    if (Chance(0.2)) names.push_back(x_name);
    else names.push_back(OperandLike(type, other, false).name);
  }
  Dims result = dims;
  result[dim] = 0;
  bool exact = true;
  std::string operands;
  for (const std::string& name : names) {
    Value& v = Find(name);
    result[dim] += v.dims[dim];
    exact = exact && v.exact;
    operands += (operands.empty() ? "" : ", ") + Use(v);
  }
  if (!Fits(result)) return false;
  std::string op = "concatenate(" + operands + "), dimensions={" + std::to_string(dim) + "}";
  Emit("cat", type, result, op, exact, ShardingFor(static_cast<int64_t>(dims.size()), &Find(x_name)));
  return true;
}

bool Generator::GenReverse() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Dims reversed;
  for (int64_t i = 0; i < x->rank(); ++i)
    if (Chance(0.5)) reversed.push_back(i);
  if (reversed.empty()) reversed.push_back(Uniform(0, x->rank() - 1));
  std::string op = "reverse(" + Use(*x) + "), dimensions={" + Join(reversed) + "}";
  Dims dims = x->dims;
  Emit("rev", x->type, dims, op, x->exact, ShardingFor(x->rank(), x));
  return true;
}

bool Generator::GenIota() {
  Dims dims = RandomDims(Uniform(1, 3));
  int64_t dimension = Uniform(0, static_cast<int64_t>(dims.size()) - 1);
  ElementType type = Chance(0.6) ? kS32 : kF32;
  std::string op = "iota(), iota_dimension=" + std::to_string(dimension);
  Emit("iota", type, dims, op, true, RandomSharding(static_cast<int64_t>(dims.size())));
  return true;
}

}  // namespace gspmd::random_program::detail
