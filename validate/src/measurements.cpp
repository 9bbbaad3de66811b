// Reading nccl-tests logs and the project's CSVs (measurements.hpp).
#include "treering/validate/measurements.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

#include "treering/topologies/input_error.hpp"
#include "json_files.hpp"

namespace treering::validate {
namespace {

using topologies::InputError;

struct Row {
  double bytes = 0, time_us = 0, algbw = 0, busbw = 0;
  int line = 0;
};

std::vector<std::string> split(std::string text, char separator) {
  if (separator != ' ') {
    for (char& c : text) c = c == separator ? ' ' : c;
  }
  std::istringstream in(text);
  std::vector<std::string> fields;
  for (std::string field; in >> field;) fields.push_back(field);
  return fields;
}

double number(const std::string& text, const std::string& file, int line, const char* what) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value) && value >= 0) return value;
  } catch (const std::exception&) {}
  throw InputError({file, line, 0}, std::string("'") + text + "' is not a valid " + what);
}

// nccl-tests' binaries, as its "# Collective test starting: NAME" line names them.
std::optional<model::CollectiveOp> op_of_binary(const std::string& name) {
  static const std::pair<const char*, model::CollectiveOp> kBinaries[] = {
      {"all_reduce_perf", model::CollectiveOp::allreduce},
      {"all_gather_perf", model::CollectiveOp::allgather},
      {"reduce_scatter_perf", model::CollectiveOp::reduce_scatter},
      {"broadcast_perf", model::CollectiveOp::broadcast},
      {"sendrecv_perf", model::CollectiveOp::sendrecv},
      {"alltoall_perf", model::CollectiveOp::alltoall}};
  for (const auto& [binary, op] : kBinaries) {
    if (name == binary) return op;
  }
  return std::nullopt;
}

// busbw / algbw -> the op; `ranks` known. A log's redop and root columns tell apart the ops with one bus
// factor: (n-1)/n is reduce-scatter with a reduction, all-gather or all-to-all without one (which of the two,
// only the file can say); 1 is broadcast with a root, send/recv without.
model::CollectiveOp op_of(double ratio, int ranks, const std::string& redop, const std::string& root,
                          const std::string& file, int line) {
  const double n = ranks;
  const bool reduces = !redop.empty() && redop != "none";
  auto unclear = [&](const char* which) {
    return InputError({file, line, 0}, std::string("busbw / algbw = ") + std::to_string(ratio) + " on " +
                                           std::to_string(ranks) + " ranks is " + which +
                                           ": say which with '# op: NAME'");
  };
  if (std::abs(ratio - 2 * (n - 1) / n) < 0.02) return model::CollectiveOp::allreduce;
  if (std::abs(ratio - (n - 1) / n) < 0.02) {
    if (reduces) return model::CollectiveOp::reduce_scatter;
    throw unclear(redop.empty() ? "all-gather, reduce-scatter or all-to-all"
                                : "all-gather or all-to-all (no reduction)");
  }
  if (std::abs(ratio - 1.0) < 0.02) {
    if (root.empty()) throw unclear("broadcast or send/recv");
    return root == "-1" ? model::CollectiveOp::sendrecv : model::CollectiveOp::broadcast;
  }
  throw InputError({file, line, 0}, "busbw / algbw = " + std::to_string(ratio) + " fits no collective on " +
                                        std::to_string(ranks) + " ranks (give '# op:' and '# ranks:')");
}

struct Parsed {
  std::vector<Row> rows;
  int ranks = 0;
  std::string op;            // "" when not given
  std::string redop, root;   // a log's columns, from its first row
  std::string nccl_release;  // "2.26.6" or ""
  bool log = false, csv = false;
};

// "2.26.6" from a line that names the NCCL release that ran, else "": a header line that starts with it
// ("# NCCL version 2.26.6+cuda12.8", "# nccl version: NCCL 2.29.7+cuda12.9"), NCCL's own INFO line
// ("host:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.2"), or nccl-tests' "nccl-library=22606".
std::string nccl_release_of(const std::string& line) {
  static const std::regex kPrinted(
      R"(^#?\s*(?:\S+\s+\[\d+\]\s+NCCL INFO\s+)?NCCL version:?\s*(?:NCCL\s+)?(2\.\d{1,3}\.\d{1,3})(?![\d.]))",
      std::regex::icase);
  static const std::regex kLibrary(R"(nccl-library=2(\d\d)(\d\d)\b)");
  std::smatch match;
  if (std::regex_search(line, match, kPrinted)) return match[1];
  if (std::regex_search(line, match, kLibrary))
    return "2." + std::to_string(std::stoi(match[1])) + "." + std::to_string(std::stoi(match[2]));
  return "";
}

