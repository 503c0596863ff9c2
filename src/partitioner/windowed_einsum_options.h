// When the partitioner turns a dot's all-gather (or the reduce-scatter of its partial sums) into
// a windowed einsum: a loop of partial dots passing windows or accumulators around a ring of the
// devices (handlers/dot_windowed.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gspmd {

class Instruction;

enum class WindowedEinsumMode {
  kAuto,    // where the cost check accepts it (or, without one, the collective is large:
            // threshold_bytes), and the ring is short (max_trips)
  kOff,     // never: the operand is all-gathered before the dot, the result reduce-scattered after
  kAlways,  // wherever a supported case arises
};

// Whether the loop passes windows (accumulators) both ways round the ring.
//   unidirectional: N trips; trip i does one partial dot while one window moves one ring step.
//   bidirectional:  ceil(N/2) - 1 trips, each two partial dots while one window moves each way
//                   round the ring; the first partial dot (all-gather: the device's own window,
//                   while the first two windows leave) or the last (reduce-scatter: its own chunk,
//                   while the last two accumulators arrive) is peeled out of the loop, and for even
//                   N the window farthest round the ring too (all-gather: after the loop;
//                   reduce-scatter: the accumulator's first partial, before it).
// It sends the same bytes in half the trips: each ring link carries a window in each direction
// per trip instead of one, and the loop pays its per-trip latency half as often; it holds two
// windows (accumulators) in flight each way instead of one, and its first (last) permutes
// overlap the peeled dot instead of a trip's.
enum class WindowedEinsumDirection {
  // For N >= 4: bidirectional for reduce-scatter accumulators and all-gather windows over a
  // contracting dim (whose sum also starts from the own window's partial dot: one pass over the
  // local result fewer); unidirectional for free and batch windows, which gain only the trips
  // and hold twice the windows in flight (on the dense LM of docs/simulate.md, `gspmd simulate`
  // estimated more memory for their bidirectional loops and rematerialized more). With a cost
  // check (auto mode), that direction is offered first and, if refused, the other one.
  kAuto,
  kOne,   // always unidirectional
  kBoth,  // bidirectional whenever N >= 3 (N = 2 has nothing to split)
};

// Whether a unidirectional loop runs two ring steps per trip (XLA's "unrolled windowed
// einsum"): floor(N/2) trips, each two partial dots and two permutes, the second permute
// passing on the window (accumulator) the first one brought, so one step's permute overlaps the
// other step's dot with no loop boundary between them, and the counter, the condition and the
// loop's own bookkeeping run once per two ring steps. It sends the same bytes in the same
// order as the plain loop and computes the same numbers (contracting windows and accumulators
// add the same partials in the same order). For odd N the one step left over runs outside the
// loop: the all-gather's last window is dotted after the loop (one permute fewer: it passed on a
// window nobody needs), the reduce-scatter's first partial before it (it starts the
// accumulator instead of a permute of zeros). Bidirectional loops are not unrolled: they
// already take two ring steps (one each way) per trip.
enum class WindowedEinsumUnroll {
  // With a cost check (auto mode), each unidirectional candidate is offered unrolled first and,
  // if refused, plain; otherwise (no check, or always) plain, as kOff.
  kAuto,
  kOff,  // never
  kOn,   // every unidirectional loop (any N >= 2)
};

