// The decode algorithms as one table. Everything that differs between them is a field of their descriptor: the
// name, whether the paper compares it, where it leaves the output, the phases of its combine, the buffers it needs
// and its help line. Plans, memory, outputs, help texts and parsing read the table; the executors (model, sim,
// realrun) run a plan's phases by their kind and role and never ask which algorithm made them.
// Adding an algorithm is one descriptor here (decode_algorithms.cpp) plus, if it needs one, a new phase role and
// its kernels. Pure.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "treering/model/plan.hpp"

namespace treering::model {

// What a phase builder gets: the plan's workload and sizes, the number of ranks (2 or more: one rank has nothing to
// combine), the element sizes of the statistics and of travelling partial outputs, which scale-up domain each rank
// sits in, and the options it was asked for.
struct PhaseInputs {
  const Workload& workload;
  const PlanSizes& sizes;
  int ranks = 2;
  int stats_element_bytes = 4;
  int o_element_bytes = 2;
  const std::vector<int>& domain_of_rank;
  const PlanOptions& options;
};

// Per rank, beyond the KV cache, q, o and lse (which every algorithm holds): the combine's workspace and the
// buffers that receive a block while another is in use.
struct CombineBuffers {
  double workspace_bytes = 0;
  double receive_bytes = 0;
};

struct DecodeAlgorithmInfo {
  DecodeAlgorithm id = DecodeAlgorithm::tree;
  const char* name = "";
  bool in_paper = false;  // the paper's comparison: what predict, simulate and the main job run by default
  OutputSplit output_split = OutputSplit::replicated;
  std::vector<Phase> (*phases)(const PhaseInputs&) = nullptr;  // the combine on 2 or more ranks, in order
  CombineBuffers (*buffers)(const DecodePlan&, long long largest_shard_tokens) = nullptr;
  const char* help = "";  // one line: what it sends and where the output ends
};

// The table, in DecodeAlgorithm's order (checked at compile time).
inline constexpr std::size_t kDecodeAlgorithmCount = 8;
std::span<const DecodeAlgorithmInfo> decode_algorithm_table();
// The descriptor of `algorithm`; throws std::logic_error for a value outside the table.
const DecodeAlgorithmInfo& algorithm_info(DecodeAlgorithm algorithm);
// A plan's descriptor: plan.info, or for a plan put together by hand (no info) its algorithm's in the table.
const DecodeAlgorithmInfo& algorithm_info(const DecodePlan& plan);
// "ring, tree, ...": the table's names, for help texts and error messages; with `paper` true only the paper's
// (in_paper), false only the others.
std::string decode_algorithm_names();
std::string decode_algorithm_names(bool paper);
// Every algorithm's name and help line, one a line ("  tree-fused       the tree with ..."), for --help.
std::string decode_algorithm_help();

// A plan of the algorithm `algorithm` describes: make_plan (plan.hpp) with any descriptor, the table's or one of
// the caller's own (a test's toy algorithm). The descriptor must outlive the plan (plan.info points at it).
DecodePlan make_plan(const DecodeAlgorithmInfo& algorithm, const Workload& workload, long long seq_len,
                     std::vector<int> gpus, const std::vector<int>& domain_of_rank, const PlanOptions& options = {});

}  // namespace treering::model
