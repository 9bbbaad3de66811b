// Inputs the fuzz targets (topologies/fuzz, scripts/fuzz.sh) found, kept so that the bugs stay fixed. Each file of
// topologies/tests/fuzz-regressions/ is read as its fuzz target reads it:
//   cluster/   a cluster description: a clean InputError (these once made yaml-cpp's LoadAll run without end)
//   workload/  a workload file: a clean InputError
//   units/     a unit string: std::invalid_argument, or values that keep units.hpp's promises
// A file added here is checked without changing this test; the expected messages below pin the known ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "treering/topologies/load.hpp"
#include "treering/topologies/topology.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/workload_spec.hpp"

namespace fs = std::filesystem;
using namespace treering::topologies;

namespace {

std::vector<fs::path> files_in(const std::string& kind) {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "topologies" / "tests" / "fuzz-regressions" / kind;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `load` with a deadline: a regression of the endless LoadAll loop must fail this test, not hang ctest while
// it eats the machine's memory. A hung load cannot be stopped, so the process ends.
std::string error_within_deadline(const std::function<void()>& load) {
  auto result = std::async(std::launch::async, [&load]() -> std::string {
    try {
      load();
    } catch (const InputError& error) {
      return error.message().empty() ? "(an InputError with no message)" : error.what();
    } catch (const std::exception& error) {
      return std::string("(not an InputError: ") + error.what() + ")";
    }
    return "(no error)";
  });
  // A hang guard, not a speed test: a load takes milliseconds, the loop it guards against forever. 120 s leaves room
  // for a machine loaded by other builds, and for the sanitizers.
  if (result.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    std::fprintf(stderr, "test_fuzz_regressions: a load did not finish within 120 s (the LoadAll loop is back?)\n");
    std::_Exit(1);
  }
  return result.get();
}

}  // namespace

TEST_CASE("fuzz regressions: cluster files end in a clean InputError, at the right place") {
  // The location and message each known file must give; others must give an InputError naming their file.
  const std::map<std::string, std::string> expected{
      {"loadall-comma-after-document.yaml", ":7:1: error: YAML syntax: unexpected ','"},
      {"loadall-lone-comma.yaml", ":1:1: error: YAML syntax: unexpected ','"},
      {"loadall-stray-comma-found.yaml", ":2:1: error: YAML syntax: unexpected ','"},
  };
  const std::vector<fs::path> files = files_in("cluster");
  CHECK(files.size() >= expected.size());
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    const std::string text = contents_of(file);
    // As the fuzz target does (load_cluster_text, then the graph), and as `treering topo check` does (from the file).
    const std::string from_text =
        error_within_deadline([&] { Topology topology(load_cluster_text(text, file.string())); });
    const std::string from_file = error_within_deadline([&] { Topology topology(load_cluster_file(file.string())); });
    CHECK(from_text == from_file);
    CHECK(from_text.rfind(file.string() + ":", 0) == 0);
    if (const auto known = expected.find(file.filename().string()); known != expected.end()) {
      CHECK(from_text == file.string() + known->second);
    }
  }
}

TEST_CASE("fuzz regressions: a second YAML document is still one too many") {
  const std::string one = "name: x\n";
  CHECK(error_within_deadline([&] { load_cluster_text(one + "---\nname: y\n", "two.yaml"); }) ==
        "two.yaml:3:1: error: a cluster file holds one YAML document; this is a second one");
  CHECK(error_within_deadline([&] { load_cluster_text(one + "---\n", "empty-second.yaml"); }) ==
        "empty-second.yaml:3:1: error: a cluster file holds one YAML document; this is a second one");
  CHECK(error_within_deadline([&] { load_cluster_text("", "empty.yaml"); }) ==
        "empty.yaml:1:1: error: expected a map for the cluster, got nothing");
}

TEST_CASE("fuzz regressions: workload files end in a clean InputError") {
  const std::map<std::string, std::string> expected{
      {"hidden-size-overflow.yaml",
       ":5:11: error: query_heads x head_dim (4294967296) is too large (at most 2147483647)"},
  };
  const std::vector<fs::path> files = files_in("workload");
  CHECK(files.size() >= expected.size());
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    const std::string error = error_within_deadline([&] { load_workload_file(file.string()); });
    CHECK(error.rfind(file.string() + ":", 0) == 0);
    if (const auto known = expected.find(file.filename().string()); known != expected.end()) {
      CHECK(error == file.string() + known->second);
    }
  }
}

TEST_CASE("fuzz regressions: unit strings keep the promises of units.hpp") {
  for (const fs::path& file : files_in("units")) {
    const std::string text = contents_of(file);
    CAPTURE(file.filename().string());
    CAPTURE(text);
    // Each parser either refuses the text (std::invalid_argument) or returns what the header promises.
    auto refused = [](auto parse) {
      try {
        parse();
        return false;
      } catch (const std::invalid_argument&) {
        return true;
      }
    };
    if (!refused([&] { parse_token_count(text); })) {
      const long long tokens = parse_token_count(text);
      CHECK(tokens >= 1);
      const std::string written = format_token_count(tokens);
      CAPTURE(written);
      CHECK(!refused([&] { parse_token_count(written); }));
      if (!refused([&] { parse_token_count(written); })) CHECK(parse_token_count(written) == tokens);
    }
    if (!refused([&] { parse_message_sizes(text); })) {
      for (double bytes : parse_message_sizes(text)) CHECK(bytes >= 0);
    }
    if (!refused([&] { parse_message_size_bytes(text); })) CHECK(parse_message_size_bytes(text) >= 0);
    if (!refused([&] { parse_token_counts(text); })) {
      for (long long tokens : parse_token_counts(text)) CHECK(tokens >= 1);
    }
  }
}

TEST_CASE("fuzz regressions: format_token_count writes only what parse_token_count reads back") {
  // 1,100,100,000,000 once came out as "1100G" and 123,450,000 as "123.5M" (4 significant digits).
  CHECK(format_token_count(1100100000000LL) == "1100100000000");
  CHECK(format_token_count(123450000) == "123450000");
  CHECK(format_token_count(12340000) == "12.34M");  // 4 digits are enough: unchanged
  CHECK(format_token_count(5120000) == "5.12M");
  for (long long tokens : {1100100000000LL, 123450000LL, 999990000LL, 1234500LL, 100000000000LL}) {
    CAPTURE(tokens);
    CHECK(parse_token_count(format_token_count(tokens)) == tokens);
  }
}

TEST_CASE("fuzz regressions: message-size ranges beyond 2^63 bytes are refused, not made negative") {
  // 8:16000000001G doubles past 2^63 bytes; llround made those sizes negative. Sizes over 1 PiB are refused now.
  CHECK_THROWS_WITH_AS(parse_message_sizes("8:16000000001G"),
                       "a message of '16000000001G' is more than treering takes (1 PiB)", std::invalid_argument);
  const std::vector<double> sizes = parse_message_sizes("8:1024T");
  REQUIRE(!sizes.empty());
  CHECK(sizes.front() == 8);
  for (double bytes : sizes) CHECK(bytes > 0);
  CHECK(sizes.back() == 1125899906842624.0);  // 2^50
}
