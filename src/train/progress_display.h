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

// Every line of the progress (the bar, step lines, the summary) and of the header but its first
// (which names the user's file) fits this many columns.
inline constexpr size_t kTrainDisplayColumns = 100;

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

  // The text Show prints for a step (without the bar's carriage return) and Finish's lines:
  // at most kTrainDisplayColumns wide (the bar's one less), the loss, the time and the
  // check's verdict always in, other metrics, tokens/s and the check's time while they fit.
  std::string StepLine(int64_t step, const std::vector<double>& metrics, double seconds, double check_seconds = 0,
                       const std::string& mismatch = "") const;
  std::vector<std::string> SummaryLines(bool checked) const;

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