// NCCL's own log lines (NCCL_DEBUG=INFO or WARN) among nccl-tests' output: "host:pid:tid [dev] NCCL INFO ...".
bool nccl_log_line(const std::string& text) {
  static const std::regex kNcclLog(R"(^\S+\s+\[\d+\]\s+NCCL (?:INFO|WARN|TRACE)\b)");
  return std::regex_search(text, kNcclLog);
}

void parse_comment(const std::string& text, int line, const std::string& file, Parsed& p) {
  if (p.nccl_release.empty()) p.nccl_release = nccl_release_of(text);
  const auto fields = split(text.substr(1), ' ');
  if (fields.size() >= 2 && fields[0] == "Rank") ++p.ranks;
  if (fields.size() >= 2 && fields[0] == "ranks:") {
    const double ranks = number(fields[1], file, line, "number of ranks");
    if (ranks != std::floor(ranks) || ranks > 1e7)
      throw InputError({file, line, 0}, "'" + fields[1] + "' is not a number of ranks");
    p.ranks = static_cast<int>(ranks);
  }
  if (fields.size() >= 4 && fields[0] == "Collective" && fields[1] == "test" && fields[2] == "starting:") {
    const auto op = op_of_binary(fields[3]);
    if (op) p.op = model::to_string(*op);
  }
  if (fields.size() >= 2 && fields[0] == "op:") {
    try {
      model::parse_collective_op(fields[1]);
    } catch (const std::invalid_argument& error) {
      throw InputError({file, line, 0}, error.what());
    }
    p.op = fields[1];
  }
}

void parse_row(const std::string& text, int line, const std::string& file, Parsed& p) {
  const bool comma = text.find(',') != std::string::npos;
  const auto fields = split(text, comma ? ',' : ' ');
  if (comma) {
    if (fields.size() != 5)
      throw InputError(
          {file, line, 0},
          "expected 5 comma-separated values (bytes,time_us_outofplace,algbw_GBps,busbw_GBps,time_us_inplace), got " +
              std::to_string(fields.size()));
    p.csv = true;
    p.rows.push_back({number(fields[0], file, line, "size"),
                      std::min(number(fields[1], file, line, "time"), number(fields[4], file, line, "time")),
                      number(fields[2], file, line, "algbw"), number(fields[3], file, line, "busbw"), line});
    return;
  }
  if (fields.size() != 13)
    throw InputError({file, line, 0},
                     "expected an nccl-tests row of 13 columns (size count type redop root time algbw busbw #wrong "
                     "time algbw busbw #wrong), got " +
                         std::to_string(fields.size()));
  p.log = true;
  if (p.redop.empty()) p.redop = fields[3], p.root = fields[4];
  p.rows.push_back({number(fields[0], file, line, "size"),
                    std::min(number(fields[5], file, line, "time"), number(fields[9], file, line, "time")),
                    number(fields[6], file, line, "algbw"), number(fields[7], file, line, "busbw"), line});
}

