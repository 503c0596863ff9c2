// rng-bit-generator and rng in the interpreter, on XLA's bit generators (random_bits.h).
//
// rng-bit-generator gives the bits XLA's CPU backend gives: rng_three_fry and rng_philox as
// its RngBitGeneratorExpander builds them, rng_default as Philox (the CPU default). rng
// (uniform / normal) turns Philox bits into values the way XLA's client library does (mantissa
// bits for floats, a remainder for integers, Box-Muller for normals), from a counter the
// Evaluator keeps: XLA seeds rng from process-global state, so its rng values are not
// reproducible anywhere and these are not XLA's numbers.
#include "runtime/interp/random.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "runtime/interp/eval_elementwise.h"
#include "runtime/interp/random_bits.h"

namespace gspmd {
namespace {

std::string_view ExtraAttribute(const Instruction& instruction, std::string_view name) {
  for (const auto& [key, value] : instruction.extra_attributes())
    if (key == name) return value;
  return {};
}

int BitWidth(ElementType type) { return static_cast<int>(ElementByteSize(type) * 8); }

// Stores `bits` (one value per element, low bits used) as elements of `type` (bitcast).
void StoreBits(Literal& out, const std::vector<uint64_t>& bits) {
  int64_t size = ElementByteSize(out.element_type());
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(out.raw() + i * size, &bits[i], static_cast<size_t>(size));
}

// Uniform values in [low, high) from random bits, as XLA's ConvertRandomBitsToUniform*.
double UniformFloat(uint64_t bits, ElementType type, int bit_width, double low, double high) {
  if (type == ElementType::kF16) {  // 10 random mantissa bits under exponent 15: [1, 2) - 1
    uint16_t half_bits = static_cast<uint16_t>((15u << 10) | (bits & 0x3ffu));
    Half h;
    h.bits = half_bits;
    return (static_cast<double>(static_cast<float>(h)) - 1.0) * (high - low) + low;
  }
  int mantissa = type == ElementType::kBF16 ? 7 : type == ElementType::kF32 ? 23 : 52;
  double value = std::ldexp(static_cast<double>(bits >> (bit_width - mantissa)), -mantissa);
  return value * (high - low) + low;
}

}  // namespace

Literal EvaluateRngBitGenerator(const Instruction& instruction, const Literal& state) {
  std::string_view name = ExtraAttribute(instruction, "algorithm");
  BitAlgorithm algorithm = name == "rng_three_fry" ? BitAlgorithm::kThreeFry : BitAlgorithm::kPhilox;
  // (new state, bits), or the bits alone when the result is written as a plain array.
  bool with_state = instruction.shape().IsTuple();
  const Shape& output_shape = with_state ? instruction.shape().tuple_shape(1) : instruction.shape();
  int width = BitWidth(output_shape.element_type());
  if (width != 8 && width != 16 && width != 32 && width != 64)
    GSPMD_USER_ERROR(DescribeInstruction(instruction), ": cannot generate ", ElementTypeName(output_shape.element_type()),
                     " random bits (expected an 8-, 16-, 32- or 64-bit type)");
  std::vector<uint64_t> words(static_cast<size_t>(state.element_count()));
  std::memcpy(words.data(), state.raw(), words.size() * sizeof(uint64_t));
  RandomBits bits = GenerateRandomBits(algorithm, words, output_shape.dims(), width);
  Literal values(Shape(output_shape.element_type(), output_shape.dims()));
  StoreBits(values, bits.values);
  if (!with_state) return values;
  Literal new_state(Shape(ElementType::kU64, state.shape().dims()));
  std::memcpy(new_state.raw(), bits.new_state.data(), bits.new_state.size() * sizeof(uint64_t));
  std::vector<Literal> elements;
  elements.push_back(std::move(new_state));
  elements.push_back(std::move(values));
  return Literal::Tuple(std::move(elements));
}

Literal EvaluateRng(const Instruction& instruction, const Literal& a, const Literal& b, uint64_t& counter) {
  const Shape& shape = instruction.shape();
  ElementType type = shape.element_type();
  bool normal = instruction.rng_distribution() == "rng_normal";
  Literal result(Shape(type, shape.dims()));
  int64_t n = result.element_count();
  int width = std::max(BitWidth(type), 32);
  if (type == ElementType::kF16 || type == ElementType::kBF16) width = 16;
  // Two uniforms per normal value (Box-Muller); one per uniform value.
  int64_t draws = normal ? 2 * n : n;
  std::vector<uint64_t> state = {0x2aull, counter, 0};
  RandomBits bits = GenerateRandomBits(BitAlgorithm::kPhilox, state, {draws}, width);
  counter = bits.new_state[1];
  double low = a.GetAsDouble(0), high = b.GetAsDouble(0);
  for (int64_t i = 0; i < n; ++i) {
    if (normal) {
      double u0 = UniformFloat(bits.values[static_cast<size_t>(2 * i)], type, width, 0.0, 1.0);
      double u1 = UniformFloat(bits.values[static_cast<size_t>(2 * i + 1)], type, width, 0.0, 1.0);
      double z = std::sin(2.0 * M_PI * u1) * std::sqrt(-2.0 * std::log(std::max(u0, 1.0e-7)));
      result.SetFromDouble(i, low + high * z);  // rng_normal(mu, sigma)
      continue;
    }
    if (IsFloatingPoint(type)) {
      result.SetFromDouble(i, UniformFloat(bits.values[static_cast<size_t>(i)], type, width, low, high));
      continue;
    }
    // Integers: low + dist/2 + (dist - dist/2), dist = bits % (high - low) over unsigned values.
    uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    uint64_t range = (static_cast<uint64_t>(b.GetAsInt64(0)) - static_cast<uint64_t>(a.GetAsInt64(0))) & mask;
    uint64_t dist = range == 0 ? 0 : (bits.values[static_cast<size_t>(i)] & mask) % range;
    result.SetFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a.GetAsInt64(0)) + dist / 2 + (dist - dist / 2)));
  }
  return result;
}

}  // namespace gspmd
