// The values a training run feeds its step: first-step values made from each input's init
// (seeded), synthetic-task batches (copy or reverse), and batches read from a --data folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "train/step_signature.h"

namespace gspmd {

// The value of input `index` made from its init text ("normal(S)", "zeros", "ones"); the same
// seed and index always give the same value. Other texts are UserErrors naming the input.
Literal InitialValue(const StepInput& input, int64_t index, uint64_t seed);

// The synthetic task's batch fields for one step: sequences of `seq` tokens in [0, vocab)
// whose first half h = seq/2 is random and whose second half repeats it ("copy") or
// reverses it ("reverse"). targets[t] = tokens[t + 1] (next-token prediction); weights are 1
// where the target lies in the second half (the predictable tokens) and 0 elsewhere.
struct TaskBatch {
  Literal tokens;   // s32[batch, seq]
  Literal targets;  // s32[batch, seq]
  Literal weights;  // f32[batch, seq]
};
TaskBatch MakeTaskBatch(const std::string& task, int64_t vocab, int64_t batch, int64_t seq, uint64_t seed,
                        int64_t step);

// Supplies each step's non-carried inputs:
//   --data DIR:  input i from DIR/<name>.npy (else DIR/in<i>.npy), an array of shape
//                [n, <the input's shape>]; step k takes row k mod n;
//   otherwise:   with draw_task, inputs whose init is task(FIELD) from the module's task
//                (seeded per step); the rest keep their first-step value.
// Carried inputs are never fed. `signature` must outlive the source.
class BatchSource {
 public:
  BatchSource(const StepSignature& signature, const std::string& data_dir, uint64_t seed, bool draw_task);
  // Replaces, in `inputs`, every input this source feeds with its value for `step`.
  void Fill(int64_t step, std::vector<Literal>& inputs) const;
  // Whether input i is fed by this source (else it is carried or fixed).
  bool Feeds(int64_t input) const;
  // Tokens per step (element count of the "tokens" task input; 0 when there is none).
  int64_t tokens_per_step() const { return tokens_per_step_; }

 private:
  struct DataFile {
    int64_t input;
    Literal rows;  // [n, ...]
  };
  const StepSignature& signature_;
  uint64_t seed_;
  std::vector<DataFile> data_;
  std::vector<int64_t> task_inputs_;
  int64_t tokens_per_step_ = 0;
};

}  // namespace gspmd
