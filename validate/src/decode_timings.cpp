// Reading timed decodes (decode_timings.hpp).
#include "treering/validate/decode_timings.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "csv_fields.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"

namespace treering::validate {
namespace {

using detail::fields_of;
using detail::seconds;
using detail::trimmed;
using detail::whole;
using topologies::InputError;

constexpr const char* kHeader = "cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s";

bool yes_no(const std::string& text, const topologies::InputLocation& where) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  throw InputError(where, "prefill must be true or false, got '" + text + "'");
}

TimedDecode row_of(const std::vector<std::string>& f, const std::string& path, int line) {
  const topologies::InputLocation where{path, line, 0};
  if (f.size() != 9)
    throw InputError(where, "expected 9 fields (" + std::string(kHeader) + "), got " + std::to_string(f.size()));
  for (int i : {0, 1, 2}) {
    if (f[static_cast<size_t>(i)].empty())
      throw InputError(where, "empty " + std::string(i == 0 ? "cluster" : i == 1 ? "workload" : "algo"));
  }
  TimedDecode t;
  t.cluster = f[0];
  t.workload = f[1];
  t.algorithm = f[2];
  t.gpus = static_cast<int>(whole(f[3], 1, 1000000, where, "gpus"));
  try {
    t.seq_len = topologies::parse_token_count(f[4]);
  } catch (const std::exception& error) {
    throw InputError(where, std::string("seq_len: ") + error.what());
  }
  t.batch = static_cast<int>(whole(f[5], 0, 1000000, where, "batch"));
  t.tokens = whole(f[6], 1, 1000000000000LL, where, "tokens");
  t.prefill = yes_no(f[7], where);
  t.measured_s = seconds(f[8], where, "measured_s");
  t.file = path;
  t.line = line;
  return t;
}

}  // namespace

bool is_decode_timings_csv(const std::string& path) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    return text == kHeader;
  }
  return false;
}

std::vector<TimedDecode> read_decode_timings_csv(const std::string& path) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "cannot open the file");
  std::vector<TimedDecode> rows;
  bool header = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    if (!header) {
      if (text != kHeader) throw InputError({path, number, 0}, "the header must be " + std::string(kHeader));
      header = true;
      continue;
    }
    rows.push_back(row_of(fields_of(text), path, number));
  }
  if (rows.empty()) throw InputError({path, 0, 0}, "no timings (a header line, then one row per timing)");
  return rows;
}

std::vector<TimedDecode> timings_of(const std::vector<DecodeMeasurement>& measured, const std::string& cluster) {
  std::vector<TimedDecode> out;
  for (const DecodeMeasurement& m : measured) {
    TimedDecode t;
    t.cluster = cluster;
    t.workload = m.workload;
    t.algorithm = m.algorithm;
    t.gpus = m.ranks;
    t.seq_len = m.seq_len;
    t.batch = m.batch;
    t.measured_s = m.latency_s;
    t.file = m.file;
    out.push_back(t);
  }
  return out;
}

}  // namespace treering::validate
