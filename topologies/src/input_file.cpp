// Reading input files whole, with the checks every loader needs (input_error.hpp).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/input_files_read.hpp"

namespace treering::topologies {

void check_input_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) throw InputError({path, 0, 0}, "cannot open the file");
  if (fs::is_directory(status)) throw InputError({path, 0, 0}, "is a directory, not a file");
  if (!fs::is_regular_file(status)) throw InputError({path, 0, 0}, "is not a regular file (a device, pipe or socket)");
  const std::uintmax_t bytes = fs::file_size(path, error);
  if (error) throw InputError({path, 0, 0}, "cannot read the file's size: " + error.message());
  if (bytes > static_cast<std::uintmax_t>(kMostInputFileBytes)) {
    throw InputError({path, 0, 0}, "is " + std::to_string(bytes) + " bytes, more than an input file may hold (" +
                                       std::to_string(kMostInputFileBytes >> 20) + " MiB)");
  }
  note_input_file(path);  // from here on no output of this process may replace it
}

std::string read_input_file(const std::string& path) {
  check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace treering::topologies
