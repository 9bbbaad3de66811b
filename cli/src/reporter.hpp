// How a command's findings reach people, in the --format they chose. As google/benchmark has one
// BenchmarkReporter interface with a ConsoleReporter, a CSVReporter and a JSONReporter behind it, a command here
// builds one Report (what it found, which knows how it reads in each format) and hands it to the Reporter that
// --format made; no command compares format strings.
//
// Example: predict builds a PredictReport of its rows; `--format csv` makes a CsvReporter, whose report()
// prints the rows' CSV: the same rows as the table and the JSON, in the columns Python's records have.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace treering::cli {

enum class OutputFormat { table, csv, json };

// "table", "csv", "json".
const char* to_string(OutputFormat format);

// What a command found, as each format shows it. A report offers the formats its command's --format lists; the
// others are never asked for (the option refuses them), and asking is a bug (std::logic_error).
class Report {
 public:
  virtual ~Report() = default;
  // For people: aligned columns, units, notes.
  virtual void print_table(std::ostream& out) const = 0;
  // Tidy rows with a header line, one column per quantity, units in the names.
  virtual void print_csv(std::ostream& out) const;
  // One JSON document (printed two-space indented).
  virtual nlohmann::ordered_json json() const;
};

// A report whose forms are a call each, for the commands whose table and JSON are already functions:
// make_reporter(format, std::cout)->report(FunctionReport{{.table = ..., .json = ...}}).
struct ReportForms {
  std::function<void(std::ostream&)> table;
  std::function<void(std::ostream&)> csv;  // empty where the command offers no CSV
  std::function<nlohmann::ordered_json()> json;
};

class FunctionReport : public Report {
 public:
  explicit FunctionReport(ReportForms forms) : forms_(std::move(forms)) {}
  void print_table(std::ostream& out) const override { forms_.table(out); }
  void print_csv(std::ostream& out) const override;
  nlohmann::ordered_json json() const override;

 private:
  ReportForms forms_;
};

class Reporter {
 public:
  explicit Reporter(std::ostream& out) : out_(out) {}
  virtual ~Reporter() = default;
  virtual void report(const Report& report) = 0;

 protected:
  std::ostream& out_;
};

class TableReporter : public Reporter {
 public:
  using Reporter::Reporter;
  void report(const Report& report) override { report.print_table(out_); }
};

class CsvReporter : public Reporter {
 public:
  using Reporter::Reporter;
  void report(const Report& report) override { report.print_csv(out_); }
};

class JsonReporter : public Reporter {
 public:
  using Reporter::Reporter;
  void report(const Report& report) override;
};

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::ostream& out);

// --format with `choices` (the first the default), into `format`.
CLI::Option* add_format_option(CLI::App& command, OutputFormat& format,
                               const std::vector<OutputFormat>& choices = {OutputFormat::table, OutputFormat::json});

}  // namespace treering::cli
