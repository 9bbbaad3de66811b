#include "table.hpp"

#include <cstdio>

#include <algorithm>
#include <cctype>

namespace treering::cli {
namespace {

// A figure: starts with a digit or a sign and is short ("84.61 us", "+0.00 %", "24.4 us - 31.38 us", "1.16x 8x2
// tree ~"); a sentence that starts with a digit ("8x AMD MI300X per node ...") is text, left-aligned.
bool looks_numeric(const std::string& cell) {
  if (cell.empty() ||
      !(std::isdigit(static_cast<unsigned char>(cell.front())) || cell.front() == '-' || cell.front() == '+'))
    return false;
  return std::count(cell.begin(), cell.end(), ' ') <= 4;
}

// Display width in characters, counting UTF-8 continuation bytes as nothing.
size_t display_width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string count_of(long long count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void Table::print(std::ostream& out) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  auto print_row = [&](const std::vector<std::string>& row, bool is_header) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string padding(widths[i] - display_width(cell), ' ');
      line += (i == 0 ? "" : "  ");
      line += (!is_header && looks_numeric(cell) && i > 0) ? padding + cell : cell + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(header_, true);
  std::vector<std::string> rule;
  for (size_t width : widths) rule.emplace_back(width, '-');
  print_row(rule, true);
  for (const auto& row : rows_) print_row(row, false);
}

void print_fields(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& fields) {
  size_t width = 0;
  for (const auto& field : fields) width = std::max(width, field.first.size());
  for (const auto& [key, value] : fields)
    out << key << ':' << std::string(width - key.size() + 1, ' ') << value << '\n';
}

std::string format_percent(double fraction, bool sign) {
  char text[32];
  std::snprintf(text, sizeof text, sign ? "%+.1f %%" : "%.1f %%", 100 * fraction);
  return text;
}

std::string format_change(double value, double reference) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.2f %%", 100 * (value - reference) / reference);
  return text;
}

std::string format_ratio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 100 ? "%.0fx" : "%.2fx", ratio);
  return text;
}

}  // namespace treering::cli
