#include "moe_command.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_choices.hpp"
#include "treering/realrun/moe_run.hpp"

namespace treering::realrun::app {
namespace {

// A run and its reference sum the same values in the same order: they agree to the bit; this leaves room for a
// compiler that contracts a multiply-add differently in the two (float32: 1e-6 of the largest value).
constexpr double kTolerance = 1e-6;

struct Gathered {  // rank 0: one value per rank
  std::vector<double> copies, destinations, dispatch_bytes, combine_bytes, dispatch_s, experts_s, combine_s, error;
};

Gathered gather(const MoeRankResult& r, MpiTransport& transport) {
  return {transport.gather(static_cast<double>(r.copies_sent)),
          transport.gather(r.destination_ranks_per_token),
          transport.gather(r.dispatch_bytes),
          transport.gather(r.combine_bytes),
          transport.gather(r.dispatch_s),
          transport.gather(r.experts_s),
          transport.gather(r.combine_s),
          transport.gather(r.max_relative_error)};
}

void print_table(const MoeOptions& options, const MoeShape& shape, int ranks, const Gathered& g, bool passed) {
  std::printf(
      "MoE layer of %s (%d experts, top %d%s, %d shared) at hidden %d x %d, float32, over %d rank(s), %d "
      "token(s) a rank\n\n",
      options.workload.c_str(), shape.experts, shape.top_k,
      shape.groups > 1
          ? (" from " + std::to_string(shape.groups_per_token) + " of " + std::to_string(shape.groups) + " groups")
                .c_str()
          : "",
      shape.shared_experts, shape.hidden, shape.intermediate, ranks, options.batch);
  std::printf(
      "rank  copies  ranks/token  dispatch bytes  combine bytes  dispatch   experts    combine    max rel error\n");
  for (std::size_t r = 0; r < g.copies.size(); ++r) {
    std::printf("%4zu  %6.0f  %11.2f  %14.0f  %13.0f  %7.1f us  %7.1f us  %7.1f us  %.2e\n", r, g.copies[r],
                g.destinations[r], g.dispatch_bytes[r], g.combine_bytes[r], g.dispatch_s[r] * 1e6, g.experts_s[r] * 1e6,
                g.combine_s[r] * 1e6, g.error[r]);
  }
  std::printf("\ncheck: %s (every rank's outputs against the one-rank reference of the layer, tolerance %.0e)\n",
              passed ? "passed" : "FAILED", kTolerance);
}

void print_json(const MoeOptions& options, const MoeShape& shape, const Gathered& g, bool passed) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < g.copies.size(); ++r) {
    ranks.push_back({{"rank", r},
                     {"copies_sent", g.copies[r]},
                     {"destination_ranks_per_token", g.destinations[r]},
                     {"dispatch_bytes", g.dispatch_bytes[r]},
                     {"combine_bytes", g.combine_bytes[r]},
                     {"dispatch_s", g.dispatch_s[r]},
                     {"experts_s", g.experts_s[r]},
                     {"combine_s", g.combine_s[r]},
                     {"max_relative_error", g.error[r]}});
  }
  const nlohmann::ordered_json json = {{"workload", options.workload},
                                       {"experts", shape.experts},
                                       {"top_k", shape.top_k},
                                       {"groups", shape.groups},
                                       {"groups_per_token", shape.groups_per_token},
                                       {"hidden", shape.hidden},
                                       {"intermediate", shape.intermediate},
                                       {"tokens_per_rank", options.batch},
                                       {"dtype", "fp32"},
                                       {"passed", passed},
                                       {"tolerance", kTolerance},
                                       {"ranks", ranks}};
  std::printf("%s\n", json.dump(2).c_str());
}

}  // namespace

int run_moe(const MoeOptions& options, MpiTransport& transport) {
  if (options.backend != model::RealrunBackend::cpu) throw topologies::InputError(kMoeNeedsCpu);
  if (options.format != "table" && options.format != "json")
    throw topologies::InputError("--format: table or json, not " + options.format);
  const MoeShape shape = moe_shape(workload_named(options.workload), options.hidden, options.intermediate);
  const MoeRankResult result = run_moe_layer(transport, shape, options.batch, options.seed);
  const Gathered gathered = gather(result, transport);
  const bool passed = transport.max_over_ranks(result.max_relative_error) <= kTolerance;
  if (transport.rank() == 0) {
    if (options.format == "json") {
      print_json(options, shape, gathered, passed);
    } else {
      print_table(options, shape, transport.ranks(), gathered, passed);
    }
  }
  return passed ? 0 : 1;
}

}  // namespace treering::realrun::app
