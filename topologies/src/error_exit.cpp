#include "treering/topologies/error_exit.hpp"

#include <new>
#include <stdexcept>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies {

std::string internal_error_line(const std::string& message) {
  return "internal error: " + message + " (please report it: a bug in treering, with the command that led to it)";
}

ErrorExit error_exit(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
    return {kExitInternal, internal_error_line("no exception to report")};
  } catch (const InputError& input) {
    return {kExitBadInput, input.printed()};
  } catch (const std::bad_alloc&) {
    return {kExitInternal, "error: out of memory (try a smaller cluster: fewer --nodes)"};
  } catch (const std::exception& other) {
    return {kExitInternal, internal_error_line(other.what())};
  } catch (...) {
    return {kExitInternal, internal_error_line("an exception of unknown type")};
  }
}

}  // namespace treering::topologies
