// Errors in user input (YAML files, unit strings, command-line values), in the compiler's format.
#pragma once

#include <stdexcept>
#include <string>

namespace treering::topologies {

// Where in an input a problem was found. line and column count from 1 (as people and editors do);
// 0 means "unknown" (e.g. a value given on the command line).
struct InputLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// Thrown by every loader and parser for bad input. what() is "FILE:LINE:COL: error: MESSAGE"
// (or "FILE: error: MESSAGE" without a line, or "error: MESSAGE" without a file).
class InputError : public std::runtime_error {
 public:
  InputError(InputLocation location, const std::string& message);

  const InputLocation& location() const { return location_; }
  // The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  InputLocation location_;
  std::string message_;
};

// Formats a location and message as the compiler does.
std::string format_input_error(const InputLocation& location, const std::string& message);

// The most an input file (a cluster, workload, profile, config.json or measurement file) may hold: the largest
// real one is a few hundred kB, so this only stops a device or a mistaken path from being read for minutes.
constexpr long long kMostInputFileBytes = 64LL << 20;

// The whole text of an input file. Throws InputError for a path that does not exist or cannot be opened, a
// directory, anything but a regular file (/dev/zero, a pipe: they are refused before a byte is read), or a file
// over kMostInputFileBytes. Example: "/dev/zero: error: is not a regular file (a device, pipe or socket)".
std::string read_input_file(const std::string& path);
// The same checks without reading, for readers that stream the file themselves.
void check_input_file(const std::string& path);

}  // namespace treering::topologies
