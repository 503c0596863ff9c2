// gspmd._gspmd: the nanobind extension module under the `gspmd` Python package. It binds
// src/api/gspmd.h and nothing else; arrays cross as (element type, dims, bytes) so that numpy
// dtypes (bf16 from ml_dtypes included) are mapped in Python, and results hand their buffer to
// numpy without a copy. The Pythonic API is python/gspmd/*.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/gspmd.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace gspmd::python {
namespace {

using api::Program;

// An array as Python hands it over: HLO element type name, dims, its bytes (C order).
using InputBytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using InputArray = std::tuple<std::string, std::vector<int64_t>, InputBytes>;
// A result as Python gets it back: element type name, dims and a uint8 array over the
// Literal's own storage (None for an empty array), kept alive by the array.
using OutputArray = std::tuple<std::string, std::vector<int64_t>, nb::object>;

// The Python exception for a UserError's kind (python/gspmd/_errors.py).
const char* ErrorClassName(UserErrorKind kind) {
  switch (kind) {
    case UserErrorKind::kParse: return "ParseError";
    case UserErrorKind::kSharding: return "ShardingError";
    case UserErrorKind::kResource: return "ResourceError";
    case UserErrorKind::kInput: break;
  }
  return "InputError";
}

void TranslateErrors(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const UserError& user_error) {
    nb::object errors = nb::module_::import_("gspmd._errors");
    PyErr_SetString(errors.attr(ErrorClassName(user_error.kind())).ptr(), user_error.what());
  } catch (const std::bad_alloc& out_of_memory) {
    // OutOfMemory (support/allocation.h) says how many bytes were asked for.
    nb::object errors = nb::module_::import_("gspmd._errors");
    PyErr_SetString(errors.attr("ResourceError").ptr(), out_of_memory.what());
  }
}

ElementType TypeNamed(const std::string& name) {
  std::optional<ElementType> type = ParseElementType(name);
  if (!type || !IsArrayType(*type))
    GSPMD_USER_ERROR("gspmd: error: '", name, "' is not an array element type (expected pred, s8..u64, f16, bf16, "
                     "f32, f64, c64 or c128)");
  return *type;
}

std::vector<Literal> ToLiterals(const std::vector<InputArray>& arrays) {
  std::vector<Literal> literals;
  literals.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto& [type_name, dims, bytes] = arrays[i];
    Literal literal(Shape(TypeNamed(type_name), dims));
    if (static_cast<int64_t>(bytes.size()) != literal.byte_size())
      GSPMD_USER_ERROR("input ", i, ": error: ", bytes.size(), " bytes given for ", literal.shape().ToString(false),
                       ", which takes ", literal.byte_size());
    if (literal.byte_size() > 0) std::memcpy(literal.raw(), bytes.data(), bytes.size());
    literals.push_back(std::move(literal));
  }
  return literals;
}

// Moves each Literal to the heap and hands its bytes to numpy; the array owns the Literal.
std::vector<OutputArray> ToArrays(std::vector<Literal> literals) {
  std::vector<OutputArray> arrays;
  arrays.reserve(literals.size());
  for (Literal& literal : literals) {
    const Shape shape = literal.shape();
    if (!shape.IsArray())
      GSPMD_USER_ERROR("gspmd: error: a result of shape ", shape.ToString(false), " is not an array");
    nb::object bytes = nb::none();
    if (literal.byte_size() > 0) {
      auto* owned = new Literal(std::move(literal));
      nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Literal*>(p); });
      bytes = nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(
          owned->raw(), {static_cast<size_t>(owned->byte_size())}, owner));
    }
    arrays.emplace_back(std::string(ElementTypeName(shape.element_type())), shape.dims(), std::move(bytes));
  }
  return arrays;
}

