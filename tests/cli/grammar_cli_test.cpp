// The CLI's one grammar (issue 30): the README's table against every subcommand's --help, the
// old spellings kept as hidden aliases, detection of what a file is, and the shared tolerances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/npy.h"
#include "ir/literal.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

const fs::path kCase = kCorpus / "dp_matmul";
std::string CaseFile(const std::string& name) { return (kCase / name).string(); }
bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  const size_t end = text.find_last_not_of(" \t");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(Trim(part));
  return parts;
}

// One row of the README's grammar table: its idea, the spellings in its backquotes that are
// options or FILE, and the commands that must have them.
struct GrammarRow {
  std::string idea;
  std::vector<std::string> spellings;
  std::vector<std::string> commands;
};

std::vector<GrammarRow> ReadGrammarTable() {
  const std::string readme = ReadText(fs::path(GSPMD_TEST_DATA_DIR) / ".." / ".." / "README.md");
  const size_t begin = readme.find("<!-- grammar-table: begin -->");
  const size_t end = readme.find("<!-- grammar-table: end -->");
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  std::vector<GrammarRow> rows;
  if (begin == std::string::npos || end == std::string::npos) return rows;
  std::stringstream table(readme.substr(begin, end - begin));
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| ---", 0) == 0 || line.rfind("| idea", 0) == 0) continue;
    const std::vector<std::string> cells = Split(line.substr(1, line.size() - 2), '|');
    if (cells.size() != 3) {
      ADD_FAILURE() << "a grammar row needs 3 cells: " << line;
      continue;
    }
    GrammarRow row{cells[0], {}, Split(cells[2], ',')};
    // Backquoted words in the second cell: options (start with -) and FILE.
    for (size_t at = cells[1].find('`'); at != std::string::npos; at = cells[1].find('`', at + 1)) {
      const size_t close = cells[1].find('`', at + 1);
      if (close == std::string::npos) break;
      const std::string word = cells[1].substr(at + 1, close - at - 1);
      if (word.rfind("-", 0) == 0 && word != "-") row.spellings.push_back(word);
      if (word.rfind("FILE", 0) == 0) row.spellings.push_back("FILE");
      at = close;
    }
    rows.push_back(row);
  }
  return rows;
}

class GrammarCliTest : public CliTest {
 protected:
  // The subcommands `gspmd --help` lists.
  std::vector<std::string> Subcommands() const {
    const CommandResult help = Gspmd({"--help"});
    std::vector<std::string> names;
    std::stringstream text(help.out);
    bool in_list = false;
    for (std::string line; std::getline(text, line);) {
      if (line.rfind("Subcommands:", 0) == 0) {
        in_list = true;
        continue;
      }
      if (in_list && line.size() > 2 && line[0] == ' ' && line[2] != ' ') names.push_back(Split(Trim(line), ' ')[0]);
    }
    return names;
  }

