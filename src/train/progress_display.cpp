// Progress output of `gspmd train`: header, bar or lines, summary.
#include "train/progress_display.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "support/diagnostic.h"
#include "support/units.h"

namespace gspmd {
namespace {

// Every line train prints (header, step lines, the bar, the summary) fits this many columns.
constexpr size_t kColumns = kTrainDisplayColumns;

// `text` cut to `width` columns, ending in "..." when cut.
std::string Clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width > 3 ? width - 3 : 0) + "...";
}

// A comma-separated list cut after its last whole item that fits, then ",...".
std::string ClipList(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  const size_t comma = text.rfind(',', width - 4);
  return comma == std::string::npos ? Clip(text, width) : text.substr(0, comma) + ",...";
}

// The required parts joined by two spaces, then each optional part in order that still fits
// (kept in its place among the others: `parts` pairs a text with whether it may be dropped).
std::string FitParts(const std::vector<std::pair<std::string, bool>>& parts, size_t width) {
  size_t used = 0;
  for (const auto& [text, optional] : parts)
    if (!optional) used += (used == 0 ? 0 : 2) + text.size();
  std::vector<bool> keep(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    keep[i] = !parts[i].second;
    if (keep[i] || used + 2 + parts[i].first.size() > width) continue;
    keep[i] = true;
    used += 2 + parts[i].first.size();
  }
  std::string line;
  for (size_t i = 0; i < parts.size(); ++i)
    if (keep[i]) line += (line.empty() ? "" : "  ") + parts[i].first;
  return Clip(line, width);
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
  // The file name is the user's: that line alone may be wider.
  std::printf("train %s%s on %lld devices%s, %zu inputs, %zu outputs\n", file.c_str(),
              model.empty() ? "" : (" (model " + model + ")").c_str(), static_cast<long long>(devices),
              layout.empty() ? "" : (" (" + layout + ")").c_str(), s.inputs.size(), s.outputs.size());
  const char* source = s.carry_source == StepSignature::CarrySource::kModule ? "recorded in the module"
                       : s.carry_source == StepSignature::CarrySource::kFlag
                           ? "from --carry"
                           : "inferred: trailing outputs match trailing inputs";
  if (s.carry.empty()) {
    std::printf("carry: none (%s)\n", s.carry_source == StepSignature::CarrySource::kInferred
                                          ? "no trailing output matches a trailing input in shape and sharding"
                                          : source);
  } else {
    // The pairs after the sentence when they fit beside it, else on a line of their own.
    const std::string carry = StrCat("carry: ", s.carry.size(), " outputs feed the next step's inputs (", source, ")");
    const std::string pairs = s.CarryText();
    if (carry.size() + 2 + pairs.size() <= kColumns)
      std::printf("%s: %s\n", carry.c_str(), pairs.c_str());
    else
      std::printf("%s\n%s\n", Clip(carry, kColumns).c_str(), ClipList("  output:input " + pairs, kColumns).c_str());
  }
  std::string line = StrCat("communication per step and device: ", FormatBytes(comm.comm_bytes_per_device));
  const char* separator = ": ";
  for (const auto& [kind, stats] : comm.by_kind) {
    const std::string part = StrCat(separator, kind, " ", FormatBytes(stats.bytes), " (", stats.count, ")");
    if (line.size() + part.size() > kColumns) {
      line += StrCat(separator, "...");
      break;
    }
    line += part;
    separator = ", ";
  }
  std::printf("%s\n", Clip(line, kColumns).c_str());
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
  std::printf("%s%s", bar_ ? "\r\033[K" : "", StepLine(step, values, seconds, check_seconds, mismatch).c_str());
  if (!bar_) std::printf("\n");
  std::fflush(stdout);
}

std::string StepDisplay::StepLine(int64_t step, const std::vector<double>& values, double seconds,
                                  double check_seconds, const std::string& mismatch) const {
  // What must show (the step, the loss, the time, the verdict of the check) and what is shown
  // while it fits (the other metrics first, then throughput and the check's time), in reading
  // order; the bar takes what is left, up to 20 columns.
  //   step 3/10  loss 3.2311  accuracy 0.0156  aux_loss 1.5700  dropped_tokens 0  13.1 ms  check ok
  //   step 3/10 [======      ]  loss 3.2311  accuracy 0.0156  tokens/s 9134  ETA 0:05
  const int64_t done = step + 1;
  const size_t width = bar_ ? kColumns - 1 : kColumns;  // the bar leaves the cursor's column free
  std::vector<std::pair<std::string, bool>> parts;
  parts.push_back({StrCat("step ", done, "/", steps_), false});
  for (size_t i = 0; i < metrics_.size() && i < values.size(); ++i)
    parts.push_back({MetricText(metrics_[i], values[i]), i > 0});
  if (!bar_) parts.push_back({FormatSeconds(seconds), false});
  if (tokens_ > 0 && seconds > 0)
    parts.push_back({StrCat("tokens/s ", static_cast<int64_t>(std::llround(static_cast<double>(tokens_) / seconds))),
                     true});
  if (bar_) {
    const double eta = total_seconds_ / static_cast<double>(shown_) * static_cast<double>(steps_ - done);
    parts.push_back({"ETA " + Duration(eta), false});
  }
  if (!bar_ && check_seconds > 0) {
    parts.push_back({mismatch.empty() ? "check ok" : "DIFFERS from one device", false});
    parts.push_back({"(check " + FormatSeconds(check_seconds) + ")", true});
  }
  if (!bar_) return FitParts(parts, width);
  // The bar after the step, in what the parts leave (up to 20 columns, at least 5: optional parts
  // give way to it down to that).
  constexpr size_t kBarFrame = 3;  // " [" and "]"
  std::string line = FitParts(parts, width);
  if (line.size() + kBarFrame + 5 > width) line = FitParts(parts, width - kBarFrame - 5);
  const size_t bar_width = std::min<size_t>(20, width - std::min(width, line.size() + kBarFrame));
  if (bar_width < 5) return line;
  std::string bar(bar_width * static_cast<size_t>(done) / static_cast<size_t>(steps_), '=');
  bar.resize(bar_width, ' ');
  const size_t head = parts[0].first.size();
  return line.substr(0, head) + " [" + bar + "]" + line.substr(head);
}

void StepDisplay::EndLine() {
  if (bar_ && !quiet_) std::printf("\n");
  std::fflush(stdout);
}

void StepDisplay::Finish(bool checked) {
  if (quiet_) return;
  if (bar_) std::printf("\n");
  if (shown_ == 0) return;
  for (const std::string& line : SummaryLines(checked)) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::vector<std::string> StepDisplay::SummaryLines(bool checked) const {
  std::string line = StrCat("done: ", shown_, " step", shown_ == 1 ? "" : "s", ", ",
                            FormatSeconds(run_seconds_ / static_cast<double>(shown_)), " per step");
  if (tokens_ > 0 && run_seconds_ > 0)
    line += StrCat(", ", static_cast<int64_t>(std::llround(static_cast<double>(tokens_ * shown_) / run_seconds_)),
                   " tokens/s");
  if (!metrics_.empty()) {
    char loss[128];
    std::snprintf(loss, sizeof(loss), "; loss %.4f -> %.4f (%s of the first)", first_loss_, last_loss_,
                  FormatPercent(last_loss_ / first_loss_).c_str());
    line += loss;
  }
  const std::string check = "every step matched one device";
  if (!checked) return {Clip(line, kColumns)};
  if (line.size() + 2 + check.size() <= kColumns) return {line + "; " + check};
  return {Clip(line, kColumns), check};
}

}  // namespace gspmd
