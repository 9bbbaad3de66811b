// treering crossover --vs tp: where context parallelism starts to beat plain tensor parallelism, by context length
// and batch, printed as tables (one per GPU count), CSV or JSON. The contests are analysis::run_cp_vs_tp's
// (treering/analysis/crossover_tp.hpp).
#pragma once

#include <string>

#include "reporter.hpp"
#include "treering/analysis/crossover.hpp"

namespace treering::cli {

// request.algorithms: the combines tried (empty: all). Progress lines on stderr with the table format only.
void print_cp_vs_tp(const analysis::CrossoverRequest& request, OutputFormat format);

}  // namespace treering::cli
