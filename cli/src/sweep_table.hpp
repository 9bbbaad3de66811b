// A sweep's rows as a table for people: latency per engine side by side, the speedup over ring, the volume per
// tier and the peak memory; with a layout (--tp, --cp, --replicas, --placement) a layout column, with --scope
// layer|step the layer's or the step's time per engine.
#pragma once

#include <ostream>
#include <vector>

#include "treering/analysis/decode_output.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results

void print_sweep_table(std::ostream& out, const std::vector<DecodeRow>& rows);

}  // namespace treering::cli
