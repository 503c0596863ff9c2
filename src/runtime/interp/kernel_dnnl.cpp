// oneDNN engine, per-thread streams and shape-keyed primitive caches for matmul and convolution.
#include "runtime/interp/kernel_dnnl.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "support/diagnostic.h"

namespace gspmd::kernel {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// ---- threads ----
// oneDNN runs on OpenMP, which spins at barriers: when several simulated devices call kernels
// at once, or the problem is small, one thread per call is much faster than a team. The
// OpenMP entry points come from the libgomp that oneDNN loads (looked up at run time since
// the build does not link OpenMP directly); without them the default team is used.
struct OpenMp {
  int (*get_max_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int default_threads = 1;
};

const OpenMp& Omp() {
  static const OpenMp omp = [] {
    OpenMp result;
    result.get_max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    result.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    if (result.get_max_threads == nullptr || result.set_num_threads == nullptr) {
      result.get_max_threads = nullptr;
      result.set_num_threads = nullptr;
      return result;
    }
    result.default_threads = result.get_max_threads();
    return result;
  }();
  return omp;
}

std::atomic<int> active_calls{0};
std::atomic<int> thread_limit{0};

// Chooses this thread's OpenMP team size for one kernel call (all threads for a large problem
// when no other kernel call is running; one otherwise) and restores it afterwards.
class ThreadBudget {
 public:
  explicit ThreadBudget(double flops) {
    constexpr double kParallelFlops = 1 << 23;
    int others = active_calls.fetch_add(1);
    const OpenMp& omp = Omp();
    if (omp.set_num_threads == nullptr) return;
    previous_ = omp.get_max_threads();
    const int limit = thread_limit.load(std::memory_order_relaxed);
    const int team = limit > 0 ? std::min(limit, omp.default_threads) : omp.default_threads;
    threads_ = (flops >= kParallelFlops && others == 0) ? team : 1;
    if (threads_ != previous_) omp.set_num_threads(threads_);
  }
  ~ThreadBudget() {
    active_calls.fetch_sub(1);
    const OpenMp& omp = Omp();
    if (omp.set_num_threads != nullptr && threads_ != previous_) omp.set_num_threads(previous_);
  }
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;
  int threads() const { return threads_; }

 private:
  int previous_ = 0;
  int threads_ = 0;  // 0: OpenMP not controllable
};

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);  // thread-safe static init
  return engine;
}

// Streams are not meant to be shared between threads: one per thread.
dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// Scratchpads are user-managed so concurrent executions of one primitive never share one.
void* ThreadScratchpad(size_t bytes) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// ---- matmul ----

struct MatmulEntry {
  dnnl::memory::desc a, b, c, scratchpad;
  dnnl::matmul primitive;
};

using MatmulKey = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool, int>;

dnnl::memory::desc MatrixDesc(int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  using dims = dnnl::memory::dims;
  if (batch == 1) {
    dims strides = transposed ? dims{1, rows} : dims{cols, 1};
    return dnnl::memory::desc({rows, cols}, dt::f32, strides);
  }
  dims strides = transposed ? dims{rows * cols, 1, rows} : dims{rows * cols, cols, 1};
  return dnnl::memory::desc({batch, rows, cols}, dt::f32, strides);
}

// Primitives are tuned for the team size they are created under, so it is part of the key.
std::shared_ptr<const MatmulEntry> GetMatmul(const MatmulProblem& p, int threads) {
  static std::mutex mutex;
  static std::map<MatmulKey, std::shared_ptr<const MatmulEntry>> cache;
  MatmulKey key{p.batch, p.m, p.n, p.k, p.a_transposed, p.b_transposed, threads};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto entry = std::make_shared<MatmulEntry>();
  entry->a = MatrixDesc(p.batch, p.m, p.k, p.a_transposed);
  entry->b = MatrixDesc(p.batch, p.k, p.n, p.b_transposed);
  entry->c = MatrixDesc(p.batch, p.m, p.n, false);
  dnnl::matmul::desc desc(entry->a, entry->b, entry->c);
  dnnl::matmul::primitive_desc pd(desc, UserScratchpadAttr(), Engine());
  entry->scratchpad = pd.scratchpad_desc();
  entry->primitive = dnnl::matmul(pd);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 4096) cache.clear();  // bound memory for programs with many shapes
  cache.emplace(key, entry);
  return entry;
}

// ---- convolution ----

struct ConvEntry {
  bool supported = false;
  dnnl::memory::desc src_plain, weights_plain, dst_plain;
  dnnl::memory::desc src, weights, dst, scratchpad;
  dnnl::convolution_forward primitive;
  dnnl::reorder src_reorder, weights_reorder, dst_reorder;  // valid when the formats differ
  size_t reorder_scratch = 0;
};

