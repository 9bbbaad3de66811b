// Plain-text tables for people: columns padded to their widest cell, numbers right-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace treering::cli {

// "1 node", "2 nodes": a count and its noun, plural unless one.
std::string count_of(long long count, const std::string& noun);

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "key: value" lines with the keys padded to the same width.
void print_fields(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& fields);

// A fraction as a percentage with one decimal: 0.0523 -> "5.2 %", or "+5.2 %" with `sign`.
std::string format_percent(double fraction, bool sign = false);
// The change from `reference`, in percent with two decimals: format_change(1.2, 1.0) is "+20.00 %".
std::string format_change(double value, double reference);
// "2.20x", or "1908x" from 100x on (the decimals no longer matter): format_ratio(207.9 / 94.65) is "2.20x".
std::string format_ratio(double ratio);

}  // namespace treering::cli