  // The option names (-o, --out, ...) and positional names (FILE) `gspmd COMMAND --help` lists,
  // each with its help line.
  std::map<std::string, std::string> HelpNames(const std::string& command) const {
    const CommandResult help = Gspmd({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command;
    std::map<std::string, std::string> names;
    std::stringstream text(help.out);
    for (std::string line; std::getline(text, line);) {
      const std::string trimmed = Trim(line);
      if (line.rfind("  ", 0) != 0 || trimmed.empty()) continue;
      const std::string first = Split(trimmed, ' ')[0];
      if (first.rfind("-", 0) == 0) {
        for (const std::string& name : Split(first, ',')) names[name] = trimmed;
      } else if (first == "FILE") {
        names["FILE"] = trimmed;
      }
    }
    return names;
  }
};

TEST_F(GrammarCliTest, TheReadmeTableMatchesEveryCommandsHelp) {
  const std::vector<GrammarRow> rows = ReadGrammarTable();
  ASSERT_GE(rows.size(), 8u);
  const std::vector<std::string> commands = Subcommands();
  ASSERT_GE(commands.size(), 12u);
  std::map<std::string, std::set<std::string>> expected;  // spelling -> commands
  for (const GrammarRow& row : rows) {
    ASSERT_FALSE(row.spellings.empty()) << row.idea;
    for (const std::string& command : row.commands)
      EXPECT_NE(std::find(commands.begin(), commands.end(), command), commands.end())
          << row.idea << ": no command " << command;
    for (const std::string& spelling : row.spellings) expected[spelling].insert(row.commands.begin(), row.commands.end());
  }
  for (const std::string& command : commands) {
    const std::map<std::string, std::string> names = HelpNames(command);
    for (const auto& [spelling, listed] : expected)
      EXPECT_EQ(names.count(spelling) == 1, listed.count(command) == 1)
          << "gspmd " << command << " --help " << (names.count(spelling) ? "has " : "lacks ") << spelling
          << ", and the README's grammar table " << (listed.count(command) ? "lists" : "does not list") << " it";
  }
  // -o names a directory exactly where the table says "directory".
  for (const GrammarRow& row : rows) {
    if (std::find(row.spellings.begin(), row.spellings.end(), "-o") == row.spellings.end()) continue;
    const bool directory = Contains(row.idea, "directory");
    for (const std::string& command : row.commands)
      EXPECT_EQ(Contains(HelpNames(command)["-o"], "DIR"), directory) << command << ": " << HelpNames(command)["-o"];
  }
}

TEST_F(GrammarCliTest, OldSpellingsAreHiddenAliases) {
  for (const auto& [command, old] : std::vector<std::pair<std::string, std::string>>{
           {"run", "--spmd"}, {"report", "--partition"}, {"report", "--html"}, {"train", "--save"}})
    EXPECT_EQ(HelpNames(command).count(old), 0u) << command << " lists " << old;

  const CommandResult spmd = Gspmd({"run", "--spmd", CaseFile("partitioned.hlo"), "--like", CaseFile("propagated.hlo"),
                                    "-i", CaseFile("in0.npy"), CaseFile("in1.npy"), "-o", Path("spmd")});
  EXPECT_EQ(spmd.exit_code, 0) << spmd.err;
  const CommandResult partition = Gspmd({"report", CaseFile("pre.hlo"), "--partition", "--json"});
  EXPECT_EQ(partition.exit_code, 0) << partition.err;
  const CommandResult global = Gspmd({"report", CaseFile("pre.hlo"), "--global", "--json"});
  EXPECT_EQ(global.out, partition.out);
  const CommandResult html = Gspmd({"report", CaseFile("partitioned.hlo"), "--html", Path("old.html")});
  EXPECT_EQ(html.exit_code, 0) << html.err;
  const CommandResult out = Gspmd({"report", CaseFile("partitioned.hlo"), "-o", Path("new.html")});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(ReadText(Path("old.html")), ReadText(Path("new.html")));
  EXPECT_EQ(out.out, "wrote " + Path("new.html") + "\n");
}

TEST_F(GrammarCliTest, WhatAFileIsIsDetectedAndStated) {
  // run: XLA's per-device program with --like, no flag; the same outputs as --per-device.
  const std::vector<std::string> inputs = {"-i", CaseFile("in0.npy"), CaseFile("in1.npy")};
  std::vector<std::string> detected = {"run", CaseFile("partitioned.hlo"), "--like", CaseFile("propagated.hlo")};
  detected.insert(detected.end(), inputs.begin(), inputs.end());
  detected.insert(detected.end(), {"-o", Path("detected")});
  const CommandResult run = Gspmd(detected);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.err, "per-device program (detected; --global reads it as a global one)")) << run.err;
  const LiteralComparison same = CompareLiterals(ReadNpy(Path("detected/out0.npy")), ReadNpy(CaseFile("out0.npy")), 1e-5);
  EXPECT_TRUE(same.matches) << same.message;

