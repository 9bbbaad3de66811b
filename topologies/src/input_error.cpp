#include "treering/topologies/input_error.hpp"

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
    : std::runtime_error(format_input_error(location, message)),
      location_(std::move(location)),
      message_(message) {}

}  // namespace treering::topologies
