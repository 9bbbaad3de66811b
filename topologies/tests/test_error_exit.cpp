// The one mapping of escaping exceptions to exit codes and lines that treering, treering-realrun and Python share.
#include <doctest/doctest.h>

#include <new>
#include <stdexcept>

#include "treering/topologies/error_exit.hpp"
#include "treering/topologies/input_error.hpp"

using namespace treering::topologies;

namespace {

template <typename Exception>
ErrorExit exit_of(const Exception& thrown) {
  return error_exit(std::make_exception_ptr(thrown));
}

}  // namespace

TEST_CASE("error exit: an input error exits 2 with its message unchanged") {
  const ErrorExit located = exit_of(InputError({"c.yaml", 3, 7}, "unknown key 'nic'"));
  CHECK(located.code == 2);
  CHECK(located.bad_input());
  CHECK(located.message == "c.yaml:3:7: error: unknown key 'nic'");
  // Without a location: the line today's mapping printed for a std::invalid_argument ("error: " and its what()).
  const ErrorExit bare = exit_of(InputError("--batch must be at least 1"));
  CHECK(bare.code == 2);
  CHECK(bare.message == "error: --batch must be at least 1");
  const ErrorExit empty_location = exit_of(InputError({}, "--set x: expected PATH=VALUE"));
  CHECK(empty_location.message == "error: --set x: expected PATH=VALUE");
}

TEST_CASE("error exit: a broken invariant exits 1 as an internal error to report") {
  const ErrorExit logic = exit_of(std::logic_error("phase 3 has no operand"));
  CHECK(logic.code == 1);
  CHECK_FALSE(logic.bad_input());
  CHECK(logic.message.rfind("internal error: phase 3 has no operand (please report it", 0) == 0);
  // A std::invalid_argument that is not an InputError (e.g. from the standard library) is not bad input either.
  CHECK(exit_of(std::invalid_argument("stoi")).code == 1);
  CHECK(exit_of(std::invalid_argument("stoi")).message.rfind("internal error: stoi", 0) == 0);
  CHECK(exit_of(std::runtime_error("simulator: the process died")).code == 1);
  CHECK(error_exit(std::make_exception_ptr(42)).message.rfind("internal error: ", 0) == 0);
}

TEST_CASE("error exit: out of memory exits 1 with advice, not as a bug") {
  const ErrorExit memory = exit_of(std::bad_alloc());
  CHECK(memory.code == 1);
  CHECK(memory.message == "error: out of memory (try a smaller cluster: fewer --nodes)");
}

TEST_CASE("input error: a std::invalid_argument whose what() has the prefix only with a location") {
  const InputError bare("'abc' is not a token count");
  CHECK(std::string(bare.what()) == "'abc' is not a token count");
  CHECK_FALSE(bare.located());
  CHECK_THROWS_AS(throw bare, std::invalid_argument);
  const InputError located({"w.yaml", 2, 0}, "bad");
  CHECK(std::string(located.what()) == "w.yaml:2: error: bad");
  CHECK(located.located());
}

TEST_CASE("input error: encoded for a pipe and decoded with its location, or without") {
  const InputError back = decode_input_error(encode_input_error(InputError({"c.yaml", 3, 7}, "bad key")));
  CHECK(back.located());
  CHECK(back.location().file == "c.yaml");
  CHECK(back.location().line == 3);
  CHECK(back.location().column == 7);
  CHECK(back.message() == "bad key");
  const InputError bare = decode_input_error(encode_input_error(InputError("too many ranks")));
  CHECK_FALSE(bare.located());
  CHECK(std::string(bare.what()) == "too many ranks");
}

TEST_CASE("input error: an empty location survives the pipe as a location") {
  const InputError back = decode_input_error(encode_input_error(InputError({}, "--set x: expected PATH=VALUE")));
  CHECK(back.located());
  CHECK(std::string(back.what()) == "error: --set x: expected PATH=VALUE");
}
