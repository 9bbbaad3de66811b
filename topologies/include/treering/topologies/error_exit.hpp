// What a front end (treering, treering-realrun, the Python module) makes of an exception that reaches it: one
// mapping, so that bad input and a bug read the same everywhere.
#pragma once

#include <exception>
#include <string>

namespace treering::topologies {

constexpr int kExitInternal = 1;  // a bug (or out of memory): "internal error: ..., please report it"
constexpr int kExitBadInput = 2;  // an InputError: a file, a value or the command line

struct ErrorExit {
  int code = kExitInternal;
  std::string message;  // the line to print (no newline)
  bool bad_input() const { return code == kExitBadInput; }
};

// InputError -> exit 2 and its printed line ("FILE:LINE:COL: error: MESSAGE" or "error: MESSAGE");
// std::bad_alloc -> exit 1, "error: out of memory (try a smaller cluster: fewer --nodes)";
// anything else (a std::logic_error, a std::invalid_argument that is not an InputError, a std::runtime_error, an
// exception of no standard type) -> exit 1, "internal error: MESSAGE (please report it: ...)".
ErrorExit error_exit(std::exception_ptr error);

// The internal error's line for a message: "internal error: MESSAGE (please report it: a bug in treering, with
// the command that led to it)".
std::string internal_error_line(const std::string& message);

}  // namespace treering::topologies
