// CSV as RFC 4180 writes it (fields joined by commas; a field holding a comma, a double quote or a line break is
// quoted, its double quotes doubled), with numbers in full precision: the shortest text that reads back as the
// same double, as the JSON output has them. Records end with '\n' (the RFC's CRLF is accepted by every reader
// of ours; pandas, Python's csv and spreadsheets read both).
#pragma once

#include <string>
#include <string_view>

namespace treering::analysis {

// "a,b" -> "\"a,b\"", "say \"hi\"" -> "\"say \"\"hi\"\"\"", "plain" -> "plain".
std::string csv_field(std::string_view text);

// 0.1 -> "0.1", 1.0 / 3 -> "0.3333333333333333", 5e-06 -> "5e-06"; inf -> "inf", NaN -> "nan".
std::string csv_number(double value);

// One record, built field by field.
class CsvRecord {
 public:
  CsvRecord& text(std::string_view value);
  CsvRecord& number(double value);
  CsvRecord& integer(long long value);
  CsvRecord& empty();
  // The fields joined by commas, with the '\n' that ends the record.
  std::string line() const { return fields_ + '\n'; }

 private:
  void append(const std::string& field);
  std::string fields_;
  bool first_ = true;
};

}  // namespace treering::analysis
