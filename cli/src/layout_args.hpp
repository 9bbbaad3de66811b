// --tp, --cp, --placement, --tp-in-domain, --scope: the decode layout predict and simulate work on.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "treering/model/layout.hpp"

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

}  // namespace treering::cli
