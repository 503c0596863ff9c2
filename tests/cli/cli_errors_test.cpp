// Command-line errors in the house form (`error: <where>: <what>`, exit 1) with did-you-mean, and
// `gspmd --version`: through the binary, and on small CLI11 apps for the cases no gspmd
// subcommand has (options that need or exclude each other).
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "tools/cli_errors.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

class CliErrorsTest : public CliTest {
 protected:
  // Runs gspmd ARGS, expects exit code 1, nothing on stdout and exactly `line` on stderr.
  void Expect(const std::vector<std::string>& args, const std::string& line) {
    const CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, line + "\n");
  }
};

// The three messages of the issue.

TEST_F(CliErrorsTest, UnknownCommandListsTheCommands) {
  CommandResult r = Gspmd({"bogus"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: unknown command 'bogus' (commands: parse, eval, partition, run, ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" compare, model, train"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(CliErrorsTest, MissingFileNamesTheCommand) { Expect({"parse"}, "error: parse: FILE is required"); }

TEST_F(CliErrorsTest, NotANumber) { Expect({"compare", "a.npy", "b.npy", "--rtol", "abc"}, "error: --rtol: 'abc' is not a number"); }

// Did-you-mean within two edits (a swap of neighbours is one).

TEST_F(CliErrorsTest, UnknownCommandSuggestsTheNearest) {
  CommandResult r = Gspmd({"parze", "x.hlo"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: unknown command 'parze' (did you mean 'parse'? commands: parse, eval, ", 0), 0u)
      << r.err;
  CommandResult swapped = Gspmd({"rnu"});
  EXPECT_EQ(swapped.err.rfind("error: unknown command 'rnu' (did you mean 'run'? commands: ", 0), 0u) << swapped.err;
}

TEST_F(CliErrorsTest, UnknownOptionSuggestsTheNearest) {
  Expect({"run", "x.hlo", "--devcies", "8", "-o", Path("out")},
         "error: run: unknown option '--devcies' (did you mean '--devices'?)");
  Expect({"run", "x.hlo", "--devcies=8", "-o", Path("out")},
         "error: run: unknown option '--devcies' (did you mean '--devices'?)");
  Expect({"run", "x.hlo", "-devices", "8", "-o", Path("out")},
         "error: run: unknown option '-devices' (did you mean '--devices'?)");
  Expect({"--verison"}, "error: unknown option '--verison' (did you mean '--version'?)");
}

TEST_F(CliErrorsTest, UnknownOptionWithNothingNearPointsToHelp) {
  Expect({"parse", "x.hlo", "--frobnicate"}, "error: parse: unknown option '--frobnicate' (see gspmd parse --help)");
  Expect({"parse", "x.hlo", "-z"}, "error: parse: unknown option '-z' (see gspmd parse --help)");
}

// An unknown word is the first thing reported: the mistyped option explains the missing one.
TEST_F(CliErrorsTest, UnknownOptionBeforeMissingOne) {
  Expect({"eval", "x.hlo", "--ouput", Path("out")}, "error: eval: unknown option '--ouput' (did you mean '--out'?)");
}

TEST_F(CliErrorsTest, MissingRequiredOption) {
  Expect({"eval", "x.hlo", "-i", "a.npy"}, "error: eval: --out is required");
}

TEST_F(CliErrorsTest, NoCommandPrintsTheUsageThenTheError) {
  CommandResult r = Gspmd({});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("Usage: gspmd"), std::string::npos) << r.err;
  const std::string last = "\nerror: no command given\n";
  ASSERT_GE(r.err.size(), last.size());
  EXPECT_EQ(r.err.substr(r.err.size() - last.size()), last) << r.err;
}

TEST_F(CliErrorsTest, ExtraArgumentSaysWhatTheCommandTakes) {
  Expect({"compare", "a.npy", "b.npy", "c.npy"}, "error: compare: unexpected argument 'c.npy' (compare takes ACTUAL EXPECTED)");
  Expect({"parse", "a.hlo", "b.hlo"}, "error: parse: unexpected argument 'b.hlo' (parse takes FILE)");
}

TEST_F(CliErrorsTest, BadValuesSayWhatIsExpected) {
  Expect({"compare", "a.npy", "b.npy", "--rtol", "1e-3x"}, "error: --rtol: '1e-3x' is not a number");
  Expect({"train", "x.hlo", "--seed", "2.5"}, "error: --seed: '2.5' is not an integer");
  Expect({"simulate", "x.hlo", "--chip", "tpu-v4", "--top", "abc"}, "error: --top: 'abc' is not a non-negative integer");
  Expect({"run", "x.hlo", "-o", Path("out"), "--collective-timeout", "-1"},
         "error: --collective-timeout: '-1' is not a positive number");
  Expect({"run", "x.hlo", "-o", Path("out"), "--devices-per-rank", "0"},
         "error: --devices-per-rank: '0' is not an integer from 1 to 4096");
  Expect({"run", "x.hlo", "-o", Path("out"), "--backend", "mpx"},
         "error: --backend: 'mpx' is not one of threads, mpi (did you mean 'mpi'?)");
  Expect({"train", "x.hlo", "--backend", "nccl"}, "error: --backend: 'nccl' is not one of threads, mpi");
  Expect({"lint", "x.hlo", "--json=maybe"}, "error: --json: 'maybe' is not true or false");
}

TEST_F(CliErrorsTest, OptionWithoutItsValue) {
  Expect({"run", "x.hlo", "-o"}, "error: --out: needs a value (DIR)");
  Expect({"compare", "a.npy", "b.npy", "--rtol"}, "error: --rtol: needs a value (RTOL)");
}

TEST_F(CliErrorsTest, VersionNamesTheRevision) {
  CommandResult r = Gspmd({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // A git checkout gives `git describe --always --dirty` (a short hash, or tag-N-ghash), a
  // tarball "unknown".
  const bool from_git = std::filesystem::exists(std::filesystem::path(GSPMD_TEST_DATA_DIR) / "../../.git");
  const std::regex expected(from_git ? R"(gspmd \d+\.\d+\.\d+ \(git [0-9A-Za-z._-]*[0-9a-f]{7,}(-dirty)?\)\n)"
                                     : R"(gspmd \d+\.\d+\.\d+ \(git unknown\)\n)");
  EXPECT_TRUE(std::regex_match(r.out, expected)) << r.out;
  CommandResult help = Gspmd({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--version"), std::string::npos) << help.out;
}

TEST_F(CliErrorsTest, HelpStillExitsZero) {
  CommandResult r = Gspmd({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: gspmd run"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// The translation on small apps, for what no gspmd command declares.

std::string ErrorFor(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "tool");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& error) {
    return tools::DescribeParseError(app, error);
  }
  return "(parsed)";
}

TEST(CliErrorsUnitTest, NeededAndExcludedOptions) {
  auto make = [](CLI::App& app, bool& a, bool& b, bool& c) {
    CLI::App* sub = app.add_subcommand("go", "");
    CLI::Option* fast = sub->add_flag("--fast", a, "");
    CLI::Option* cache = sub->add_flag("--cache", b, "");
    CLI::Option* exact = sub->add_flag("--exact", c, "");
    fast->needs(cache);
    fast->excludes(exact);
  };
  bool a = false, b = false, c = false;
  CLI::App needs{"t"};
  make(needs, a, b, c);
  EXPECT_EQ(ErrorFor(needs, {"go", "--fast"}), "error: go: --fast needs --cache\n");
  CLI::App excludes{"t"};
  make(excludes, a, b, c);
  EXPECT_EQ(ErrorFor(excludes, {"go", "--fast", "--cache", "--exact"}), "error: go: --fast cannot be used with --exact\n");
}

TEST(CliErrorsUnitTest, PositionalValuesAndTies) {
  int count = 0;
  double scale = 0;
  auto make = [&](CLI::App& app) {
    app.add_option("COUNT", count, "")->required();
    app.add_option("--scale", scale, "")->check(CLI::Range(0.5, 2.0));
    app.add_flag("--abc");
    app.add_flag("--abd");
  };
  CLI::App positional{"t"};
  make(positional);
  EXPECT_EQ(ErrorFor(positional, {"x"}), "error: COUNT: 'x' is not an integer\n");
  CLI::App range{"t"};
  make(range);
  EXPECT_EQ(ErrorFor(range, {"3", "--scale", "4"}), "error: --scale: '4' is not a number from 0.5 to 2\n");
  CLI::App ties{"t"};
  make(ties);
  EXPECT_EQ(ErrorFor(ties, {"3", "--abe"}), "error: unknown option '--abe' (did you mean '--abc' or '--abd'?)\n");
  // Two edits are too many for a two-letter word, one too many for a one-letter one.
  CLI::App short_words{"t"};
  make(short_words);
  EXPECT_EQ(ErrorFor(short_words, {"3", "--xy"}).find("did you mean"), std::string::npos);
  CLI::App one_letter{"t"};
  make(one_letter);
  EXPECT_EQ(ErrorFor(one_letter, {"3", "-z"}).find("did you mean"), std::string::npos);
}

}  // namespace
}  // namespace gspmd
