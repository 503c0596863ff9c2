// ThreeFry-2x32 and Philox-4x32 and the element layouts of XLA's bit generators (see
// random_bits.h). The layouts follow XLA's client library: ThreeFry gives each pair of
// 32-bit outputs one 64-bit counter (state + index over the shape with one even dimension
// halved); Philox gives each 128-bit block four 32-bit outputs, dealt round-robin.
#include "runtime/interp/random_bits.h"

#include "support/diagnostic.h"

namespace gspmd {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

std::array<uint32_t, 2> Split64(uint64_t value) {
  return {static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)};
}

uint64_t Join32(uint32_t low, uint32_t high) { return static_cast<uint64_t>(low) | (static_cast<uint64_t>(high) << 32); }

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// ThreeFry, 32-bit outputs: XLA halves the first even dimension (or the largest one when
// none is even) into [ceil(d/2), 2]; the half-shape element's linear index plus the counter
// feeds the core, whose two outputs fill the two positions of that pair.
std::vector<uint64_t> ThreeFry32(uint64_t key, uint64_t counter, const std::vector<int64_t>& dims) {
  std::array<uint32_t, 2> key32 = Split64(key);
  int64_t total = Product(dims);
  std::vector<uint64_t> out(static_cast<size_t>(total));
  if (dims.empty()) {
    out[0] = ThreeFry2x32(Split64(counter), key32)[0];
    return out;
  }
  int64_t split = -1;
  for (size_t i = 0; i < dims.size() && split < 0; ++i)
    if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
  if (split < 0) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i)
      if (dims[i] > dims[static_cast<size_t>(split)]) split = static_cast<int64_t>(i);
  }
  // Elements as (outer, d, inner) around the split dimension.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < split; ++i) outer *= dims[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(split) + 1; i < dims.size(); ++i) inner *= dims[i];
  int64_t d = dims[static_cast<size_t>(split)], half = (d + 1) / 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t h = 0; h < half; ++h) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t half_index = (o * half + h) * inner + i;  // linear index in the half shape
        std::array<uint32_t, 2> pair = ThreeFry2x32(Split64(counter + static_cast<uint64_t>(half_index)), key32);
        for (int64_t which = 0; which < 2; ++which) {
          int64_t position = 2 * h + which;
          if (position >= d) continue;  // the padding of an odd dimension is sliced away
          out[static_cast<size_t>((o * d + position) * inner + i)] = pair[static_cast<size_t>(which)];
        }
      }
    }
  }
  return out;
}

std::vector<uint64_t> ThreeFry64(uint64_t key, uint64_t counter, int64_t total) {
  std::array<uint32_t, 2> key32 = Split64(key);
  std::vector<uint64_t> out(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    std::array<uint32_t, 2> pair = ThreeFry2x32(Split64(counter + static_cast<uint64_t>(i)), key32);
    out[static_cast<size_t>(i)] = Join32(pair[0], pair[1]);
  }
  return out;
}

// 128-bit counter + n, as two 64-bit words (low first).
std::array<uint64_t, 2> Add128(std::array<uint64_t, 2> value, uint64_t n) {
  uint64_t low = value[0] + n;
  return {low, value[1] + (low < value[0] ? 1 : 0)};
}

// `blocks` Philox blocks from counter+0 ... counter+blocks-1.
std::vector<std::array<uint32_t, 4>> PhiloxBlocks(uint64_t key, std::array<uint64_t, 2> counter, int64_t blocks) {
  std::array<uint32_t, 2> key32 = Split64(key);
  std::vector<std::array<uint32_t, 4>> out(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    std::array<uint64_t, 2> c = Add128(counter, static_cast<uint64_t>(b));
    std::array<uint32_t, 2> low = Split64(c[0]), high = Split64(c[1]);
    out[static_cast<size_t>(b)] = Philox4x32({low[0], low[1], high[0], high[1]}, key32);
  }
  return out;
}

}  // namespace

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0], x1 = counter[1] + ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, kRotations[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    // Key injection after every four rounds.
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  constexpr uint32_t kW32A = 0x9E3779B9u, kW32B = 0xBB67AE85u;
  constexpr uint32_t kM4x32A = 0xD2511F53u, kM4x32B = 0xCD9E8D57u;
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = static_cast<uint64_t>(x[0]) * kM4x32A;
    uint64_t product1 = static_cast<uint64_t>(x[2]) * kM4x32B;
    x = {static_cast<uint32_t>(product1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(product1),
         static_cast<uint32_t>(product0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(product0)};
    key = {key[0] + kW32A, key[1] + kW32B};
  }
  return x;
}

RandomBits GenerateRandomBits(BitAlgorithm algorithm, const std::vector<uint64_t>& state,
                              const std::vector<int64_t>& dims, int bit_width) {
  GSPMD_CHECK(state.size() >= 2, "random state needs at least two words");
  int64_t total = Product(dims);
  RandomBits bits;
  bits.new_state = state;
  uint64_t key = state[0];
  if (algorithm == BitAlgorithm::kThreeFry) {
    uint64_t counter = state[1];
    if (bit_width == 64) {
      bits.values = ThreeFry64(key, counter, total);
      bits.new_state[1] = counter + static_cast<uint64_t>(total);
    } else {
      bits.values = ThreeFry32(key, counter, dims);
      int64_t half_total = total;  // the half shape's element count
      if (!dims.empty()) {
        std::vector<int64_t> half = dims;
        int64_t split = -1;
        for (size_t i = 0; i < half.size() && split < 0; ++i)
          if (half[i] % 2 == 0) split = static_cast<int64_t>(i);
        if (split < 0) {
          split = 0;
          for (size_t i = 1; i < half.size(); ++i)
            if (half[i] > half[static_cast<size_t>(split)]) split = static_cast<int64_t>(i);
        }
        half[static_cast<size_t>(split)] = (half[static_cast<size_t>(split)] + 1) / 2;
        half_total = Product(half);
      }
      bits.new_state[1] = counter + static_cast<uint64_t>(half_total);
    }
  } else {
    // u64[3]: counter = (state[1], state[2]); u64[2]: XLA reverses the state, so the counter
    // is (state[1], state[0]) and only its low word is kept.
    std::array<uint64_t, 2> counter = state.size() >= 3 ? std::array<uint64_t, 2>{state[1], state[2]}
                                                         : std::array<uint64_t, 2>{state[1], state[0]};
    int64_t words = bit_width == 64 ? 2 * total : total;
    int64_t blocks = (words + 3) / 4;
    std::vector<std::array<uint32_t, 4>> out = PhiloxBlocks(key, counter, blocks);
    bits.values.resize(static_cast<size_t>(total));
    for (int64_t j = 0; j < total; ++j) {
      if (bit_width == 64) {
        const std::array<uint32_t, 4>& block = out[static_cast<size_t>(j / 2)];
        bits.values[static_cast<size_t>(j)] = j % 2 == 0 ? Join32(block[0], block[1]) : Join32(block[2], block[3]);
      } else {
        bits.values[static_cast<size_t>(j)] = out[static_cast<size_t>(j / 4)][static_cast<size_t>(j % 4)];
      }
    }
    std::array<uint64_t, 2> next = Add128(counter, static_cast<uint64_t>(blocks));
    bits.new_state[1] = next[0];
    if (state.size() >= 3) bits.new_state[2] = next[1];
  }
  if (bit_width < 32) {
    uint64_t mask = (uint64_t{1} << bit_width) - 1;
    for (uint64_t& v : bits.values) v &= mask;
  }
  return bits;
}

}  // namespace gspmd