  // report: a global program is partitioned first, and it says so; the same figures as partition + report.
  const CommandResult report = Gspmd({"report", CaseFile("pre.hlo"), "--json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(Contains(report.err, "global program (detected; --per-device reads it as one device's), partitioned for 8 "
                                   "devices first"))
      << report.err;
  ASSERT_EQ(Gspmd({"partition", CaseFile("pre.hlo"), "-o", Path("ours.hlo")}).exit_code, 0);
  EXPECT_EQ(report.out, Gspmd({"report", Path("ours.hlo"), "--json"}).out);

  // show states a per-device file; --global and --per-device contradict each other.
  const CommandResult show = Gspmd({"show", CaseFile("partitioned.hlo")});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(Contains(show.err, "per-device program")) << show.err;
  const CommandResult both = Gspmd({"simulate", CaseFile("pre.hlo"), "--chip", "tpu-v3", "--global", "--per-device"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_TRUE(Contains(both.err, "cannot be used with")) << both.err;

  // partition and lint take --global for a file that looks per-device.
  const CommandResult lint = Gspmd({"lint", Path("ours.hlo")});
  EXPECT_EQ(lint.exit_code, 1);
  EXPECT_TRUE(Contains(lint.err, "lint needs the global program")) << lint.err;
}

TEST_F(GrammarCliTest, EveryCommandThatWritesAFileTakesDashO) {
  const std::string pre = CaseFile("pre.hlo");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"parse", pre}, {"lint", pre}, {"simulate", pre, "--chip", "tpu-v3"}, {"report", pre}, {"show", pre}}) {
    std::vector<std::string> to_stdout = args;
    const CommandResult printed = Gspmd(to_stdout);
    ASSERT_EQ(printed.exit_code, 0) << args[0] << ": " << printed.err;
    std::vector<std::string> to_file = args;
    to_file.insert(to_file.end(), {"-o", Path(args[0] + ".txt")});
    const CommandResult written = Gspmd(to_file);
    ASSERT_EQ(written.exit_code, 0) << args[0] << ": " << written.err;
    EXPECT_EQ(ReadText(Path(args[0] + ".txt")), printed.out) << args[0];
  }
}

void WriteFloats(const std::string& path, const std::vector<float>& values) {
  Literal literal(Shape(ElementType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  WriteNpy(path, literal);
}

TEST_F(GrammarCliTest, TolerancesMeanTheSameInCompareRunAndTrain) {
  // Near zero: the relative error is large, the RMS difference 1e-7 (under the default atol 1e-6).
  WriteFloats(Path("a.npy"), {1e-7f, -1e-7f, 0, 0});
  WriteFloats(Path("e.npy"), {0, 0, 1e-7f, -1e-7f});
  EXPECT_EQ(Gspmd({"compare", Path("a.npy"), Path("e.npy")}).exit_code, 0);
  const CommandResult strict = Gspmd({"compare", Path("a.npy"), Path("e.npy"), "--atol", "0"});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_TRUE(Contains(strict.out, "FAIL: relative error")) << strict.out;
  const CommandResult bad = Gspmd({"compare", Path("a.npy"), Path("e.npy"), "--atol", "-1"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(Contains(bad.err, "--atol -1 is invalid")) << bad.err;

  // run --check: the sharded run against the interpreter, with the same options.
  const CommandResult checked = Gspmd({"run", CaseFile("pre.hlo"), "-i", CaseFile("in0.npy"), CaseFile("in1.npy"), "-o",
                                       Path("out"), "--check", "--rtol", "1e-5"});
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_TRUE(Contains(checked.out, "check: 1 output matches the one-device run (rtol 1e-05, atol 1e-06)"))
      << checked.out;
  // An option that would be ignored is refused.
  const CommandResult ignored = Gspmd({"run", CaseFile("pre.hlo"), "-i", CaseFile("in0.npy"), CaseFile("in1.npy"), "-o",
                                       Path("out2"), "--rtol", "1e-5"});
  EXPECT_EQ(ignored.exit_code, 1);
  EXPECT_TRUE(Contains(ignored.err, "--rtol needs --check")) << ignored.err;
  const CommandResult train_ignored = Gspmd({"train", CaseFile("pre.hlo"), "--atol", "1e-3"});
  EXPECT_EQ(train_ignored.exit_code, 1);
  EXPECT_TRUE(Contains(train_ignored.err, "--atol needs --check")) << train_ignored.err;
  // A per-device FILE needs the global program to check against.
  const CommandResult no_like = Gspmd({"run", CaseFile("partitioned.hlo"), "-i", CaseFile("in0.npy"), CaseFile("in1.npy"),
                                       "-o", Path("out3"), "--check"});
  EXPECT_EQ(no_like.exit_code, 1);
  EXPECT_TRUE(Contains(no_like.err, "--like GLOBAL")) << no_like.err;
}

}  // namespace
}  // namespace gspmd