using ConvKey = std::vector<int64_t>;

ConvKey MakeConvKey(const ConvProblem& p, int threads) {
  ConvKey key{threads, p.batch, p.in_features, p.out_features, p.groups,
              static_cast<int64_t>(p.in_spatial.size())};
  for (const auto* v : {&p.in_spatial, &p.kernel_spatial, &p.out_spatial, &p.strides, &p.dilation,
                        &p.padding_low, &p.padding_high})
    key.insert(key.end(), v->begin(), v->end());
  return key;
}

tag PlainTag(int64_t rank) {
  switch (rank) {
    case 3: return tag::abc;
    case 4: return tag::abcd;
    case 5: return tag::abcde;
    case 6: return tag::abcdef;
    default: break;
  }
  GSPMD_CHECK(false, "no plain oneDNN format of rank ", rank);
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dt::f32, PlainTag(static_cast<int64_t>(dims.size())));
}

void BuildConv(const ConvProblem& p, ConvEntry& entry) {
  using dims = dnnl::memory::dims;
  dims src{p.batch, p.in_features}, dst{p.batch, p.out_features}, weights;
  src.insert(src.end(), p.in_spatial.begin(), p.in_spatial.end());
  dst.insert(dst.end(), p.out_spatial.begin(), p.out_spatial.end());
  if (p.groups > 1) weights = {p.groups, p.out_features / p.groups, p.in_features / p.groups};
  else weights = {p.out_features, p.in_features};
  weights.insert(weights.end(), p.kernel_spatial.begin(), p.kernel_spatial.end());
  entry.src_plain = PlainDesc(src);
  entry.dst_plain = PlainDesc(dst);
  entry.weights_plain = PlainDesc(weights);
  dnnl::memory::desc src_any(src, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any),
      weights_any(weights, dt::f32, tag::any);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any,
      weights_any, dst_any, dims(p.strides.begin(), p.strides.end()),
      dims(p.dilation.begin(), p.dilation.end()), dims(p.padding_low.begin(), p.padding_low.end()),
      dims(p.padding_high.begin(), p.padding_high.end()));
  dnnl::convolution_forward::primitive_desc pd(desc, UserScratchpadAttr(), Engine());
  entry.src = pd.src_desc();
  entry.weights = pd.weights_desc();
  entry.dst = pd.dst_desc();
  entry.scratchpad = pd.scratchpad_desc();
  entry.primitive = dnnl::convolution_forward(pd);
  auto make_reorder = [&](const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
    dnnl::reorder::primitive_desc rpd(Engine(), from, Engine(), to, UserScratchpadAttr());
    entry.reorder_scratch = std::max(entry.reorder_scratch, rpd.scratchpad_desc().get_size());
    return dnnl::reorder(rpd);
  };
  if (entry.src != entry.src_plain) entry.src_reorder = make_reorder(entry.src_plain, entry.src);
  if (entry.weights != entry.weights_plain)
    entry.weights_reorder = make_reorder(entry.weights_plain, entry.weights);
  if (entry.dst != entry.dst_plain) entry.dst_reorder = make_reorder(entry.dst, entry.dst_plain);
  entry.supported = true;
}

std::shared_ptr<const ConvEntry> GetConv(const ConvProblem& p, int threads) {
  static std::mutex mutex;
  static std::map<ConvKey, std::shared_ptr<const ConvEntry>> cache;
  ConvKey key = MakeConvKey(p, threads);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto entry = std::make_shared<ConvEntry>();
  try {
    BuildConv(p, *entry);
  } catch (const dnnl::error&) {
    entry->supported = false;  // the caller falls back to the direct loop
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 4096) cache.clear();
  cache.emplace(key, entry);
  return entry;
}

// Runs a reorder from `from` (at from_data) into a fresh buffer laid out as `to`.
void RunReorder(const dnnl::reorder& reorder, const dnnl::memory::desc& from, void* from_data,
                const dnnl::memory::desc& to, void* to_data, size_t scratch_bytes) {
  dnnl::memory from_memory(from, Engine(), from_data);
  dnnl::memory to_memory(to, Engine(), to_data);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from_memory}, {DNNL_ARG_TO, to_memory}};
  std::vector<uint8_t> scratch(scratch_bytes);
  if (scratch_bytes > 0) {
    dnnl::memory::desc scratch_desc({static_cast<int64_t>(scratch_bytes)}, dt::u8, tag::a);
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch_desc, Engine(), scratch.data()));
  }
  reorder.execute(ThreadStream(), args);
}

