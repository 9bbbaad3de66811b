// OutputFile: the path is replaced whole at commit, untouched before and after a failure.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/output_file.hpp"
#include "scratch_files.hpp"

namespace topo = treering::topologies;
namespace fs = std::filesystem;
using treering::topologies::testing::read;
using treering::topologies::testing::write;

namespace {
fs::path scratch_dir() { return treering::topologies::testing::scratch_dir("output-file"); }
}  // namespace

TEST_CASE("output file: the old content stays readable until commit, then the new content replaces it") {
  const fs::path dir = scratch_dir();
  const fs::path path = dir / "cal.yaml";
  write(path, "old\n");
  {
    topo::OutputFile out(path.string());
    out.stream() << "new\n";
    CHECK(read(path) == "old\n");  // an input of the same command can still be read
    out.commit();
  }
  CHECK(read(path) == "new\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);  // no temporary left
  fs::remove_all(dir);
}

TEST_CASE("output file: without commit (an error on the way) the path is untouched and no temporary is left") {
  const fs::path dir = scratch_dir();
  const fs::path path = dir / "cal.yaml";
  write(path, "old\n");
  try {
    topo::OutputFile out(path.string());
    out.stream() << "half";
    throw std::runtime_error("the fit failed");
  } catch (const std::runtime_error&) {}
  CHECK(read(path) == "old\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  fs::remove_all(dir);
}

TEST_CASE("output file: a path in a missing directory fails at construction, naming the path") {
  const std::string path = (scratch_dir() / "no-such-dir" / "out.csv").string();
  try {
    topo::OutputFile out(path);
    FAIL("no error");
  } catch (const topo::InputError& error) {
    CHECK(error.location().file == path);
    CHECK(error.message().find("cannot write the file") == 0);
  }
  fs::remove_all(scratch_dir());
}

TEST_CASE("output file: /dev/null is written directly, not replaced") {
  topo::write_output_file("/dev/null", "discarded\n");
  CHECK(fs::is_character_file("/dev/null"));
  CHECK_FALSE(fs::exists("/dev/null.tmp-" + std::to_string(::getpid())));
}
