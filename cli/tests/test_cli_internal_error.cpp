// An internal error (a bug) exits 1 and says "internal error ... please report it"; bad input exits 2 with its
// message. Run through treering's own main (command_line_main) with commands that throw: cli/tests/fault_main.cpp.
#include <doctest/doctest.h>

#include "run_cli.hpp"

using treering::cli::testing::run_program;

TEST_CASE("cli: an injected broken invariant exits 1 as an internal error to report") {
  const auto result = run_program(TREERING_FAULT, "broken-invariant");
  CHECK(result.exit_code == 1);
  CHECK(result.err ==
        "internal error: injected: a phase without its operand (please report it: a bug in treering, with "
        "the command that led to it)\n");
}

TEST_CASE("cli: an internal error in the main job (no arguments) exits 1 too") {
  const auto result = run_program(TREERING_FAULT, "");
  CHECK(result.exit_code == 1);
  CHECK(result.err.rfind("internal error: injected in the main job", 0) == 0);
}

TEST_CASE("cli: bad input through the same main exits 2 with its message") {
  const auto result = run_program(TREERING_FAULT, "bad-value");
  CHECK(result.exit_code == 2);
  CHECK(result.err == "error: --batch must be at least 1, got 0\n");
  const auto unknown = run_program(TREERING_FAULT, "--no-such-option");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.rfind("error: ", 0) == 0);
}
