// `gspmd train --json`: the run as one JSON object, shared by the training loops of
// api::TrainJob (train.cpp) and of checkpointed runs (train_checkpoint.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/gspmd.h"

namespace gspmd::api {

// --json: the run as one object on stdout, printed at the end (the progress display is quiet;
// what would go beside it, "saved ..." and "wrote ...", goes to stderr).
class TrainRecord {
 public:
  TrainRecord(const TrainJobOptions& options, std::string model, int64_t devices, std::vector<std::string> metrics,
              int64_t tokens_per_step)
      : options_(options),
        model_(std::move(model)),
        devices_(devices),
        metrics_(std::move(metrics)),
        tokens_(tokens_per_step) {}

  void Add(int64_t step, const std::vector<double>& values, double seconds, double check_seconds, bool checked) {
    nlohmann::json entry = {{"step", step + 1}, {"seconds", seconds}};
    nlohmann::json metrics = nlohmann::json::object();
    for (size_t k = 0; k < metrics_.size() && k < values.size(); ++k) metrics[metrics_[k]] = values[k];
    entry["loss"] = values.empty() || metrics_.empty() ? nlohmann::json(nullptr) : nlohmann::json(values[0]);
    entry["metrics"] = std::move(metrics);
    if (checked) {
      entry["check_seconds"] = check_seconds;
      entry["matches_one_device"] = true;  // a mismatch ends the run with an error instead
    }
    seconds_ += seconds;
    per_step_.push_back(std::move(entry));
  }
  // Another top-level key (e.g. "checkpoint"), printed after the others.
  void Set(const std::string& key, nlohmann::json value) { extra_[key] = std::move(value); }
  void Saved(const std::string& dir, int64_t files) {
    saved_ = {{"dir", dir}, {"files", files}, {"index", (std::filesystem::path(dir) / "index.json").string()}};
  }

  void Print(const std::string& layout) const {
    const auto count = static_cast<int64_t>(per_step_.size());
    nlohmann::json record = {{"file", options_.file},
                             {"model", model_.empty() ? nlohmann::json(nullptr) : nlohmann::json(model_)},
                             {"devices", devices_},
                             {"backend", options_.mpi ? "mpi" : "threads"},
                             {"layout", layout},
                             {"steps", count},
                             {"metrics", metrics_},
                             {"tokens_per_step", tokens_},
                             {"seconds", seconds_},
                             {"seconds_per_step", count > 0 ? seconds_ / static_cast<double>(count) : 0.0},
                             {"tokens_per_second", nullptr},
                             {"first_loss", nullptr},
                             {"last_loss", nullptr},
                             {"per_step", per_step_},
                             {"check", nullptr},
                             {"saved", saved_},
                             {"plot", options_.plot.empty() ? nlohmann::json(nullptr) : nlohmann::json(options_.plot)}};
    if (tokens_ > 0 && seconds_ > 0) record["tokens_per_second"] = static_cast<double>(tokens_ * count) / seconds_;
    if (count > 0 && !metrics_.empty()) {
      record["first_loss"] = per_step_.front()["loss"];
      record["last_loss"] = per_step_.back()["loss"];
    }
    if (options_.train.check)
      record["check"] = {{"rtol", options_.train.rtol}, {"atol", options_.train.atol}, {"passed", true}};
    for (const auto& [key, value] : extra_.items()) record[key] = value;
    std::printf("%s\n", record.dump(2).c_str());
    std::fflush(stdout);
  }

 private:
  const TrainJobOptions& options_;
  std::string model_;
  int64_t devices_;
  std::vector<std::string> metrics_;
  int64_t tokens_;
  double seconds_ = 0;
  nlohmann::json per_step_ = nlohmann::json::array();
  nlohmann::json saved_ = nullptr;
  nlohmann::json extra_ = nlohmann::json::object();
};

}  // namespace gspmd::api