// One loop the partitioner could emit, as the cost check sees it. Bytes are per device.
struct WindowedEinsumCandidate {
  enum class Kind { kAllGather, kReduceScatter };
  Kind kind = Kind::kAllGather;  // the collective the loop replaces
  bool bidirectional = false;
  bool unrolled = false;  // two ring steps per trip (WindowedEinsumUnroll)
  // The dot of the global program (its element type, precision_config, metadata); for a
  // cached decision (see cost_check), the first dot that asked.
  const Instruction* dot = nullptr;
  int64_t devices = 0;  // N, devices in each ring (along the windowed mesh axes)
  int64_t trips = 0;    // of the while loop: N, ceil(N/2) - 1 bidirectional, floor(N/2) unrolled
  // Bytes each device sends per trip (collective-permutes of one window or accumulator each
  // way: both directions together when bidirectional; both steps' when unrolled), and the
  // partial dots' FLOPs per trip.
  int64_t window_bytes_per_trip = 0;
  double flops_per_trip = 0;
  // HBM bytes the trip's partial dots read and write, with their update of the result (roughly:
  // operands read, partial written; a sum of a contracting window or an accumulator adds the
  // partial to the accumulator as it is written, reading and writing the accumulator: a pass
  // over the whole local result per contracting window).
  int64_t hbm_bytes_per_trip = 0;
  // The one dot the loop replaces (after the all-gather, before the reduce-scatter): HBM bytes
  // of its operands and result, each once. Against trips x hbm_bytes_per_trip it shows what
  // splitting the dot costs: every partial dot reads the other operand again.
  int64_t native_dot_hbm_bytes = 0;
  // All-gather: the gathered operand has users besides this dot (a weight read by the forward
  // and the backward dot, an activation by the next layer and by a weight gradient), whose
  // gathers of it the partitioner may share with this one: the loop may then not save the
  // collective, only add its permutes.
  bool collective_shared = false;
  // All-gather: the operand it gathers (of the global program). Its other users are the dots
  // whose loops, taken together with this one, would leave nothing to gather it for.
  const Instruction* gathered_operand = nullptr;
  // Outside the loop (bidirectional, and unrolled for odd N): the peeled partial dots' FLOPs,
  // and the bytes sent alongside them (the all-gather's first two windows, the reduce-scatter's
  // last two accumulators; none for the unrolled loop's one step left over).
  double peeled_flops = 0;
  int64_t peeled_bytes = 0;
  // The replaced collective: the all-gather's result, or the reduce-scatter's operand.
  int64_t collective_bytes = 0;
  // Windows or accumulators the loop holds at once (the one it works on and the one
  // arriving, per direction), against the collective_bytes the collective materializes.
  int64_t extra_buffer_bytes = 0;
  // Each ring's devices in ring order: one ring step passes ring[j + 1] -> ring[j] (the
  // bidirectional loop also ring[j] -> ring[j + 1]); the replaced collective's replica groups
  // are the same devices unless the loop is grouped.
  std::vector<std::vector<int64_t>> rings;
  // A grouped all-gather loop (group > 1): the operand is first all-gathered among `group`
  // near devices (the minor digits of the gathered axes: `pre_gather_groups`, each device then
  // holding `pre_gather_bytes`), and the loop runs round rings of the other devices (`devices`
  // = N / group) passing windows of `group` shards. Fewer, larger partial dots: on a long ring
  // each 1/N partial dot can be bound by HBM (it reads the other operand or the accumulator
  // again), while the small pre-gather runs on the nearest links. `collective_groups` are the
  // replaced all-gather's replica groups (all N devices each).
  int64_t group = 1;
  std::vector<std::vector<int64_t>> pre_gather_groups;
  int64_t pre_gather_bytes = 0;
  std::vector<std::vector<int64_t>> collective_groups;
  // The same loop (direction, unrolling) grouped otherwise, offered after or before this one: a
  // cost check that prices loops takes a candidate only when no alternative is cheaper, so the
  // first one it takes is the cheapest grouping.
  std::vector<WindowedEinsumCandidate> alternatives;
};

// Whether to emit `candidate` (true) or keep the collective (false).
using WindowedEinsumCostCheck = std::function<bool(const WindowedEinsumCandidate&)>;

struct WindowedEinsumOptions {
  WindowedEinsumMode mode = WindowedEinsumMode::kAuto;
  // auto without a cost check: the collective's bytes per device (the all-gather's result, the
  // reduce-scatter's operand) at least this many.
  int64_t threshold_bytes = int64_t{1} << 30;
  // auto: at most this many devices in the replaced collective (with or without a cost check;
  // a grouped loop's ring has fewer).
  int64_t max_trips = 64;
  WindowedEinsumDirection direction = WindowedEinsumDirection::kAuto;
  WindowedEinsumUnroll unroll = WindowedEinsumUnroll::kAuto;
  // auto: when set, decides every candidate instead of threshold_bytes (e.g. from the
  // simulator's chip model). A dot with several candidates (either operand's all-gather, the
  // result's reduce-scatter; the directions in WindowedEinsumDirection's order, each
  // unidirectional one unrolled first under WindowedEinsumUnroll::kAuto) offers them largest
  // collective first and takes the first accepted. Decisions are cached per distinct dot
  // (same shapes and layouts), so a model's repeated layers ask once.
  WindowedEinsumCostCheck cost_check;
};

// "auto", "off" or "always"; nullopt for anything else.
inline std::optional<WindowedEinsumMode> ParseWindowedEinsumMode(const std::string& text) {
  if (text == "auto") return WindowedEinsumMode::kAuto;
  if (text == "off") return WindowedEinsumMode::kOff;
  if (text == "always") return WindowedEinsumMode::kAlways;
  return std::nullopt;
}

}  // namespace gspmd
