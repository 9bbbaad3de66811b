#include "reporter.hpp"

#include <map>
#include <stdexcept>

#include "commands.hpp"

namespace treering::cli {

const char* to_string(OutputFormat format) {
  switch (format) {
    case OutputFormat::table: return "table";
    case OutputFormat::csv: return "csv";
    case OutputFormat::json: return "json";
  }
  throw std::logic_error("an OutputFormat out of range");
}

void Report::print_csv(std::ostream&) const { throw std::logic_error("this report has no CSV form"); }

nlohmann::ordered_json Report::json() const { throw std::logic_error("this report has no JSON form"); }

void FunctionReport::print_csv(std::ostream& out) const {
  if (!forms_.csv) return Report::print_csv(out);
  forms_.csv(out);
}

nlohmann::ordered_json FunctionReport::json() const {
  if (!forms_.json) return Report::json();
  return forms_.json();
}

void JsonReporter::report(const Report& report) { out_ << report.json().dump(2) << '\n'; }

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::table: return std::make_unique<TableReporter>(out);
    case OutputFormat::csv: return std::make_unique<CsvReporter>(out);
    case OutputFormat::json: return std::make_unique<JsonReporter>(out);
  }
  throw std::logic_error("an OutputFormat out of range");
}

CLI::Option* add_format_option(CLI::App& command, OutputFormat& format, const std::vector<OutputFormat>& choices) {
  std::vector<std::string> names;
  for (OutputFormat choice : choices) names.push_back(to_string(choice));
  format = choices.front();
  auto set = [&format, choices, names](const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) format = choices[i];
    }
  };
  return command.add_option_function<std::string>("--format", set, "Output format")
      ->check(CLI::IsMember(names))
      ->default_str(names.front());
}

}  // namespace treering::cli
