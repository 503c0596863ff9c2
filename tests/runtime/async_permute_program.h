// A per-device program for the tests of the asynchronous collective-permute (threads and MPI):
// a loop passing windows round a ring of devices while a dot uses them, with the permutes as
// start/done pairs around the dots or as blocking permutes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "support/diagnostic.h"

namespace gspmd::async_permute_test {

// A ring of `n` devices passing two windows of x around in opposite directions while each trip
// multiplies the current windows with w and folds the products into an accumulator (order
// matters: acc = acc * 0.5 + product). Async: both permutes start before the dots and finish
// after them, the second one first. Sync: the same program with blocking permutes.
inline std::string RingProgram(int64_t n, bool async) {
  std::string left, right;  // window moves to the previous / next device
  for (int64_t d = 0; d < n; ++d) {
    left += (d ? "," : "") + StrCat("{", d, ",", (d + n - 1) % n, "}");
    right += (d ? "," : "") + StrCat("{", d, ",", (d + 1) % n, "}");
  }
  const std::string state = "(s32[], f32[2,8], f32[2,8], f32[8,4], f32[2,4])";
  std::string moves;
  std::string finishes;
  if (async) {
    moves = StrCat("  sa = (f32[2,8], f32[2,8], u32[], u32[]) collective-permute-start(a), channel_id=1, "
                   "source_target_pairs={", left, "}\n"
                   "  sb = (f32[2,8], f32[2,8], u32[], u32[]) collective-permute-start(b), channel_id=2, "
                   "source_target_pairs={", right, "}\n");
    finishes = "  nb = f32[2,8] collective-permute-done(sb)\n"
               "  na = f32[2,8] collective-permute-done(sa)\n";
  } else {
    moves = StrCat("  na = f32[2,8] collective-permute(a), channel_id=1, source_target_pairs={", left, "}\n",
                   "  nb = f32[2,8] collective-permute(b), channel_id=2, source_target_pairs={", right, "}\n");
  }
  return StrCat("HloModule ring, num_partitions=", n, "\n\n",
                "cond {\n  s = ", state, " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n",
                "  limit = s32[] constant(", n, ")\n  ROOT lt = pred[] compare(i, limit), direction=LT\n}\n\n",
                "body {\n  s = ", state, " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n",
                "  a = f32[2,8] get-tuple-element(s), index=1\n  b = f32[2,8] get-tuple-element(s), index=2\n",
                "  w = f32[8,4] get-tuple-element(s), index=3\n  acc = f32[2,4] get-tuple-element(s), index=4\n",
                moves,
                "  da = f32[2,4] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
                "  db = f32[2,4] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
                "  half = f32[2,4] constant({{0.5,0.5,0.5,0.5},{0.5,0.5,0.5,0.5}})\n",
                "  scaled = f32[2,4] multiply(acc, half)\n  d = f32[2,4] subtract(da, db)\n",
                "  acc2 = f32[2,4] add(scaled, d)\n", finishes,
                "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n",
                "  ROOT t = ", state, " tuple(i2, na, nb, w, acc2)\n}\n\n",
                "ENTRY main {\n  x = f32[2,8] parameter(0), sharding={devices=[", n, ",1]<=[", n, "]}\n",
                "  y = f32[2,8] parameter(1), sharding={devices=[", n, ",1]<=[", n, "]}\n",
                "  w = f32[8,4] parameter(2), sharding={replicated}\n",
                "  zero = f32[] constant(0)\n  acc = f32[2,4] broadcast(zero), dimensions={}\n",
                "  i = s32[] constant(0)\n  init = ", state, " tuple(i, x, y, w, acc)\n",
                "  loop = ", state, " while(init), condition=cond, body=body\n",
                "  ROOT out = f32[2,4] get-tuple-element(loop), index=4, sharding={devices=[", n, ",1]<=[", n,
                "]}\n}\n");
}

// Random-looking but exact inputs of the ring program's global shapes.
inline std::vector<Literal> RingInputs(int64_t n) {
  std::vector<Literal> inputs;
  const std::vector<std::vector<int64_t>> shapes = {{2 * n, 8}, {2 * n, 8}, {8, 4}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    Literal literal(Shape(ElementType::kF32, shapes[i]));
    for (int64_t e = 0; e < literal.element_count(); ++e)
      literal.SetFromDouble(e, static_cast<double>(((e * 7919 + static_cast<int64_t>(i) * 31) % 61) - 30) / 7.0);
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

}  // namespace gspmd::async_permute_test
