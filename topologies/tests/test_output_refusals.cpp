// OutputFile refuses the files the process has read as input, however they are named, names a path it cannot
// write (InputError: exit 2 in the commands), and a run stopped by a signal leaves the old file and no temporary.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/output_file.hpp"
#include "scratch_files.hpp"

namespace topo = treering::topologies;
namespace fs = std::filesystem;
using treering::topologies::testing::read;
using treering::topologies::testing::scratch_dir;
using treering::topologies::testing::write;

namespace {

long files_in(const fs::path& dir) { return std::distance(fs::directory_iterator(dir), fs::directory_iterator{}); }

// The message OutputFile throws for PATH, or "" when it accepts it (and writes "new").
std::string refusal(const std::string& path) {
  try {
    topo::write_output_file(path, "new\n");
    return "";
  } catch (const topo::InputError& error) {
    CHECK(error.location().file == path);
    return error.message();
  }
}

}  // namespace

TEST_CASE("output file: an input of this process is refused by its own name, another spelling and any link") {
  const fs::path dir = scratch_dir("refusals-names");
  const fs::path input = dir / "in.yaml";
  write(input, "old\n");
  const topo::InputFilesScope run;
  CHECK(topo::read_input_file(input.string()) == "old\n");  // now an input
  CHECK(refusal(input.string()) == "is also an input of this run: write the output to another file");
  const std::string respelt = (dir / "." / "sub" / ".." / "in.yaml").string();
  fs::create_directories(dir / "sub");
  CHECK(refusal(respelt).find("is also an input of this run (read as " + input.string() + ")") == 0);
  fs::create_hard_link(input, dir / "hard.yaml");
  CHECK(refusal((dir / "hard.yaml").string()).find("is also an input") == 0);
  fs::create_symlink(input, dir / "soft.yaml");
  CHECK(refusal((dir / "soft.yaml").string()).find("is also an input") == 0);
  CHECK(read(input) == "old\n");
  CHECK(files_in(dir) == 4);  // in, sub, hard, soft: no temporary left by any refusal
  // A file that is not an input is written as before.
  CHECK(refusal((dir / "other.yaml").string()).empty());
  CHECK(read(dir / "other.yaml") == "new\n");
  fs::remove_all(dir);
}

TEST_CASE("output file: a new file where a removed input was is not that input (its inode may be reused)") {
  const fs::path dir = scratch_dir("refusals-reused");
  const fs::path path = dir / "in.yaml";
  write(path, "old\n");
  const topo::InputFilesScope run;
  topo::read_input_file(path.string());
  fs::remove(path);
  write(path, "recreated\n");  // often given the inode just freed
  CHECK(refusal(path.string()).empty());
  CHECK(read(path) == "new\n");
  fs::remove_all(dir);
}

TEST_CASE("output file: an input read after the output was opened is refused at commit, the file untouched") {
  const fs::path dir = scratch_dir("refusals-late");
  const fs::path path = dir / "late.yaml";
  write(path, "old\n");
  const topo::InputFilesScope run;
  try {
    topo::OutputFile out(path.string());  // not an input yet: accepted
    out.stream() << "new\n";
    topo::read_input_file(path.string());
    out.commit();
    FAIL("no error");
  } catch (const topo::InputError& error) {
    CHECK(error.message().find("is also an input of this run") == 0);
  }
  CHECK(read(path) == "old\n");
  CHECK(files_in(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("output file: an input is refused while its run lasts, in nested runs too, and written after it") {
  const fs::path dir = scratch_dir("refusals-scopes");
  const fs::path path = dir / "cal.yaml";
  write(path, "old\n");
  topo::read_input_file(path.string());  // outside every run: not on record
  CHECK(refusal(path.string()).empty());
  {
    const topo::InputFilesScope outer;
    topo::read_input_file(path.string());
    {
      const topo::InputFilesScope inner;  // a call inside the run still may not write it
      CHECK(refusal(path.string()).find("is also an input") == 0);
    }
    CHECK(refusal(path.string()).find("is also an input") == 0);
  }
  CHECK(refusal(path.string()).empty());  // a later run (a notebook's cell run again) may write it
  fs::remove_all(dir);
}

TEST_CASE("output file: a full device is bad input naming the path, not an internal error") {
  if (!fs::exists("/dev/full")) return;  // Linux has it; the check is for the error's kind and words
  CHECK(refusal("/dev/full") == "cannot write the file (No space left on device)");
}

TEST_CASE("output file: a run stopped by SIGINT leaves the old file and removes its temporary") {
  const fs::path dir = scratch_dir("refusals-signal");
  const fs::path path = dir / "out.json";
  write(path, "old\n");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the interrupted run: half its output written, then Ctrl-C
    try {
      topo::remove_unfinished_outputs_on_signals();
      topo::OutputFile out(path.string());
      out.stream() << std::string(1 << 16, 'x');
      out.stream().flush();
      std::raise(SIGINT);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s\n", error.what());
    }
    ::_exit(3);  // not reached: the handler re-raises with the default action (3: the output was refused)
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(read(path) == "old\n");
  CHECK(files_in(dir) == 1);  // "out.json.tmp-PID" removed by the handler
  fs::remove_all(dir);
}