// The CLI runs with mimalloc, which keeps freed memory for a while; in a Python process the
// module allocates with the process's malloc (see allocation_without_mimalloc.cpp). glibc's
// defaults hand blocks over 128 KiB back to the system and get fresh zeroed pages on every run
// (about 3,000 page faults per run of the 32-layer step); keeping blocks under 32 MiB in the
// heap, and up to 64 MiB of free heap top, leaves about 50 (docs/performance.md, m). Settings
// the user gave glibc (MALLOC_*_ environment variables, GLIBC_TUNABLES) or
// GSPMD_SYSTEM_MALLOC=1 leave malloc as it is.
void KeepFreedMemoryForReuse() {
#ifdef __GLIBC__
  for (const char* name : {"GSPMD_SYSTEM_MALLOC", "GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
    if (std::getenv(name) != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

api::BoundaryOptions Boundary(std::string to_parameters, std::string to_outputs) {
  return api::BoundaryOptions{std::move(to_parameters), std::move(to_outputs)};
}

api::Format FormatNamed(const std::string& name) {
  if (name == "auto") return api::Format::kAuto;
  if (name == "hlo") return api::Format::kHlo;
  if (name == "stablehlo") return api::Format::kStableHlo;
  GSPMD_USER_ERROR("gspmd: error: format '", name, "' (expected auto, hlo or stablehlo)");
}

// (name, element type, dims) of each entry parameter; a tuple parameter's type is "tuple".
std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> Parameters(const Program& program) {
  std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> parameters;
  for (const Instruction* parameter : program.module().entry()->parameters()) {
    const Shape& shape = parameter->shape();
    parameters.emplace_back(parameter->name(), shape.IsArray() ? std::string(ElementTypeName(shape.element_type())) : "tuple",
                            shape.IsArray() ? shape.dims() : std::vector<int64_t>{});
  }
  return parameters;
}

}  // namespace
}  // namespace gspmd::python

NB_MODULE(_gspmd, m) {
  using namespace gspmd;
  using namespace gspmd::python;
  m.doc() = "gspmd's library API (src/api/gspmd.h); use the `gspmd` package, not this module.";
  nb::register_exception_translator(TranslateErrors);
  KeepFreedMemoryForReuse();

  nb::class_<Program>(m, "Program")
      .def_static("load", [](const std::string& path, const std::string& format) {
        return Program::Load(path, FormatNamed(format));
      }, "path"_a, "format"_a = "auto")
      .def_static("from_text", [](std::string text, const std::string& name, const std::string& format) {
        return Program::FromText(std::move(text), name, FormatNamed(format));
      }, "text"_a, "name"_a = "<text>", "format"_a = "auto")
      .def("text", &Program::Text)
      .def_prop_ro("name", &Program::name)
      .def("is_per_device", &Program::IsPerDevice)
      .def("needs_propagation", &Program::NeedsPropagation)
      .def_prop_ro("num_partitions", [](const Program& p) { return p.module().num_partitions(); })
      .def("parameters", &Parameters);

  m.def("propagate", [](const Program& program, int64_t devices, bool explain, std::string to_parameters,
                        std::string to_outputs) {
    nb::gil_scoped_release release;
    api::Propagated propagated =
        api::Propagate(program, {devices, explain, Boundary(std::move(to_parameters), std::move(to_outputs))});
    std::string text = propagated.Text(explain);
    return std::make_pair(std::move(propagated.program), std::move(text));
  }, "program"_a, "devices"_a = 0, "explain"_a = false, "to_parameters"_a = "", "to_outputs"_a = "");

  m.def("partition", [](const Program& program, int64_t devices, std::string to_parameters, std::string to_outputs) {
    nb::gil_scoped_release release;
    api::Partitioned p = api::Partition(program, {devices, Boundary(std::move(to_parameters), std::move(to_outputs))});
    return std::make_tuple(std::move(p.global), std::move(p.per_device), p.num_devices, std::move(p.warnings));
  }, "program"_a, "devices"_a = 0, "to_parameters"_a = "", "to_outputs"_a = "");

  m.def("report", [](const Program& program) {
    nb::gil_scoped_release release;
    return CommReportToJson(api::Report(program)).dump();
  }, "program"_a);

  m.def("show", [](const Program& program, std::vector<std::string> values, int64_t devices, bool color,
                   bool summary) {
    nb::gil_scoped_release release;
    api::ShowOptions options;
    options.values = std::move(values);
    options.devices = devices;
    options.color = color;
    options.summary = summary;
    return api::Show(program, options);
  }, "program"_a, "values"_a = std::vector<std::string>{}, "devices"_a = 0, "color"_a = false, "summary"_a = false);

  m.def("lint", [](const Program& program, int64_t devices, double padding_threshold, int64_t large_bytes,
                   bool redundant, bool search, double time_limit_s, std::string chip, int64_t max_evaluations) {
    nb::gil_scoped_release release;
    lint::LintOptions options;
    options.devices = devices;
    options.padding_threshold = padding_threshold;
    options.large_bytes = large_bytes;
    options.redundant = redundant;
    options.search = search;
    options.time_limit_s = time_limit_s;
    options.chip = std::move(chip);
    options.max_evaluations = max_evaluations;
    return lint::LintReportToJson(api::Lint(program, options)).dump();
  }, "program"_a, "devices"_a = 0, "padding_threshold"_a = 0.10, "large_bytes"_a = int64_t{1} << 20,
     "redundant"_a = false, "search"_a = true, "time_limit_s"_a = 10.0, "chip"_a = "tpu-v3", "max_evaluations"_a = 0);

  m.def("simulate", [](const Program& program, std::string chip, std::string topology, std::string placement,
                       int64_t devices, std::string compute_type, std::string mixed_precision, std::string breakdown,
                       int64_t breakdown_depth, bool rematerialize, std::optional<bool> per_device) {
    nb::gil_scoped_release release;
    api::SimulateOptions options;
    options.chip = std::move(chip);
    options.topology = std::move(topology);
    options.placement = std::move(placement);
    options.devices = devices;
    options.compute_type = std::move(compute_type);
    options.mixed_precision = std::move(mixed_precision);
    options.breakdown = std::move(breakdown);
    options.breakdown_depth = breakdown_depth;
    options.rematerialize = rematerialize;
    options.per_device = per_device;
    return simulate::SimulationReportToJson(api::Simulate(program, options)).dump();
  }, "program"_a, "chip"_a = "tpu-v3", "topology"_a = "", "placement"_a = "", "devices"_a = 0,
     "compute_type"_a = "", "mixed_precision"_a = "", "breakdown"_a = "op_name", "breakdown_depth"_a = 0,
     "rematerialize"_a = true, nb::arg("per_device").none() = nb::none());

  m.def("eval", [](const Program& program, const std::vector<InputArray>& inputs) {
    std::vector<Literal> results;
    {
      nb::gil_scoped_release release;
      results = api::Eval(program, ToLiterals(inputs));
    }
    return ToArrays(std::move(results));
  }, "program"_a, "inputs"_a);

  m.def("run", [](const Program& program, const std::vector<InputArray>& inputs, int64_t devices,
                  std::optional<Program> like, std::string to_parameters, std::string to_outputs) {
    std::vector<Literal> results;
    {
      nb::gil_scoped_release release;
      api::RunOptions options;
      options.devices = devices;
      options.boundary = Boundary(std::move(to_parameters), std::move(to_outputs));
      options.like = like ? &*like : nullptr;
      results = api::Run(program, ToLiterals(inputs), options);
    }
    return ToArrays(std::move(results));
  }, "program"_a, "inputs"_a, "devices"_a = 0, nb::arg("like").none() = nb::none(), "to_parameters"_a = "", "to_outputs"_a = "");

  m.def("annotate", [](const Program& program,
                       const std::vector<std::tuple<std::optional<int64_t>, std::string,
                                                    std::vector<std::vector<std::string>>>>& specs,
                       const std::vector<std::pair<std::string, int64_t>>& axes) {
    std::vector<api::ParameterSpec> parameter_specs;
    for (const auto& [index, name, dims] : specs) parameter_specs.push_back(api::ParameterSpec{index, name, dims});
    Mesh mesh;
    for (const auto& [name, size] : axes) mesh.axes.push_back(Mesh::Axis{name, size});
    nb::gil_scoped_release release;
    return api::Annotate(program, parameter_specs, mesh);
  }, "program"_a, "specs"_a, "mesh"_a);

  m.def("model", [](std::string name, std::string preset, std::vector<std::string> settings, std::string mesh) {
    nb::gil_scoped_release release;
    return api::Model({std::move(name), std::move(preset), std::move(settings), std::move(mesh)});
  }, "name"_a, "preset"_a = "", "settings"_a = std::vector<std::string>{}, "mesh"_a = "");

  m.def("train", [](const Program& program, int64_t steps, int64_t devices, std::string carry, std::string data_dir,
                    const std::vector<InputArray>& inputs, bool check, double rtol, double atol, uint64_t seed,
                    std::function<void(int64_t, std::vector<std::string>, std::vector<double>, double, double)>
                        callback) {
    api::TrainOptions options;
    options.carry = std::move(carry);
    options.data_dir = std::move(data_dir);
    options.inputs = ToLiterals(inputs);
    options.check = check;
    options.rtol = rtol;
    options.atol = atol;
    options.seed = seed;
    std::function<void(const api::TrainedStep&)> on_step;
    if (callback) {
      on_step = [&callback](const api::TrainedStep& step) {
        nb::gil_scoped_acquire acquire;
        callback(step.step, step.metric_names, step.metrics, step.seconds, step.check_seconds);
      };
    }
    std::vector<Literal> results;
    {
      nb::gil_scoped_release release;
      results = api::Train(program, steps, std::move(options), devices, on_step);
    }
    return ToArrays(std::move(results));
  }, "program"_a, "steps"_a, "devices"_a = 0, "carry"_a = "", "data_dir"_a = "",
     "inputs"_a = std::vector<InputArray>{}, "check"_a = false, "rtol"_a = 1e-4, "atol"_a = 1e-6, "seed"_a = 0,
     nb::arg("callback").none() = nb::none());

  m.def("autoshard", [](const Program& program, int64_t devices, std::string chip, std::string mesh,
                        int64_t memory_budget, std::string keep, double time_limit, int64_t max_evaluations,
                        std::string compute_type, std::string mixed_precision, bool explain) {
    nb::gil_scoped_release release;
    api::AutoshardOptions options;
    options.devices = devices;
    options.chip = std::move(chip);
    options.mesh = std::move(mesh);
    options.memory_budget_bytes = memory_budget;
    options.keep = std::move(keep);
    options.time_limit_s = time_limit;
    options.max_evaluations = max_evaluations;
    options.compute_type = std::move(compute_type);
    options.mixed_precision = std::move(mixed_precision);
    api::AutoshardResult result = api::Autoshard(program, options);
    std::string summary = api::AutoshardResultToJson(result, explain).dump();
    return std::make_pair(std::move(result.program), std::move(summary));
  }, "program"_a, "devices"_a = 0, "chip"_a = "tpu-v3", "mesh"_a = "", "memory_budget"_a = 0, "keep"_a = "all",
     "time_limit"_a = 60.0, "max_evaluations"_a = 0, "compute_type"_a = "", "mixed_precision"_a = "",
     "explain"_a = false);

  m.def("write_text", [](const std::string& path, const std::string& text) {
    nb::gil_scoped_release release;
    api::WriteTextFile(path, text);
  }, "path"_a, "text"_a);
}