// treering-realrun's `bench allreduce|allgather|sendrecv -o FILE.json`: per size the median of the slowest rank.
std::vector<CollectiveMeasurement> read_realrun_bench(std::istream& in, const std::string& path) {
  const nlohmann::json json = detail::parse_json(in, path);
  try {
    auto field = [&](const nlohmann::json& object, const char* key) -> const nlohmann::json& {
      if (!object.is_object() || !object.contains(key))
        throw InputError({path, 0, 0}, std::string("missing '") + key + "' (not a treering-realrun bench file?)");
      return object.at(key);
    };
    const std::string bench = field(json, "bench").get<std::string>();
    model::CollectiveOp op = model::CollectiveOp::sendrecv;
    if (bench == "allreduce")
      op = model::CollectiveOp::allreduce;
    else if (bench == "allgather")
      op = model::CollectiveOp::allgather;
    else if (bench != "sendrecv")
      throw InputError({path, 0, 0}, "'" + bench + "' results are not collective measurements");
    // Checked as a double before it becomes an int (get<int>() of 1e10 is undefined behaviour); at least 2, as in a
    // log.
    const double ranks_given = field(field(json, "provenance"), "ranks").get<double>();
    if (!(ranks_given >= 2 && ranks_given <= 1e7) || ranks_given != std::floor(ranks_given)) {
      throw InputError({path, 0, 0}, "a collective needs a whole number of ranks >= 2, the provenance says " +
                                         field(json, "provenance").at("ranks").dump());
    }
    const int ranks = static_cast<int>(ranks_given);
    std::optional<model::CollectiveAlgorithm> algorithm;  // the cpu backend runs rings (and p2p for send/recv)
    if (json.contains("algorithm") && json["algorithm"].is_string()) {
      try {
        algorithm = model::parse_collective_algorithm(json["algorithm"].get<std::string>());
      } catch (const std::invalid_argument& error) {
        throw InputError({path, 0, 0}, error.what());
      }
    }
    std::vector<CollectiveMeasurement> out;
    for (const nlohmann::json& row : field(json, "results")) {
      const double bytes = field(row, "size_bytes").get<double>();
      const double time_s = field(field(row, "time_s"), "median").get<double>();
      if (!(bytes >= 0) || !(time_s > 0)) throw InputError({path, 0, 0}, "a size must be >= 0 and a time > 0");
      // A ring of send/recv: each rank to the next, as realrun's sendrecv bench (2 ranks: one pair).
      out.push_back({op, bytes, op == model::CollectiveOp::sendrecv ? 2 : ranks, time_s, path, 0, algorithm, ""});
    }
    if (out.empty()) throw InputError({path, 0, 0}, "no results");
    return out;
  } catch (const nlohmann::json::type_error& error) {  // e.g. "bench": 5
    throw InputError({path, 0, 0}, std::string("a field has the wrong type: ") + error.what());
  }
}

}  // namespace

std::vector<CollectiveMeasurement> read_collective_measurements(const std::string& path) {
  topologies::check_input_file(path);
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "cannot read the file");
  in >> std::ws;
  if (in.peek() == '{') return read_realrun_bench(in, path);
  Parsed p;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const size_t start = text.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    if (text[start] == '#') {
      parse_comment(text.substr(start), line, path, p);
      continue;
    }
    if (line == 1 && text.rfind("bytes,", start) == start) continue;  // a CSV header without '#'
    if (nccl_log_line(text.substr(start))) {
      if (p.nccl_release.empty()) p.nccl_release = nccl_release_of(text.substr(start));
      continue;
    }
    parse_row(text.substr(start), line, path, p);
  }
  if (p.rows.empty()) throw InputError({path, 0, 0}, "no measurements: not nccl-tests output nor a bytes,time CSV");
  if (p.log && p.csv) throw InputError({path, 0, 0}, "mixes nccl-tests rows and CSV rows");
  const Row& largest = p.rows.back();
  if (p.ranks == 0) {  // a CSV without '# ranks:': from the all-reduce bus factor 2 (n-1)/n
    const double ratio = largest.algbw > 0 ? largest.busbw / largest.algbw : 0;
    if (!(ratio > 1.0 && ratio < 2.0))
      throw InputError({path, largest.line, 0}, "cannot tell the ranks: add '# ranks: N'");
    p.ranks = static_cast<int>(std::lround(2.0 / (2.0 - ratio)));
  }
  if (p.ranks < 2)
    throw InputError({path, 0, 0}, "a collective needs at least 2 ranks, the file says " + std::to_string(p.ranks));
  const model::CollectiveOp op = p.op.empty() ? op_of(largest.algbw > 0 ? largest.busbw / largest.algbw : 0, p.ranks,
                                                      p.redop, p.root, path, largest.line)
                                              : model::parse_collective_op(p.op);
  std::vector<CollectiveMeasurement> out;
  for (const Row& row : p.rows) {
    const double time_s = row.time_us * 1e-6;  // checked after the conversion: a subnormal time in us is 0 s
    if (!(time_s > 0)) throw InputError({path, row.line, 0}, "a time must be positive");
    out.push_back({op, row.bytes, p.ranks, time_s, path, row.line, std::nullopt, p.nccl_release});
  }
  return out;
}

}  // namespace treering::validate
