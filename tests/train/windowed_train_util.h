// Shared by the windowed-einsum training tests (threads and MPI): the small dense LM and MoE
// steps they train, and a count of the windowed loops in a partitioned program's text.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace gspmd::windowed_train {

// A `gspmd model` configuration: its name in test output, and the arguments after `model`.
struct WindowedModel {
  std::string name;
  std::vector<std::string> args;
};

// The dense LM as shipped (2 layers, GSPMD's 2-D recipe on x=2,y=4) and the MoE with its
// optimizer state also sharded over the data axis (weight-update sharding: its dots then
// all-gather weights and reduce-scatter gradients, which `always` turns into loops; with the
// optimizer state sharded like the weights alone the MoE has no loop to make).
inline std::vector<WindowedModel> WindowedModels() {
  return {{"dense_lm", {"dense_lm", "--mesh", "x=2,y=4"}},
          {"gshard_moe", {"gshard_moe", "--set", "opt_state_sharding=data", "--mesh", "data=2,expert=4"}}};
}

// The while loops of a partitioned program's text whose body is a windowed einsum's
// (`while(...), condition=%X.windowed_condition, body=%X.windowed_body`).
inline int64_t CountWindowedLoops(const std::string& hlo) {
  std::istringstream lines(hlo);
  int64_t loops = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" while(") == std::string::npos) continue;
    const size_t body = line.find("body=%");
    if (body == std::string::npos) continue;
    const size_t end = line.find_first_of(", ", body);
    if (line.substr(body, end == std::string::npos ? std::string::npos : end - body).find(".windowed_body") !=
        std::string::npos)
      ++loops;
  }
  return loops;
}

// "241 KiB" of `gspmd partition`'s "..., 241 KiB per device communicated" (on stderr), which
// `gspmd train` prints as "communication per step and device: 241 KiB: ..."; "" when absent.
inline std::string CommunicatedPerDevice(const std::string& partition_stderr) {
  const size_t end = partition_stderr.find(" per device communicated");
  if (end == std::string::npos) return "";
  const size_t begin = partition_stderr.rfind(", ", end);
  return begin == std::string::npos ? "" : partition_stderr.substr(begin + 2, end - begin - 2);
}

// How often `needle` occurs in `text`.
inline int64_t Occurrences(const std::string& text, const std::string& needle) {
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace gspmd::windowed_train
