// The files `gspmd train --save DIR` writes: each output of the last step named after what it
// is (the entry parameter it updates, or its metric), and DIR/index.json mapping each file back
// to its output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "train/step_signature.h"

namespace gspmd {

// One saved output: output 3 updates input 5 (%w1) and is saved as "w1.npy".
struct SavedOutput {
  int64_t output = 0;
  std::string name;   // "w1", "loss", or "out<i>" when the step says nothing about it
  int64_t input = -1; // the entry parameter it feeds on the next step, or -1
  std::string file;   // "w1.npy": the name with characters outside [A-Za-z0-9_.-] made '_'
};

// Per output of the step: carried outputs by the parameter they feed, metric outputs by their
// metric name (`metrics`, as ShownMetrics gives them), the rest out<i>. Names are unique: a
// file name already taken (or index.json) gets "_<i>" (its output index) before ".npy".
//   outputs (loss, w1', w2'), carry 1:1,2:2, inputs (x, w1, w2) -> loss.npy, w1.npy, w2.npy
std::vector<SavedOutput> SavedOutputNames(const StepSignature& signature, const std::vector<std::string>& metrics);

// DIR/index.json: {"outputs": [{"output": 0, "file": "loss.npy", "name": "loss", "shape":
// "f32[]", "input": null}, ...]} in output order, written last (after every .npy is in place).
std::string SavedOutputsIndexJson(const std::vector<SavedOutput>& saved, const std::vector<Shape>& shapes);

// Writes each output as DIR/<file> and then DIR/index.json (creating DIR); UserErrors name the
// file that could not be written. Prints nothing.
void WriteSavedOutputs(const std::string& dir, const std::vector<Literal>& outputs,
                       const std::vector<SavedOutput>& saved);
// Only DIR/index.json (the MPI backend writes the arrays itself).
void WriteSavedOutputsIndex(const std::string& dir, const std::vector<SavedOutput>& saved,
                            const std::vector<Shape>& shapes);

}  // namespace gspmd
