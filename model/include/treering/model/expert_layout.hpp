// Expert parallelism in a decode layout (layout.hpp): the MoE layers' routed experts spread over `ep` GPUs (the
// layout's GPUs, replicas included), each MoE layer's tokens exchanged by a dispatch and a combine (moe_exchange.hpp)
// that `kernel` runs. Pure data.
#pragma once

#include <string>

namespace treering::model {

enum class EpKernel { nccl, low_latency, normal };
const char* to_string(EpKernel kernel);             // "nccl" | "low-latency" | "normal"
EpKernel parse_ep_kernel(const std::string& text);  // throws InputError naming the kernels

struct ExpertLayout {
  int ep = 1;                               // 1: no expert parallelism (the experts split over the TP group)
  EpKernel kernel = EpKernel::low_latency;  // what moves the tokens
  int redundant_experts = 0;                // replicas of the hottest experts (ExpertPlacement)
  double skew = 1;                          // what-if: the hottest expert's draw over the mean expert's
  int micro_batches = 1;                    // 2: one micro-batch's exchanges overlap the other's compute
  std::string dispatch_dtype = "fp8";       // fp8 (with its scales) | bf16
  std::string combine_dtype = "bf16";
};

}  // namespace treering::model
