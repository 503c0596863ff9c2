// ModelOptions::Set: text overrides of model options (for a `gspmd model` command).
#include "models/model_options.h"

#include <charconv>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

struct IntOption {
  const char* key;
  int64_t ModelOptions::*field;
};

const IntOption kIntOptions[] = {
    {"layers", &ModelOptions::layers},
    {"batch", &ModelOptions::batch},
    {"seq", &ModelOptions::seq},
    {"d_model", &ModelOptions::d_model},
    {"heads", &ModelOptions::heads},
    {"head_dim", &ModelOptions::head_dim},
    {"d_ff", &ModelOptions::d_ff},
    {"data_parallel", &ModelOptions::data_parallel},
    {"model_parallel", &ModelOptions::model_parallel},
    {"experts", &ModelOptions::experts},
    {"groups", &ModelOptions::groups},
    {"group_size", &ModelOptions::group_size},
    {"capacity", &ModelOptions::capacity},
    {"expert_hidden", &ModelOptions::expert_hidden},
    {"expert_parallel", &ModelOptions::expert_parallel},
    {"stages", &ModelOptions::stages},
    {"microbatches", &ModelOptions::microbatches},
    {"microbatch_size", &ModelOptions::microbatch_size},
};

std::string KnownKeys() {
  std::string text;
  for (const std::string& key : ModelOptions::Keys()) text += (text.empty() ? "" : ", ") + key;
  return text;
}

}  // namespace

std::vector<std::string> ModelOptions::Keys() {
  std::vector<std::string> keys;
  for (const IntOption& option : kIntOptions) keys.push_back(option.key);
  keys.push_back("train");
  keys.push_back("learning_rate");
  return keys;
}

void ModelOptions::Set(const std::string& key, const std::string& value) {
  if (key == "train") {
    if (value != "true" && value != "false" && value != "1" && value != "0")
      GSPMD_USER_ERROR("model option train=", value, ": expected true or false");
    train = value == "true" || value == "1";
    return;
  }
  if (key == "learning_rate") {
    try {
      size_t used = 0;
      learning_rate = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      GSPMD_USER_ERROR("model option learning_rate=", value, ": expected a number");
    }
    return;
  }
  for (const IntOption& option : kIntOptions) {
    if (key != option.key) continue;
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || parsed < 1)
      GSPMD_USER_ERROR("model option ", key, "=", value, ": expected a positive integer");
    this->*option.field = parsed;
    return;
  }
  GSPMD_USER_ERROR("unknown model option '", key, "' (known: ", KnownKeys(), ")");
}

}  // namespace gspmd
