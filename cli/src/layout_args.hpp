// --tp, --cp, --placement, --tp-in-domain, --scope: the decode layout predict and simulate work on.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "decode_output.hpp"
#include "treering/model/layout_model.hpp"

namespace treering::cli {

struct LayoutArgs {
  std::optional<int> tp;
  std::optional<int> cp;
  std::string placement = "tp-inner";
  bool tp_in_domain = false;
  std::string scope = "attention";
};
void add_layout_options(CLI::App& command, LayoutArgs& args);

// The layout on the GPUs of --gpus (all when empty): --tp and --cp as given; one of them alone takes the rest
// of the GPUs for the other; neither: tp 1 over all of them (the K/V split over every GPU, as the paper runs it).
model::LayoutGroups layout_groups(const LayoutArgs& args, const topologies::Topology& topology, const std::vector<int>& gpus);

// --scope layer|step: the whole layer or step around the row's attention (row.result: CP group
// `slowest_group`'s, the slowest), in row.step; throws std::invalid_argument when it does not fit in memory.
void add_step(const LayoutArgs& args, const model::LayoutModel& layouts, const model::Workload& workload, int slowest_group,
              DecodeRow& row);

}  // namespace treering::cli
