// What `gspmd train` prints: a header (devices, carry and where it came from, communication
// per step by collective kind), then per step a progress bar on a terminal (step, metrics,
// tokens/s, ETA) or one line (metrics, time, throughput, the check), then a summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "train/step_signature.h"

namespace gspmd {

// The outputs shown per step: the module's metric names, else output 0 as the loss when it
// is a float scalar (none otherwise).
std::vector<std::string> ShownMetrics(const StepSignature& signature);

void PrintTrainHeader(const std::string& file, const std::string& model, int64_t devices, const std::string& layout,
                      const StepSignature& signature, const CommReport& comm);

class StepDisplay {
 public:
  // mode: "auto" (a bar when stdout is a terminal, else lines), "bar", "lines" or "quiet".
  StepDisplay(const std::string& mode, int64_t steps, int64_t tokens_per_step, std::vector<std::string> metrics);

  // One finished step (0-based): its metric values, the sharded run's time, and with --check
  // the one-device run's time and "" or the difference.
  void Show(int64_t step, const std::vector<double>& metrics, double seconds, double check_seconds = 0,
            const std::string& mismatch = "");
  // Ends the bar's line. Then, unless quiet: "done: N steps, T ms per step, R tokens/s; loss
  // A -> B (P% of the first)[; every step matched one device]".
  void Finish(bool checked);
  // Ends the bar's line without a summary (the run stops with an error).
  void EndLine();

  double first_loss() const { return first_loss_; }
  double last_loss() const { return last_loss_; }

 private:
  int64_t steps_;
  int64_t tokens_;
  std::vector<std::string> metrics_;
  bool bar_ = false;
  bool quiet_ = false;
  int64_t shown_ = 0;
  double total_seconds_ = 0;
  double run_seconds_ = 0;
  double first_loss_ = 0;
  double last_loss_ = 0;
};

}  // namespace gspmd
