// Command-line errors in the house form: CLI11's parse errors (and a command's errors that say
// no place) turned into `error: <where>: <what>`, naming the word that was not understood and
// the valid ones nearest to it.
#pragma once

#include <string>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace gspmd::tools {

// What to print on stderr when app.parse() threw `error` (anything but CLI::Success, i.e. not
// --help or --version), ending in a newline. One line, where <where> is the command for a word it
// did not take and the option for a value it did not accept:
//
//   error: unknown command 'parze' (did you mean 'parse'? commands: parse, eval, ...)
//   error: run: unknown option '--devcies' (did you mean '--devices'?)
//   error: compare: unexpected argument 'c' (compare takes ACTUAL EXPECTED)
//   error: parse: FILE is required
//   error: --rtol: 'abc' is not a number
//   error: --backend: 'mpx' is not one of threads, mpi (did you mean 'mpi'?)
//   error: --out: needs a value (DIR)
//
// A word the command line did not take is reported before anything else wrong with it (a
// mistyped `--ouput` explains the missing `--out`). `gspmd` with no command gets the usage above
// the line. The candidate words come from app's subcommands and options, so new ones are covered.
// To say what a rejected value should have been it runs that option's conversion again on test
// values, so call it only once the parse has failed.
std::string DescribeParseError(CLI::App& app, const CLI::ParseError& error);

// What to print on stderr for a UserError a command threw, ending in a newline: `message` as
// it is when it already says where and that it is an error ("pre.hlo:3:7: error: ...",
// "gspmd run: error: ..."), else in the same form as a parse error, from the command that ran:
//
//   error: model: unknown model 'nomodel' (known: dense_lm, ...)
std::string DescribeUserError(CLI::App& app, const std::string& message);

}  // namespace gspmd::tools
