// Shared by the phase evaluators of DecodeModel::evaluate. Private to the model module.
#pragma once

#include <string>
#include <vector>

#include "treering/model/decode.hpp"

namespace treering::model::detail {

struct Context {
  const DecodeModel& model;
  const DecodePlan& plan;
  DecodeResult& result;
  std::vector<double> sent;  // bytes sent per rank
  int ranks() const { return static_cast<int>(plan.gpus.size()); }
};

void add_communication(Context& c, const std::string& label, double time_s, bool inter_node, const std::string& how);
void add_compute(Context& c, const std::string& label, double time_s);
void count_send(Context& c, int from, int to, double bytes);

void evaluate_ring(Context& c, const Phase& phase);

}  // namespace treering::model::detail
