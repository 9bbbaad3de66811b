// Inputs the fuzz targets (validate/fuzz, scripts/fuzz.sh) found, kept so that the bugs stay fixed. Each file of
// validate/tests/fuzz-regressions/ is read as its fuzz target reads it and must end in a clean InputError naming
// the file (not a nlohmann::json exception, not undefined behaviour, not a measurement that breaks the readers'
// own rules):
//   collective/  read_collective_measurements (nccl-tests logs, CSVs, realrun bench JSON)
//   decode/      is_decode_file and read_decode_measurements (realrun decode JSON)
//   attention/   is_attention_file and read_attention_measurements (realrun bench attention JSON)
//   engine/      is_engine_benchmark_file and read_engine_run (vLLM latency JSON)
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"
#include "treering/validate/compute_fit.hpp"
#include "treering/validate/decodes.hpp"
#include "treering/validate/engine_runs.hpp"
#include "treering/validate/measurements.hpp"

namespace fs = std::filesystem;
using namespace treering;

namespace {

std::vector<fs::path> files_in(const std::string& kind) {
  const fs::path directory = fs::path(TREERING_SOURCE_DIR) / "validate" / "tests" / "fuzz-regressions" / kind;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "" when `read` throws an InputError naming `path` and saying something; else what went wrong.
std::string unclean(const std::string& path, const std::function<void()>& read) {
  try {
    read();
  } catch (const topologies::InputError& error) {
    if (error.location().file != path) return "the InputError names " + error.location().file;
    if (error.message().empty()) return "the InputError says nothing";
    return "";
  } catch (const std::exception& error) {
    return std::string("not an InputError: ") + error.what();
  }
  return "no error";
}

// Each known file must give an InputError whose message contains this.
void check_messages(const std::vector<fs::path>& files, const std::map<std::string, std::string>& expected,
                    const std::function<void(const std::string&)>& read) {
  CHECK(files.size() >= expected.size());
  for (const auto& entry : expected) {  // not a structured binding: clang 14 cannot capture one in CAPTURE
    const std::string& name = entry.first;
    const std::string& part = entry.second;
    CAPTURE(name);
    const fs::path file = files.empty() ? fs::path() : files.front().parent_path() / name;
    try {
      read(file.string());
      FAIL("no error");
    } catch (const topologies::InputError& error) {
      CHECK(error.message().find(part) != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("fuzz regressions: collective measurement files end in a clean InputError") {
  const std::vector<fs::path> files = files_in("collective");
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    CHECK(unclean(file.string(), [&] { validate::read_collective_measurements(file.string()); }) == "");
  }
  check_messages(files,
                 {{"bench-number-overflow.json", "not valid JSON"},         // out_of_range.406, not a parse_error
                  {"bench-ranks-1e10.json", "whole number of ranks >= 2"},  // get<int>() of 1e10: undefined behaviour
                  {"bench-ranks-negative.json", "whole number of ranks >= 2"},
                  {"bench-wrong-type.json", "wrong type"},                // json::type_error escaped
                  {"csv-subnormal-time.csv", "a time must be positive"},  // 2^-1074 us is 0 s
                  {"nccl-log-subnormal-time-found.log", "a time must be positive"}},
                 [](const std::string& path) { validate::read_collective_measurements(path); });
}

TEST_CASE("fuzz regressions: decode files end in a clean InputError") {
  const std::vector<fs::path> files = files_in("decode");
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    CHECK_NOTHROW(validate::is_decode_file(file.string()));
    CHECK(unclean(file.string(), [&] { validate::read_decode_measurements(file.string()); }) == "");
  }
  check_messages(files,
                 {{"number-overflow-found.json", "not valid JSON"},
                  {"seq-len-number-overflow.json", "not valid JSON"},
                  {"batch-1e10.json", "'batch' must be a whole number >= 1"},
                  {"seq-len-1e30.json", "'seq_len' must be a whole number >= 1"},
                  {"ranks-minus-1e12.json", "'ranks' must be a whole number >= 1"}},
                 [](const std::string& path) { validate::read_decode_measurements(path); });
}

TEST_CASE("fuzz regressions: attention bench files end in a clean InputError") {
  const std::vector<fs::path> files = files_in("attention");
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    CHECK_NOTHROW(validate::is_attention_file(file.string()));
    CHECK(unclean(file.string(), [&] { validate::read_attention_measurements(file.string()); }) == "");
  }
  // bench-a-number-found.json: is_attention_file's value("bench", "") threw json::type_error on a number (CI fuzzing)
  check_messages(files,
                 {{"tokens-1e30.json", "'tokens' must be a whole number >= 1"},
                  {"bench-a-number-found.json", "no attention results"}},
                 [](const std::string& path) { validate::read_attention_measurements(path); });
}

TEST_CASE("fuzz regressions: engine benchmark files end in a clean InputError") {
  const std::vector<fs::path> files = files_in("engine");
  for (const fs::path& file : files) {
    CAPTURE(file.filename().string());
    CHECK_NOTHROW(validate::is_engine_benchmark_file(file.string()));
    CHECK(unclean(file.string(), [&] { validate::read_engine_run(file.string()); }) == "");
  }
  check_messages(files,
                 {{"batch-1e30.json", "'batch_size' must be a whole number >= 1"},  // get<int>() of 1e30: undefined
                  {"latencies-a-number.json", "not a vLLM or trtllm-bench file"},   // a number iterates as itself
                  {"args-a-list.json", "the settings (batch_size"},
                  {"serve-tp-not-a-number.json", "'tp' must be a whole number, got \"2x\""}},
                 [](const std::string& path) { validate::read_engine_run(path); });
}
