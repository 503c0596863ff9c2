// `gspmd checkpoint ls DIR` and `gspmd checkpoint verify DIR`: the checkpoints `gspmd train
// --checkpoint-dir DIR` wrote, newest first, with step, size and layout; verify also reads
// every file against its recorded size and checksum and exits 1 when one is wrong. A thin
// layer over api::DescribeCheckpoints.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "api/gspmd.h"
#include "support/units.h"
#include "tools/commands.h"

namespace gspmd::tools {
namespace {

std::string Layout(const api::CheckpointSummary& c) {
  std::string text = std::to_string(c.num_devices) + " device" + (c.num_devices == 1 ? "" : "s");
  if (!c.mesh.empty()) text += " (mesh " + c.mesh + ")";
  return text;
}

// ls: one line per checkpoint; verify: the same with "ok" or the problem; exits 1 when a
// checkpoint is corrupt (verify).
void RunCheckpointCommand(const std::string& dir, bool verify) {
  const std::vector<api::CheckpointSummary> all = api::DescribeCheckpoints(dir, verify);
  int bad = 0;
  int checked = 0;
  for (const api::CheckpointSummary& c : all) {
    if (c.incomplete) {
      std::printf("%s  incomplete (a write that did not finish; never loaded)\n", c.path.c_str());
      continue;
    }
    ++checked;
    if (!c.problem.empty()) ++bad;
    if (!c.problem.empty() && c.arrays == 0) {
      std::printf("%s  unreadable: %s\n", c.path.c_str(), c.problem.c_str());
      continue;
    }
    std::printf("%s  step %lld  %s  %lld arrays  %s  %s", c.path.c_str(), static_cast<long long>(c.step),
                FormatBytes(static_cast<double>(c.bytes)).c_str(), static_cast<long long>(c.arrays),
                Layout(c).c_str(), c.model.c_str());
    if (verify) std::printf("  %s", c.problem.empty() ? "ok" : ("CORRUPT: " + c.problem).c_str());
    std::printf("\n");
  }
  if (checked == 0) std::printf("no complete checkpoints in %s\n", dir.c_str());
  if (verify && checked > 0)
    std::printf("%d of %d checkpoint%s verified\n", checked - bad, checked, checked == 1 ? "" : "s");
  std::fflush(stdout);
  if (bad > 0 && verify) std::exit(1);
}

}  // namespace

void AddCheckpointCommand(CLI::App& app) {
  CLI::App* command =
      app.add_subcommand("checkpoint", "List or verify the checkpoints `gspmd train --checkpoint-dir DIR` wrote");
  command->require_subcommand(1);
  for (const bool verify : {false, true}) {
    auto dir = std::make_shared<std::string>();
    CLI::App* sub = command->add_subcommand(
        verify ? "verify" : "ls",
        verify ? "Read every file of every checkpoint in DIR against its recorded size and checksum (exit 1 if one "
                 "is wrong)"
               : "List the checkpoints in DIR, newest first: step, size, arrays, devices and mesh, model");
    sub->add_option("DIR", *dir, "a --checkpoint-dir (or one of its step-N directories)")
        ->required()
        ->type_name("DIR");
    sub->callback([dir, verify] { RunCheckpointCommand(*dir, verify); });
  }
}

}  // namespace gspmd::tools
