// CLI11's parse errors as `error: <where>: <what>` lines (see cli_errors.h), with did-you-mean
// suggestions drawn from the app's own commands, options and choices.
#include "tools/cli_errors.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gspmd::tools {
namespace {

// Edits between a and b, an adjacent transposition counting as one (optimal string alignment):
// "rnu" is one typo away from "run". Written here because Debian's CLI11 (2.1) suggests nothing
// and no other library we link computes it; it is a dozen lines.
size_t TypoDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t replace = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, replace});
      const bool swapped = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
      if (swapped) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string_view WithoutDashes(std::string_view word) {
  while (!word.empty() && word.front() == '-') word.remove_prefix(1);
  return word;
}

// The candidates nearest to word, at most 2 edits away and fewer edits than word has letters (so
// `-z` suggests nothing rather than `-o`), in the order given. Leading dashes are not counted:
// `-devices` finds `--devices`.
std::vector<std::string> Nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string_view letters = WithoutDashes(word);
  if (letters.empty()) return {};
  size_t best = std::min<size_t>(2, letters.size() - 1);
  std::vector<std::string> nearest;
  for (const std::string& candidate : candidates) {
    const size_t distance = TypoDistance(letters, WithoutDashes(candidate));
    if (distance > best) continue;
    if (distance < best) nearest.clear();
    best = distance;
    nearest.push_back(candidate);
  }
  return nearest;
}

std::string Join(const std::vector<std::string>& words, std::string_view separator) {
  std::string joined;
  for (const std::string& word : words) {
    if (!joined.empty()) joined += separator;
    joined += word;
  }
  return joined;
}

std::string Quote(std::string_view word) { return "'" + std::string(word) + "'"; }

// "did you mean 'a'?" or "did you mean 'a' or 'b'?"; "" when there is nothing near.
std::string DidYouMean(const std::vector<std::string>& nearest) {
  if (nearest.empty()) return "";
  std::vector<std::string> quoted;
  for (const std::string& word : nearest) quoted.push_back(Quote(word));
  return "did you mean " + Join(quoted, " or ") + "?";
}

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool IsNumber(const std::string& word) {
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return end != word.c_str() && *end == '\0';
}

// `-x`, `--name`, `--name=value`, but not `-`, `-1` or `-0.5`.
bool LooksLikeOption(const std::string& word) { return word.size() > 1 && word[0] == '-' && !IsNumber(word); }

// The apps the command line went through: the top one, the subcommand it chose, and so on.
std::vector<CLI::App*> CommandChain(CLI::App& app) {
  std::vector<CLI::App*> chain = {&app};
  while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
  return chain;
}

// "run: " when the error is in `gspmd run`, "" at the top level.
std::string Where(const std::vector<CLI::App*>& chain, size_t index) {
  std::vector<std::string> names;
  for (size_t i = 1; i <= index; ++i) names.push_back(chain[i]->get_name());
  return names.empty() ? "" : Join(names, " ") + ": ";
}

// "gspmd run" for `gspmd run`.
std::string CommandLine(const std::vector<CLI::App*>& chain, size_t index) {
  std::vector<std::string> names;
  for (size_t i = 0; i <= index; ++i) names.push_back(chain[i]->get_name());
  return Join(names, " ");
}

std::vector<std::string> CommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App* sub) { return !sub->get_name().empty(); }))
    if (!command->get_disabled()) names.push_back(command->get_name());
  return names;
}

// Every spelling of app's options: `--devices`, `-o`, `--out`, ... (each option's long names first).
std::vector<std::string> OptionNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<const CLI::Option*> Positionals(CLI::App& app) {
  std::vector<const CLI::Option*> positionals;
  for (const CLI::Option* option : app.get_options())
    if (option->get_positional()) positionals.push_back(option);
  return positionals;
}

// "FILE", "ACTUAL EXPECTED", "[NAME]".
std::string PositionalUsage(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : Positionals(app)) {
    const std::string name = option->get_name(true);
    names.push_back(option->get_required() ? name : "[" + name + "]");
  }
  return Join(names, " ");
}

// A word on the command line no app took: an unknown option, an unknown command or one positional
// argument too many.
std::string DescribeLeftover(const std::vector<CLI::App*>& chain, size_t index, const std::string& word) {
  CLI::App& app = *chain[index];
  const std::string where = Where(chain, index);
  if (LooksLikeOption(word)) {
    const std::string name = word.substr(0, word.find('='));
    const std::string hint = DidYouMean(Nearest(name, OptionNames(app)));
    return "error: " + where + "unknown option " + Quote(name) + " (" +
           (hint.empty() ? "see " + CommandLine(chain, index) + " --help" : hint) + ")";
  }
  const std::vector<std::string> commands = CommandNames(app);
  if (!commands.empty() && Positionals(app).empty()) {
    const std::string hint = DidYouMean(Nearest(word, commands));
    return "error: " + where + "unknown command " + Quote(word) + " (" + (hint.empty() ? "" : hint + " ") +
           "commands: " + Join(commands, ", ") + ")";
  }
  const std::string usage = PositionalUsage(app);
  return "error: " + where + "unexpected argument " + Quote(word) + " (" + app.get_name() + " takes " +
         (usage.empty() ? "only options" : usage) + ")";
}

