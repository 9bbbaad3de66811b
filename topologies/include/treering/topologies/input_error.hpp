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

// Bad input a user can cause: a file, a value, a command-line combination, or a library precondition that the
// front ends pass user values into. The front ends map it to exit 2 (Python: treering.InputError, a ValueError);
// a broken invariant, which only a bug can cause, is a std::logic_error instead (exit 1, "internal error").
// A std::invalid_argument, so that code and tests catching that catch this too.
class InputError : public std::invalid_argument {
 public:
  // Found at a place in an input: what() is "FILE:LINE:COL: error: MESSAGE" (or "FILE: error: MESSAGE" without a
  // line, or "error: MESSAGE" without a file).
  InputError(InputLocation location, const std::string& message);
  // A value without a place (a command-line value, a library argument): what() is MESSAGE alone, as a
  // std::invalid_argument's, so a caller that adds a location to it (InputError(where, e.what())) says it once.
  explicit InputError(const std::string& message);

  const InputLocation& location() const { return location_; }
  // The message without the location prefix.
  const std::string& message() const { return message_; }
  // Whether it was made with a location (what() carries the "error: " prefix, even for an empty location).
  bool located() const { return located_; }
  // The line a front end prints: format_input_error(location(), message()), "error: MESSAGE" without a location.
  std::string printed() const;

 private:
  InputLocation location_;
  std::string message_;
  bool located_ = true;
};

// Formats a location and message as the compiler does.
std::string format_input_error(const InputLocation& location, const std::string& message);

// An InputError as one string and back, for a child process that reports its error to its parent through a pipe:
// "LFILE\0LINE\0COLUMN\0MESSAGE" for a located one, "MMESSAGE" for one without.
std::string encode_input_error(const InputError& error);
InputError decode_input_error(const std::string& encoded);

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
