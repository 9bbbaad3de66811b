// CSV fields: RFC 4180 quoting and numbers that read back as the same double.
#include <doctest/doctest.h>

#include <cstdlib>
#include <limits>

#include "treering/analysis/csv.hpp"

using treering::analysis::csv_field;
using treering::analysis::csv_number;
using treering::analysis::CsvRecord;

TEST_CASE("csv: only fields with a comma, a quote or a line break are quoted; quotes are doubled (RFC 4180, 2.6-2.7)") {
  CHECK(csv_field("dgx-h100") == "dgx-h100");
  CHECK(csv_field("") == "");
  CHECK(csv_field("dgx-h100 x 16, calibrated") == "\"dgx-h100 x 16, calibrated\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
}

TEST_CASE("csv: numbers in full precision, read back exactly") {
  CHECK(csv_number(0.1) == "0.1");
  CHECK(csv_number(2.5e-05) == "2.5e-05");
  CHECK(csv_number(1234567.0) == "1234567");
  // 1/3 needs 16 significant digits to read back; 6 ("0.333333") would be off by 1e-7 relative.
  const double third = 1.0 / 3;
  CHECK(csv_number(third) == "0.3333333333333333");
  for (double value : {third, 0.000123456789012345678, 6.02214076e23, 1.0 + std::numeric_limits<double>::epsilon()}) {
    CHECK(std::strtod(csv_number(value).c_str(), nullptr) == value);
  }
  CHECK(csv_number(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(csv_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("csv: a record joins its fields and ends with a newline") {
  CHECK(CsvRecord().text("tree").integer(16).number(0.5).empty().text("a,b").line() == "tree,16,0.5,,\"a,b\"\n");
}
