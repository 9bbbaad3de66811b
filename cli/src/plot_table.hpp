// The rows a command wrote (`predict`, `simulate`, `sweep`, `crossover`, ... with --format csv|json -o FILE) read
// back as a table of named columns, for `treering plot` (plot_chart.hpp) and Python's plot().
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace treering::cli {

// One value as the file has it: its text ("tree", "8.46e-05"; JSON's numbers as nlohmann writes them), and the
// number it reads as, if any. An empty CSV field and JSON null are empty cells: text "" and no number.
struct TableCell {
  std::string text;
  std::optional<double> number;
  bool empty() const { return text.empty() && !number; }
};

struct DataTable {
  std::string source;                        // the file's path, for messages
  std::vector<std::string> columns;          // in the file's order
  std::vector<std::vector<TableCell>> rows;  // each as long as columns

  // The column's index; throws topologies::InputError "SOURCE: error: no column 'NAME' (columns: a, b, ...)".
  std::size_t column(const std::string& name) const;
  // Whether every non-empty cell of the column is a number, and one at least is.
  bool numeric(std::size_t column) const;
  // The column's index when it is numeric; throws InputError "SOURCE: error: column 'NAME' is not numeric
  // (numeric columns: ...)" otherwise, or the error of column().
  std::size_t numeric_column(const std::string& name) const;
};

// CSV as csv.hpp writes it (RFC 4180: a header line, quoted fields with doubled quotes; CRLF read too); a field is
// a number when the whole of it reads as one ("inf" and "nan" included).
DataTable parse_csv_table(const std::string& text, const std::string& source);

// A JSON array of objects (one per row): nested objects flattened to dotted names ("breakdown.compute_s"), arrays
// left out; the decode rows' nested columns also under their CSV names ("compute_s", decode_columns.hpp), so that
// a column has one name whichever format the rows were written in. Columns in the order they first appear.
DataTable parse_json_table(const std::string& text, const std::string& source);

// The file by its extension, .csv or .json. Throws topologies::InputError "PATH: error: ..." for another
// extension, a file that cannot be read, an empty file, a file without rows, malformed CSV or JSON, or JSON that
// is not a list of rows.
DataTable read_table(const std::string& path);

}  // namespace treering::cli
