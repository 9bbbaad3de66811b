// --tp, --cp, --placement, --tp-in-domain, --scope: the decode layout predict and simulate work on.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "treering/analysis/decode_cases.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results

using LayoutArgs = LayoutChoice;  // decode_cases.hpp
void add_layout_options(CLI::App& command, LayoutArgs& args);

}  // namespace treering::cli