// The first word some app on the chain left over, with that app's index.
std::optional<std::pair<size_t, std::string>> FirstLeftover(const std::vector<CLI::App*>& chain) {
  for (size_t index = 0; index < chain.size(); ++index) {
    for (const std::string& word : chain[index]->remaining())
      if (word != "--") return std::make_pair(index, word);
  }
  return std::nullopt;
}

// The option CLI11's message is about, and the index of its app on the chain. CLI11 names it first
// ("--out: 1 required DIR missing", "--backend: mpx not in {threads,mpi}"), after "Could not
// convert: " or after " for ".
std::optional<std::pair<size_t, CLI::Option*>> OptionOf(const std::vector<CLI::App*>& chain,
                                                        const std::string& message) {
  for (size_t index = chain.size(); index-- > 0;) {
    for (CLI::Option* option : chain[index]->get_options()) {
      const std::string name = option->get_name();
      if (name.empty()) continue;
      const bool named = StartsWith(message, name + ": ") ||
                         StartsWith(message, "Could not convert: " + name + " = ") || EndsWith(message, " for " + name);
      if (named) return std::make_pair(index, option);
    }
  }
  return std::nullopt;
}

// "--rtol: " for an option, "compare: ACTUAL: " for a positional argument.
std::string WhereOption(const std::vector<CLI::App*>& chain, size_t index, const CLI::Option& option) {
  if (option.get_positional()) return Where(chain, index) + option.get_name(true) + ": ";
  return option.get_name() + ": ";
}

