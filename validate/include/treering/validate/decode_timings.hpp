// Timed decodes, to fit an implementation profile's overheads to (overhead_fit.hpp): what ran, on what, and how
// long it took. Two sources: a CSV a person writes by hand from any benchmark's output, and treering-realrun's
// decode JSON (one layer's decode step per result).
//
// The CSV: a header line `cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s`, then one row per
// timing; lines starting with '#' are comments. Example, the paper's Llama run timed on 8 H100:
//   cluster,workload,algo,gpus,seq_len,batch,tokens,prefill,measured_s
//   dgx-h100,llama3.1-8b,ring,8,20k,1,10,true,0.61
// cluster: a preset or a cluster YAML file; the GPUs are 0 .. gpus-1, with nodes added when one is too few.
// workload: a preset or a workload YAML file. seq_len: the prompt length (80000, 80k). batch: 0 means the
// workload's. tokens: tokens generated in the timed region (>= 1). prefill: whether the prompt's prefill is timed
// too (true/false). measured_s: seconds, > 0. Errors are InputError "FILE:LINE: error: ...".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "treering/validate/decodes.hpp"

namespace treering::validate {

struct TimedDecode {
  std::string cluster;    // a preset name or a cluster file
  std::string workload;   // a preset name or a workload file
  std::string algorithm;  // ring, tree, ...
  int gpus = 0;           // GPUs 0 .. gpus-1
  long long seq_len = 0;
  int batch = 0;                    // 0: the workload's
  std::optional<long long> tokens;  // tokens generated in the timed region; none: one layer's decode step
  bool prefill = false;             // the prefill is inside the timed region
  double measured_s = 0;
  std::string file;
  int line = 0;
};

// True when the file's first line that is not a comment is the CSV header above.
bool is_decode_timings_csv(const std::string& path);

// Throws topologies::InputError for an unreadable file, a wrong header, a malformed row or no rows.
std::vector<TimedDecode> read_decode_timings_csv(const std::string& path);

// realrun decode results as timings of one layer's decode step on `cluster`.
std::vector<TimedDecode> timings_of(const std::vector<DecodeMeasurement>& measured, const std::string& cluster);

}  // namespace treering::validate