// A thread's memory objects for one cached matmul: made once, then pointed at each call's
// buffers (creating them and the argument map per call cost about ten allocations a dot).
struct MatmulMemories {
  std::shared_ptr<const MatmulEntry> entry;  // keeps the descriptors alive
  dnnl::memory a, b, c, scratchpad;
};

MatmulMemories& ThreadMatmulMemories(std::shared_ptr<const MatmulEntry> entry) {
  thread_local std::unordered_map<const MatmulEntry*, MatmulMemories> memories;
  auto it = memories.find(entry.get());
  if (it != memories.end()) return it->second;
  if (memories.size() > 4096) memories.clear();  // as the primitive cache bounds itself
  dnnl::engine& engine = Engine();
  MatmulMemories made;
  made.a = dnnl::memory(entry->a, engine, DNNL_MEMORY_NONE);
  made.b = dnnl::memory(entry->b, engine, DNNL_MEMORY_NONE);
  made.c = dnnl::memory(entry->c, engine, DNNL_MEMORY_NONE);
  made.scratchpad = dnnl::memory(entry->scratchpad, engine, DNNL_MEMORY_NONE);
  made.entry = std::move(entry);
  const MatmulEntry* key = made.entry.get();
  return memories.emplace(key, std::move(made)).first->second;
}

}  // namespace

void DnnlMatmul(const MatmulProblem& problem, const float* a, const float* b, float* c) {
  ThreadBudget budget(2.0 * problem.batch * problem.m * problem.n * problem.k);
  MatmulMemories& memories = ThreadMatmulMemories(GetMatmul(problem, budget.threads()));
  memories.a.set_data_handle(const_cast<float*>(a));
  memories.b.set_data_handle(const_cast<float*>(b));
  memories.c.set_data_handle(c);
  memories.scratchpad.set_data_handle(ThreadScratchpad(memories.entry->scratchpad.get_size()));
  dnnl::stream& stream = ThreadStream();
  // The C entry point takes the arguments as an array; the C++ one builds a hash map per call.
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, memories.a.get()},
                                  {DNNL_ARG_WEIGHTS, memories.b.get()},
                                  {DNNL_ARG_DST, memories.c.get()},
                                  {DNNL_ARG_SCRATCHPAD, memories.scratchpad.get()}};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(memories.entry->primitive.get(), stream.get(),
                                                 static_cast<int>(std::size(args)), args),
                          "could not execute a matmul");
  stream.wait();
}

bool DnnlConvolution(const ConvProblem& problem, const float* src, const float* weights, float* dst) {
  double flops = 2.0 * problem.batch * problem.out_features * (problem.in_features / problem.groups);
  for (int64_t d : problem.out_spatial) flops *= static_cast<double>(d);
  for (int64_t d : problem.kernel_spatial) flops *= static_cast<double>(d);
  ThreadBudget budget(flops);
  std::shared_ptr<const ConvEntry> entry = GetConv(problem, budget.threads());
  if (!entry->supported) return false;
  dnnl::engine& engine = Engine();
  dnnl::stream& stream = ThreadStream();
  std::vector<uint8_t> src_buffer, weights_buffer, dst_buffer;
  void* src_data = const_cast<float*>(src);
  void* weights_data = const_cast<float*>(weights);
  void* dst_data = dst;
  if (entry->src_reorder) {
    src_buffer.resize(entry->src.get_size());
    RunReorder(entry->src_reorder, entry->src_plain, src_data, entry->src, src_buffer.data(),
               entry->reorder_scratch);
    src_data = src_buffer.data();
  }
  if (entry->weights_reorder) {
    weights_buffer.resize(entry->weights.get_size());
    RunReorder(entry->weights_reorder, entry->weights_plain, weights_data, entry->weights,
               weights_buffer.data(), entry->reorder_scratch);
    weights_data = weights_buffer.data();
  }
  if (entry->dst_reorder) {
    dst_buffer.resize(entry->dst.get_size());
    dst_data = dst_buffer.data();
  }
  dnnl::memory scratchpad(entry->scratchpad, engine, ThreadScratchpad(entry->scratchpad.get_size()));
  entry->primitive.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(entry->src, engine, src_data)},
                                    {DNNL_ARG_WEIGHTS, dnnl::memory(entry->weights, engine, weights_data)},
                                    {DNNL_ARG_DST, dnnl::memory(entry->dst, engine, dst_data)},
                                    {DNNL_ARG_SCRATCHPAD, scratchpad}});
  if (entry->dst_reorder)
    RunReorder(entry->dst_reorder, entry->dst, dst_data, entry->dst_plain, dst, entry->reorder_scratch);
  stream.wait();
  return true;
}

void SetKernelThreadLimit(int threads) { thread_limit.store(threads, std::memory_order_relaxed); }

}  // namespace gspmd::kernel