// Whether option takes value, by running its validators and conversion on value alone. This
// replaces the option's results (and may assign its variable): only for a parse that has failed.
bool Accepts(CLI::Option& option, const std::string& value) {
  option.clear();
  option.add_result(value);
  try {
    option.run_callback();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// What an option's values must be, in words, and the choices when they form a set.
struct Expected {
  std::string words;  // "a number", "an integer from 1 to 4096", "one of threads, mpi", ...
  std::vector<std::string> choices;
};

// "{threads,mpi}" (CLI::IsMember's description) -> {threads, mpi}.
std::vector<std::string> ChoicesOf(const std::string& description) {
  if (description.size() < 2 || description.front() != '{' || description.back() != '}') return {};
  std::vector<std::string> choices;
  size_t start = 1;
  for (size_t comma; (comma = description.find(',', start)) != std::string::npos; start = comma + 1)
    choices.push_back(description.substr(start, comma - start));
  choices.push_back(description.substr(start, description.size() - 1 - start));
  return choices;
}

// "INT in [1 - 4096]" (CLI::Range's description) -> "an integer from 1 to 4096".
std::optional<std::string> RangeOf(const std::string& description) {
  const size_t in = description.find(" in [");
  const size_t dash = description.find(" - ", in == std::string::npos ? 0 : in);
  if (in == std::string::npos || dash == std::string::npos || !EndsWith(description, "]")) return std::nullopt;
  const std::string type = description.substr(0, in);
  const std::string low = description.substr(in + 5, dash - in - 5);
  const std::string high = description.substr(dash + 3, description.size() - 1 - dash - 3);
  const std::string kind = type == "INT" || type == "UINT" ? "an integer" : type == "FLOAT" ? "a number" : "a value";
  return kind + " from " + low + " to " + high;
}

// What option accepts, from its validators (a set, a range, positive / non-negative) and else by
// trying its conversion on sample values; nullopt when it is none of these (a text option with a
// validator of its own).
std::optional<Expected> ExpectedOf(CLI::Option& option) {
  if (option.get_expected_max() == 0) return Expected{"true or false", {}};  // a flag: --json=maybe
  std::string sign;
  for (int i = 0;; ++i) {
    const CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string description = validator->get_description();
    if (std::vector<std::string> choices = ChoicesOf(description); !choices.empty())
      return Expected{"one of " + Join(choices, ", "), choices};
    if (std::optional<std::string> range = RangeOf(description)) return Expected{*range, {}};
    // CLI::PositiveNumber and CLI::NonNegativeNumber, which CLI11 describes by these words.
    if (description == "POSITIVE") sign = "positive ";
    if (description == "NONNEGATIVE") sign = "non-negative ";
  }
  if (Accepts(option, "x")) return std::nullopt;  // takes text: rejected by a check of its own
  const bool number = Accepts(option, "0.5");
  if (!number && !Accepts(option, "1")) return std::nullopt;
  if (!number && sign.empty() && !Accepts(option, "-1")) sign = "non-negative ";
  return Expected{(sign.empty() ? (number ? "a " : "an ") : "a " + sign) + (number ? "number" : "integer"), {}};
}

// A value an option did not accept: `error: --rtol: 'abc' is not a number`.
std::optional<std::string> DescribeBadValue(const std::vector<CLI::App*>& chain, const std::string& message) {
  const auto found = OptionOf(chain, message);
  if (!found) return std::nullopt;
  const auto [index, option] = *found;
  const std::vector<std::string> values = option->results();  // before ExpectedOf replaces them
  const std::optional<Expected> expected = ExpectedOf(*option);
  if (!expected) return std::nullopt;
  for (const std::string& value : values) {
    if (Accepts(*option, value)) continue;
    const std::string hint = DidYouMean(Nearest(value, expected->choices));
    return "error: " + WhereOption(chain, index, *option) + Quote(value) + " is not " + expected->words +
           (hint.empty() ? "" : " (" + hint + ")");
  }
  return std::nullopt;
}

// An option given last without its value: `error: --out: needs a value (DIR)`.
std::optional<std::string> DescribeMissingValue(const std::vector<CLI::App*>& chain, const std::string& message) {
  const auto found = OptionOf(chain, message);
  if (!found) return std::nullopt;
  const auto [index, option] = *found;
  const int wanted = option->get_items_expected_min();
  if (static_cast<int>(option->count()) >= wanted) return std::nullopt;
  return "error: " + WhereOption(chain, index, *option) + "needs " +
         (wanted == 1 ? std::string("a value") : std::to_string(wanted) + " values") + " (" +
         option->get_type_name() + ")";
}

// A required argument or option not given, or no command at all (`gspmd`: the usage, then the line).
std::optional<std::string> DescribeMissing(const std::vector<CLI::App*>& chain) {
  const size_t index = chain.size() - 1;
  CLI::App& app = *chain[index];
  if (app.get_require_subcommand_min() > 0 && !CommandNames(app).empty())
    return app.help() + "error: " + Where(chain, index) + "no command given";
  for (size_t i = chain.size(); i-- > 0;) {
    for (const CLI::Option* option : chain[i]->get_options()) {
      if (option->get_required() && option->count() == 0)
        return "error: " + Where(chain, i) + option->get_name() + " is required";
    }
  }
  return std::nullopt;
}

// "--a requires --b" / "--a excludes --b" -> "--a needs --b" / "--a cannot be used with --b".
std::optional<std::string> DescribePair(const std::vector<CLI::App*>& chain, const std::string& message,
                                        std::string_view cli11_verb, std::string_view our_words) {
  const size_t at = message.find(cli11_verb);
  if (at == std::string::npos) return std::nullopt;
  return "error: " + Where(chain, chain.size() - 1) + message.substr(0, at) + std::string(our_words) +
         message.substr(at + cli11_verb.size());
}

std::optional<std::string> Describe(const std::vector<CLI::App*>& chain, const CLI::ParseError& error) {
  // A word the parse did not take comes first: it is usually why something else is missing.
  if (const auto leftover = FirstLeftover(chain)) return DescribeLeftover(chain, leftover->first, leftover->second);
  const std::string message = error.what();
  if (dynamic_cast<const CLI::RequiredError*>(&error)) return DescribeMissing(chain);
  if (dynamic_cast<const CLI::ConversionError*>(&error) || dynamic_cast<const CLI::ValidationError*>(&error))
    return DescribeBadValue(chain, message);
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error)) return DescribeMissingValue(chain, message);
  if (dynamic_cast<const CLI::RequiresError*>(&error)) return DescribePair(chain, message, " requires ", " needs ");
  if (dynamic_cast<const CLI::ExcludesError*>(&error))
    return DescribePair(chain, message, " excludes ", " cannot be used with ");
  return std::nullopt;
}

}  // namespace

std::string DescribeParseError(CLI::App& app, const CLI::ParseError& error) {
  const std::vector<CLI::App*> chain = CommandChain(app);
  if (std::optional<std::string> described = Describe(chain, error)) return *described + "\n";
  // Anything else CLI11 can say, in the same form.
  return "error: " + Where(chain, chain.size() - 1) + error.what() + "\n";
}

std::string DescribeUserError(CLI::App& app, const std::string& message) {
  const bool says_where = message.find(": error: ") != std::string::npos || StartsWith(message, "error: ");
  if (says_where) return message + "\n";
  const std::vector<CLI::App*> chain = CommandChain(app);
  return "error: " + Where(chain, chain.size() - 1) + message + "\n";
}

}  // namespace gspmd::tools
