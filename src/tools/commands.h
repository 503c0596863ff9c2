// The gspmd CLI's subcommands: each file registers one on the top-level CLI11 app.
#pragma once

namespace CLI {
class App;
}

namespace gspmd::tools {

// Each adds its subcommand to app. The subcommand's callback throws UserError on bad input;
// main() prints it and exits with code 1.
void AddParseCommand(CLI::App& app);
void AddEvalCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddCompareCommand(CLI::App& app);
void AddPartitionCommand(CLI::App& app);
void AddReportCommand(CLI::App& app);
void AddModelCommand(CLI::App& app);
void AddTrainCommand(CLI::App& app);
void AddSimulateCommand(CLI::App& app);
void AddShowCommand(CLI::App& app);
void AddLintCommand(CLI::App& app);
void AddAutoshardCommand(CLI::App& app);
void AddCheckpointCommand(CLI::App& app);

}  // namespace gspmd::tools
