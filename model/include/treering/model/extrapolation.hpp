// Where a prediction leaves what its cluster's calibration measured. A calibrated model is trusted inside the
// sizes its measurements covered; outside them (a ring block four times the largest send measured, a shard of
// more tokens than any attention kernel timed, more ranks than any collective ran on), or where the plan uses
// something the calibration did not measure at all (sends priced from an all-reduce fit), it extrapolates, and
// every command that predicts says so. A cluster without a calibration is nominal throughout (its summary says
// so); nothing is listed for it. Pure.
//
// What is compared: the tokens of every non-empty shard and ring block with provenance.tokens; every send's
// bytes (ring blocks: tokens x K/V bytes per token; tree-lse's states) with provenance.p2p_sizes, per tier the
// pair crosses; every collective's bytes and ranks with provenance.sizes and provenance.ranks.
// Example: a cluster calibrated on sends of 8 B-16 MiB, a ring of 2 ranks at 8,000 tokens of paper-mha16 (16-bit):
// blocks of 4,000 x 8 KiB = 32.8 MB -> "sends inside a domain of up to 32.77 MB, outside the measured 8 B-16.78 MB".
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "treering/model/plan.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::model {

// The reasons, each a short phrase; empty when the plan stays inside the calibration, or the cluster has none.
std::vector<std::string> extrapolations(const topologies::Topology& topology, const DecodePlan& plan);

// The same reasons by the part of the prediction they concern: the attention's (compute) and the sends' and
// collectives' (communication), with the sizes of the plan's collectives (none: it runs none).
struct ExtrapolationParts {
  std::vector<std::string> compute, communication;
  std::optional<std::pair<double, double>> collective_bytes;  // smallest, largest
};
ExtrapolationParts extrapolation_parts(const topologies::Topology& topology, const DecodePlan& plan);

// What a plan uses that a calibration should measure, to be timed at those very sizes (treering-realrun bench
// --for-plan): the distinct token counts of its attention kernels (shards and ring blocks), the bytes of its
// point-to-point sends (ring blocks, tree-lse's states) and of its collectives, by operation.
// Example: tree and ring at 8,000 tokens on 2 ranks, paper-mha16: tokens {4000}; sends {32,768,000 B};
// all-reduces {64 B (16 fp32 statistics), 4,096 B (o in 16-bit)}.
struct PlanMeasures {
  std::set<long long> tokens;
  std::set<double> send_bytes;
  std::map<CollectiveOp, std::set<double>> collective_bytes;
};
void add_measures(const DecodePlan& plan, PlanMeasures& measures);

// The same for collectives of `low_bytes` to `high_bytes` over `ranks` GPUs (a step's TP all-reduces and
// all-gathers): outside the measured sizes or rank counts, or no collective measured. Example: a calibration of
// 8-rank all-reduces from 8 B to 8 GiB, TP 16's all-reduces of 32 KiB -> "collectives over 16 ranks outside the
// measured 8-8".
std::vector<std::string> collective_extrapolations(const topologies::Topology& topology, double low_bytes,
                                                   double high_bytes, int ranks);

// The reasons joined with "; ".
std::string join_reasons(const std::vector<std::string>& reasons);

}  // namespace treering::model
