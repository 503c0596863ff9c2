// The file-level steps the CLI's jobs share: a program argument and input files read and
// checked against the entry parameters, outputs written, the compile's warnings printed
// (cli_files.cpp). The subcommands reach them through tools/tool_util.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "api/pipeline.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace gspmd::api {

// Reads a command's program argument: the file (api::Program::Load: StableHLO MLIR text when
// the path ends in ".mlir" or the text starts like MLIR, as JAX's lower().as_text() prints,
// HLO text otherwise), or standard input when path is "-" (named "<stdin>" in messages).
// Errors name the file (FILE:LINE:COL).
Program LoadProgramArgument(const std::string& path);
// The same, as a module of the caller's own.
std::unique_ptr<Module> LoadProgram(const std::string& path);

// Reads every .npy file in order (UserError naming the file on failure).
std::vector<Literal> ReadInputs(const std::vector<std::string>& paths);

// The number of inputs must equal the number of entry parameters of the module in hlo_path.
void CheckInputCount(const Module& module, const std::string& hlo_path, size_t input_count);

// Each input's shape (dims and element type) must equal its entry parameter's shape.
// InputMismatchMessage says how they differ, and for dims that match but an element type that
// does not, how to cast the array in numpy ("save it with x.astype(np.float32)").
std::string InputMismatchMessage(const Shape& input, const Shape& expected, int64_t parameter_number,
                                 const std::string& parameter_name, const std::string& hlo_path);
void CheckInputShapes(const Module& module, const std::string& hlo_path, const std::vector<Literal>& inputs,
                      const std::vector<std::string>& input_paths);

// Creates out_dir (and parents) and writes outputs[i] as out_dir/out<i>.npy; prints one line
// per file ("out_dir/out0.npy f32[8,16]") on stdout.
void WriteOutputs(const std::string& out_dir, const std::vector<Literal>& outputs);

// For `run --spmd` without --like: the per-device program's outputs can be put together into
// global arrays only when its root has a sharding or it records its global result shapes (ours
// does both); XLA's partitioned.hlo has neither. Otherwise a UserError naming the file and the
// root that asks for --like. `devices` > 0: the device count the run will have.
void CheckGlobalOutputsKnown(const Module& per_device, const std::string& file, int64_t devices);

// Prints a compile's warnings to stderr as "FILE: warning: ...".
void PrintWarnings(const std::string& file, const std::vector<std::string>& warnings);

// api::PartitionGlobal, printing the partitioner's warnings unless print_warnings is false
// (the ranks of an MPI job other than rank 0, which compile the same program).
CompiledPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary = {}, bool print_warnings = true,
                                  const WindowedEinsumOptions& windowed_einsum = {});

}  // namespace gspmd::api
