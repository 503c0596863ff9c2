// Progress output of `gspmd train`: header, bar or lines, summary.
#include "train/progress_display.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string Bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  char text[32];
  std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

std::string MetricText(const std::string& name, double value) {
  char text[64];
  const bool is_count = name.find("tokens") != std::string::npos;
  std::snprintf(text, sizeof(text), is_count ? "%s %.0f" : "%s %.4f", name.c_str(), value);
  return text;
}

}  // namespace

std::vector<std::string> ShownMetrics(const StepSignature& s) {
  if (!s.metrics.empty()) return s.metrics;
  if (!s.outputs.empty() && s.outputs[0].rank() == 0 && IsFloatingPoint(s.outputs[0].element_type())) return {"loss"};
  return {};
}

void PrintTrainHeader(const std::string& file, const std::string& model, int64_t devices, const std::string& layout,
                      const StepSignature& s, const CommReport& comm) {
  std::printf("train %s%s on %lld devices%s, %zu inputs, %zu outputs\n", file.c_str(),
              model.empty() ? "" : (" (model " + model + ")").c_str(), static_cast<long long>(devices),
              layout.empty() ? "" : (" (" + layout + ")").c_str(), s.inputs.size(), s.outputs.size());
  const char* source = s.carry_source == StepSignature::CarrySource::kModule ? "recorded in the module"
                       : s.carry_source == StepSignature::CarrySource::kFlag
                           ? "from --carry"
                           : "inferred: trailing outputs match trailing inputs in shape and sharding";
  const std::string carry = s.CarryText();
  if (s.carry.empty())
    std::printf("carry: none (%s); every step takes the same carried inputs\n",
                s.carry_source == StepSignature::CarrySource::kInferred ? "no trailing output matches a trailing input"
                                                                         : source);
  else
    std::printf("carry: %zu outputs feed the next step's inputs (%s): %s\n", s.carry.size(), source,
                s.carry.size() <= 12 ? carry.c_str() : (carry.substr(0, 60) + "...").c_str());
  std::string kinds;
  for (const auto& [kind, stats] : comm.by_kind)
    kinds += StrCat(kinds.empty() ? "" : ", ", kind, " ", Bytes(stats.bytes), " (", stats.count, ")");
  std::printf("communication per step and device: %s%s%s\n", Bytes(comm.comm_bytes_per_device).c_str(),
              kinds.empty() ? "" : ": ", kinds.c_str());
  std::fflush(stdout);
}

StepDisplay::StepDisplay(const std::string& mode, int64_t steps, int64_t tokens_per_step,
                         std::vector<std::string> metrics)
    : steps_(steps), tokens_(tokens_per_step), metrics_(std::move(metrics)) {
  bar_ = mode == "bar" || (mode == "auto" && isatty(fileno(stdout)));
  quiet_ = mode == "quiet";
}

void StepDisplay::Show(int64_t step, const std::vector<double>& values, double seconds, double check_seconds,
                       const std::string& mismatch) {
  ++shown_;
  total_seconds_ += seconds + check_seconds;
  run_seconds_ += seconds;
  if (!values.empty() && !metrics_.empty()) {
    last_loss_ = values[0];
    if (shown_ == 1) first_loss_ = values[0];
  }
  if (quiet_) return;
  std::string metrics;
  for (size_t i = 0; i < metrics_.size() && i < values.size(); ++i) metrics += "  " + MetricText(metrics_[i], values[i]);
  char rate[64] = "";
  if (tokens_ > 0 && seconds > 0)
    std::snprintf(rate, sizeof(rate), "  tokens/s %.0f", static_cast<double>(tokens_) / seconds);
  if (bar_) {
    const int64_t done = step + 1;
    const int width = 24;
    std::string bar(static_cast<size_t>(width * done / steps_), '=');
    bar.resize(width, ' ');
    const double eta = total_seconds_ / static_cast<double>(shown_) * static_cast<double>(steps_ - done);
    std::printf("\r\033[Kstep %lld/%lld [%s]%s%s  ETA %s", static_cast<long long>(done), static_cast<long long>(steps_),
                bar.c_str(), metrics.c_str(), rate, Duration(eta).c_str());
    std::fflush(stdout);
    return;
  }
  char check[64] = "";
  if (check_seconds > 0)
    std::snprintf(check, sizeof(check), "  %s one device (%.1f ms)", mismatch.empty() ? "matches" : "DIFFERS from",
                  check_seconds * 1e3);
  std::printf("step %lld/%lld%s  time %.1f ms%s%s\n", static_cast<long long>(step + 1), static_cast<long long>(steps_),
              metrics.c_str(), seconds * 1e3, rate, check);
  std::fflush(stdout);
}

void StepDisplay::EndLine() {
  if (bar_ && !quiet_) std::printf("\n");
  std::fflush(stdout);
}

void StepDisplay::Finish(bool checked) {
  if (quiet_) return;
  if (bar_) std::printf("\n");
  if (shown_ == 0) return;
  char loss[128] = "";
  if (!metrics_.empty())
    std::snprintf(loss, sizeof(loss), "; loss %.4f -> %.4f (%.1f%% of the first)", first_loss_, last_loss_,
                  100.0 * last_loss_ / first_loss_);
  char rate[64] = "";
  if (tokens_ > 0 && run_seconds_ > 0)
    std::snprintf(rate, sizeof(rate), ", %.0f tokens/s", static_cast<double>(tokens_ * shown_) / run_seconds_);
  std::printf("done: %lld steps, %.1f ms per step%s%s%s\n", static_cast<long long>(shown_),
              run_seconds_ / static_cast<double>(shown_) * 1e3, rate, loss,
              checked ? "; every step matched one device" : "");
  std::fflush(stdout);
}

}  // namespace gspmd
