// Shared by the randomized partitioner and propagation tests: reading soak settings from the
// environment, running a partitioned program with garbage in the padding of uneven argument
// shards, and comparing results with a tolerance for cancelling float sums.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "analysis/literal_compare.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"

namespace gspmd::random_program {

inline int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoll(value, nullptr, 10);
}


// Like RunSpmd, but the padding of uneven argument shards holds garbage instead of zeros (the
// partitioner must treat padding as unspecified and mask it wherever it matters).
inline constexpr double kPaddingGarbage = 777;
inline int64_t g_poisoned_elements = 0;  // how many padding elements got garbage (reported)

inline Literal PoisonPadding(Literal shard, const Sharding& sharding, const Shape& global_shape, int64_t device) {
  if (!sharding.IsTiled()) return shard;
  Sharding::ShardRegion region = sharding.RegionForDevice(global_shape, device);
  const std::vector<int64_t>& dims = shard.shape().dims();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t e = 0; e < shard.element_count(); ++e) {
    bool padding = false;
    for (size_t k = 0; k < dims.size(); ++k) padding = padding || index[k] >= region.sizes[k];
    if (padding) {
      shard.SetFromDouble(e, kPaddingGarbage);
      ++g_poisoned_elements;
    }
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return shard;
}

inline std::vector<Literal> RunWithPoisonedPadding(const Module& module, const std::vector<Literal>& arguments,
                                            const SpmdRunOptions& options) {
  int64_t n = module.num_partitions();
  const Computation* entry = module.entry();
  std::vector<std::vector<Literal>> per_device(n);
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Sharding& sharding = options.parameter_shardings.at(p);
    for (int64_t d = 0; d < n; ++d)
      per_device[d].push_back(PoisonPadding(ShardOfGlobal(arguments[p], sharding, d), sharding, arguments[p].shape(), d));
  }
  LocalCommunicator communicator(n);
  std::vector<std::vector<Literal>> results(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      try {
        DeviceContext context;
        context.communicator = &communicator;
        context.partition_id = d;
        context.num_partitions = n;
        Evaluator evaluator(module, context);
        results[d] = FlattenTuple(evaluator.Run(per_device[d]));
        communicator.DeviceFinished(d);
      } catch (const CommunicatorAborted&) {
      } catch (const std::exception& error) {
        errors[d] = error.what();
        communicator.Abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int64_t d = 0; d < n; ++d)
    if (!errors[d].empty()) throw UserError("device " + std::to_string(d) + ": " + errors[d]);
  Sharding root = options.root_sharding.value_or(Sharding::Replicated());
  std::vector<Literal> outputs;
  for (size_t i = 0; i < options.global_result_shapes.size(); ++i) {
    const Sharding& leaf = root.IsTuple() ? root.tuple_elements().at(i) : root;
    std::vector<const Literal*> shards;
    for (int64_t d = 0; d < n; ++d) shards.push_back(&results[d].at(i));
    outputs.push_back(AssembleGlobal(shards, leaf, options.global_result_shapes[i]));
  }
  return outputs;
}

// Float results match at rtol 1e-4 (norm-wise), or, when a sum cancels so that the result is
// small next to its terms, when every element is within 1e-4 * max(1, |expected|max): a real
// partitioning bug moves elements by far more than float rounding does.
inline bool Matches(const Literal& actual, const Literal& expected, std::string* message) {
  LiteralComparison comparison = CompareLiterals(actual, expected, 1e-4);
  if (comparison.matches) return true;
  *message = comparison.message;
  if (!IsFloatingPoint(expected.element_type()) || actual.shape().dims() != expected.shape().dims() ||
      actual.element_type() != expected.element_type())
    return false;
  double largest = 1, worst = 0;
  for (int64_t e = 0; e < expected.element_count(); ++e) largest = std::max(largest, std::fabs(expected.GetAsDouble(e)));
  for (int64_t e = 0; e < expected.element_count(); ++e) {
    double a = actual.GetAsDouble(e), x = expected.GetAsDouble(e);
    if (std::isnan(a) != std::isnan(x)) return false;
    if (std::isnan(x) || a == x) continue;
    worst = std::max(worst, std::fabs(a - x));
  }
  if (!(worst <= 1e-4 * largest)) return false;
  message->clear();
  return true;
}

// "" when `outputs` match `expected` leaf by leaf (Matches), else what differs, after `what`.
inline std::string Mismatch(const std::vector<Literal>& outputs, const std::vector<Literal>& expected,
                            const std::string& what) {
  if (outputs.size() != expected.size())
    return what + "result count " + std::to_string(outputs.size()) + " != " + std::to_string(expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string message;
    if (!Matches(outputs[i], expected[i], &message)) return what + "leaf " + std::to_string(i) + ": " + message;
  }
  return "";
}

}  // namespace gspmd::random_program
