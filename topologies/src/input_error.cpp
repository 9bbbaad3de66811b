#include "treering/topologies/input_error.hpp"

#include <cstdlib>
#include <vector>

namespace treering::topologies {

std::string format_input_error(const InputLocation& location, const std::string& message) {
  std::string out;
  if (!location.file.empty()) {
    out.append(location.file);
    if (location.line > 0) {
      out.append(":").append(std::to_string(location.line));
      if (location.column > 0) out.append(":").append(std::to_string(location.column));
    }
    out.append(": ");
  }
  out.append("error: ").append(message);
  return out;
}

InputError::InputError(InputLocation location, const std::string& message)
    : std::invalid_argument(format_input_error(location, message)), location_(std::move(location)), message_(message) {}

InputError::InputError(const std::string& message)
    : std::invalid_argument(message), message_(message), located_(false) {}

std::string InputError::printed() const { return format_input_error(location_, message_); }

std::string encode_input_error(const InputError& error) {
  if (!error.located()) return "M" + error.message();
  const InputLocation& where = error.location();
  return "L" + where.file + '\0' + std::to_string(where.line) + '\0' + std::to_string(where.column) + '\0' +
         error.message();
}

InputError decode_input_error(const std::string& encoded) {
  if (encoded.empty() || encoded[0] != 'L') return InputError(encoded.empty() ? encoded : encoded.substr(1));
  std::vector<std::string> parts;
  std::size_t from = 1;
  for (int field = 0; field < 3; ++field) {
    const std::size_t end = encoded.find('\0', from);
    if (end == std::string::npos) return InputError(encoded);  // not an encoding: the text as the message
    parts.push_back(encoded.substr(from, end - from));
    from = end + 1;
  }
  return InputError({parts[0], std::atoi(parts[1].c_str()), std::atoi(parts[2].c_str())}, encoded.substr(from));
}

}  // namespace treering::topologies
