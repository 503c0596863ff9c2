// rng-bit-generator and rng: the ThreeFry-2x32 and Philox-4x32 cores against Random123's
// published known-answer vectors, XLA's element layouts over the output, state updates, and
// the value ranges of rng.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/interp/evaluator.h"
#include "runtime/interp/random_bits.h"
#include "text/parser.h"

namespace gspmd {
namespace {

TEST(RandomBitsTest, ThreeFryMatchesRandom123KnownAnswers) {
  // Random123 kat_vectors: threefry2x32 20 rounds, (counter, key) -> output.
  EXPECT_EQ(ThreeFry2x32({0, 0}, {0, 0}), (std::array<uint32_t, 2>{0x6b200159u, 0x99ba4efeu}));
  EXPECT_EQ(ThreeFry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 2>{0x1cb996fcu, 0xbb002be7u}));
  EXPECT_EQ(ThreeFry2x32({0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}),
            (std::array<uint32_t, 2>{0xc4923a9cu, 0x483df7a0u}));
}

TEST(RandomBitsTest, PhiloxMatchesRandom123KnownAnswers) {
  // Random123 kat_vectors: philox4x32 10 rounds, (counter, key) -> output.
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// Runs rng-bit-generator on `state` and returns (new state, bits as u64 per element).
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> RunGenerator(const std::string& algorithm, const std::string& out,
                                                            std::vector<uint64_t> state) {
  std::string state_shape = "u64[" + std::to_string(state.size()) + "]";
  std::string text = "HloModule m\n\nENTRY e {\n  s = " + state_shape + " parameter(0)\n  ROOT r = (" + state_shape +
                     ", " + out + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
  std::unique_ptr<Module> module = ParseModule(text);
  Literal input(Shape(ElementType::kU64, {static_cast<int64_t>(state.size())}));
  std::memcpy(input.raw(), state.data(), state.size() * 8);
  Literal result = EvaluateModule(*module, std::vector<Literal>{input});
  const Literal& new_state = result.tuple_elements()[0];
  const Literal& bits = result.tuple_elements()[1];
  std::vector<uint64_t> s(static_cast<size_t>(new_state.element_count())), b(static_cast<size_t>(bits.element_count()));
  std::memcpy(s.data(), new_state.raw(), s.size() * 8);
  int64_t size = ElementByteSize(bits.element_type());
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(&b[i], bits.raw() + i * size, static_cast<size_t>(size));
  return {s, b};
}

TEST(RngBitGeneratorTest, ThreeFryPairsOutputsAlongTheHalvedDimension) {
  // u32[4]: the even dimension 0 is halved to [2,2]; pair h comes from counter+h.
  uint64_t key = 0x13198a2e03707344ull, counter = 7;
  auto [state, bits] = RunGenerator("rng_three_fry", "u32[4]", {key, counter});
  std::array<uint32_t, 2> key32 = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  for (uint64_t h = 0; h < 2; ++h) {
    std::array<uint32_t, 2> pair = ThreeFry2x32({static_cast<uint32_t>(counter + h), 0}, key32);
    EXPECT_EQ(bits[2 * h], pair[0]);
    EXPECT_EQ(bits[2 * h + 1], pair[1]);
  }
  EXPECT_EQ(state, (std::vector<uint64_t>{key, counter + 2}));  // the half shape's element count
  // An odd dimension: [3] is padded to [2,2] and the last output dropped.
  auto [odd_state, odd] = RunGenerator("rng_three_fry", "u32[3]", {key, counter});
  EXPECT_EQ(odd[2], ThreeFry2x32({static_cast<uint32_t>(counter + 1), 0}, key32)[0]);
  EXPECT_EQ(odd_state[1], counter + 2);
  // The first even dimension is the one halved: [3,2] pairs along dimension 1.
  auto [unused, grid] = RunGenerator("rng_three_fry", "u32[3,2]", {key, counter});
  EXPECT_EQ(grid[4], ThreeFry2x32({static_cast<uint32_t>(counter + 2), 0}, key32)[0]);
  EXPECT_EQ(grid[5], ThreeFry2x32({static_cast<uint32_t>(counter + 2), 0}, key32)[1]);
}

TEST(RngBitGeneratorTest, ThreeFry64BitJoinsBothWords) {
  auto [state, bits] = RunGenerator("rng_three_fry", "u64[2]", {5, 9});
  std::array<uint32_t, 2> pair = ThreeFry2x32({10, 0}, {5, 0});
  EXPECT_EQ(bits[1], static_cast<uint64_t>(pair[0]) | (static_cast<uint64_t>(pair[1]) << 32));
  EXPECT_EQ(state[1], 11u);
}

TEST(RngBitGeneratorTest, PhiloxDealsBlocksRoundRobin) {
  // u64[3]: key, then a 128-bit counter (low, high).
  auto [state, bits] = RunGenerator("rng_philox", "u32[5]", {3, 100, 1});
  std::array<uint32_t, 4> first = Philox4x32({100, 0, 1, 0}, {3, 0});
  std::array<uint32_t, 4> second = Philox4x32({101, 0, 1, 0}, {3, 0});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bits[i], first[i]);
  EXPECT_EQ(bits[4], second[0]);
  EXPECT_EQ(state, (std::vector<uint64_t>{3, 102, 1}));
  // u64[2]: XLA reverses the state, so the counter's high word is the key.
  auto [short_state, short_bits] = RunGenerator("rng_default", "u32[4]", {3, 100});
  EXPECT_EQ(short_bits[0], Philox4x32({100, 0, 3, 0}, {3, 0})[0]);
  EXPECT_EQ(short_state, (std::vector<uint64_t>{3, 101}));
}

TEST(RngBitGeneratorTest, NarrowTypesKeepTheLowBits) {
  auto [unused, wide] = RunGenerator("rng_philox", "u32[4]", {3, 100, 1});
  auto [unused2, narrow] = RunGenerator("rng_philox", "u16[4]", {3, 100, 1});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(narrow[i], wide[i] & 0xffffu);
}

TEST(RngTest, UniformAndNormalValues) {
  std::string text = R"(HloModule m
ENTRY e {
  lo = f32[] constant(2)
  hi = f32[] constant(3)
  u = f32[4096]{0} rng(lo, hi), distribution=rng_uniform
  zero = f32[] constant(0)
  one = f32[] constant(1)
  n = f32[4096]{0} rng(zero, one), distribution=rng_normal
  a = s32[] constant(-5)
  b = s32[] constant(5)
  i = s32[4096]{0} rng(a, b), distribution=rng_uniform
  ROOT t = (f32[4096]{0}, f32[4096]{0}, s32[4096]{0}) tuple(u, n, i)
})";
  std::unique_ptr<Module> module = ParseModule(text);
  Literal result = EvaluateModule(*module, {});
  double sum = 0, square = 0;
  for (int64_t k = 0; k < 4096; ++k) {
    double u = result.tuple_elements()[0].GetAsDouble(k);
    EXPECT_GE(u, 2.0);
    EXPECT_LT(u, 3.0);
    double n = result.tuple_elements()[1].GetAsDouble(k);
    sum += n;
    square += n * n;
    int64_t i = result.tuple_elements()[2].GetAsInt64(k);
    EXPECT_GE(i, -5);
    EXPECT_LT(i, 5);
  }
  EXPECT_NEAR(sum / 4096, 0.0, 0.1);
  EXPECT_NEAR(square / 4096, 1.0, 0.1);
}

TEST(RngTest, HostTransfersAreACannotRunError) {
  std::string text = R"(HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT i = ((f32[2]{0}), token[]) infeed(t)
})";
  std::unique_ptr<Module> module = ParseModule(text, "i.hlo");
  try {
    EvaluateModule(*module, {});
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()).substr(0, 32), "i.hlo:4:8: error: %i: cannot run");
  }
}

}  // namespace
}  // namespace gspmd
