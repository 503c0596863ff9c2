// XLA's counter-based random bit generators, as its RngBitGeneratorExpander builds them on
// CPU: ThreeFry-2x32 (20 rounds) and Philox-4x32 (10 rounds), with XLA's layout of counters
// over the output elements. The cores are checked against Random123's known-answer vectors.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gspmd {

// The cores: one block of output from a counter and a key (Random123's argument order).
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key);
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

enum class BitAlgorithm { kThreeFry, kPhilox };

// The bits rng-bit-generator produces for an output of `dims` with elements of `bit_width`
// bits (8, 16, 32 or 64; narrower than 32 keeps the low bits of 32), each in a uint64, and
// the next state. `state` is the operand: u64[2] for ThreeFry (key, counter), u64[2] or u64[3]
// for Philox (key, counter[, counter high]).
struct RandomBits {
  std::vector<uint64_t> values;     // row-major over dims
  std::vector<uint64_t> new_state;  // the same length as state
};
RandomBits GenerateRandomBits(BitAlgorithm algorithm, const std::vector<uint64_t>& state,
                              const std::vector<int64_t>& dims, int bit_width);

}  // namespace gspmd
