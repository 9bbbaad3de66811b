// treering crossover --vs tp: where context parallelism (the planner's best tp x cp layout and combine with
// cp > 1) starts to beat plain tensor parallelism (its best cp = 1 layout), by context length and batch, in
// time per output token (model::plan_deployment).
#pragma once

#include <string>
#include <vector>

#include "treering/topologies/settings.hpp"

namespace treering::cli {

struct CpVsTpRequest {
  std::string cluster;
  std::vector<int> nodes;
  std::vector<topologies::Setting> settings;
  std::string workload;
  std::vector<int> batches;  // empty: the workload's
  std::vector<long long> seq_lens;
  std::vector<std::string> combines;  // empty: all
  std::string impl;
  std::string format;  // table | csv | json
};

void print_cp_vs_tp(const CpVsTpRequest& request);

}  // namespace treering::cli
