// treering tune: the fastest combine strategy for a cluster, workload and context length (model::tune), with
// its gain over the paper's tree and ring, the best few confirmed in the simulator, and where the two engines
// rank them differently.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/model/tune.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

namespace fmt = treering::topologies;

struct TuneArgs : DecodeArgs {
  int top = 10;      // rows shown
  int confirm = 5;   // the best this many replayed in the simulator (plus the paper's tree and ring)
};

struct Confirmed {
  const model::TunedStrategy* tuned;
  double simulated_s;
};

std::string times(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 100 ? "%.0fx" : "%.2fx", ratio);
  return text;
}

double simulate(const topologies::Topology& topology, const std::vector<int>& gpus, const model::Strategy& s,
                const model::Workload& workload, long long seq_len) {
  const model::DecodeModel decode(topology, s.leader == 0 ? gpus : model::rotated_gpus(topology, gpus, s.leader));
  return sim::replay_plan(decode, decode.plan(s.algorithm, workload, seq_len, s.options)).latency_s;
}

// The strategies with equivalents folded into the first of them (same algorithm, latency equal to 1e-9: a
// leader that changes nothing on a symmetric cluster, fan-in 8 in an 8-GPU node = all at once), with their count.
std::vector<std::pair<const model::TunedStrategy*, int>> distinct(const std::vector<model::TunedStrategy>& tuned) {
  std::vector<std::pair<const model::TunedStrategy*, int>> out;
  for (const model::TunedStrategy& t : tuned) {
    if (!out.empty() && out.back().first->strategy.algorithm == t.strategy.algorithm &&
        std::abs(out.back().first->result.latency_s - t.result.latency_s) <= 1e-9 * t.result.latency_s) {
      ++out.back().second;
      continue;
    }
    out.push_back({&t, 0});
  }
  return out;
}

// Pairs of confirmed strategies the two engines order differently.
int discordant_pairs(const std::vector<Confirmed>& confirmed) {
  int count = 0;
  for (size_t i = 0; i < confirmed.size(); ++i) {
    for (size_t j = i + 1; j < confirmed.size(); ++j) {
      const double model_order = confirmed[i].tuned->result.latency_s - confirmed[j].tuned->result.latency_s;
      const double sim_order = confirmed[i].simulated_s - confirmed[j].simulated_s;
      count += model_order * sim_order < 0 ? 1 : 0;
    }
  }
  return count;
}

void run(const TuneArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const model::Workload workload = load_workload(args);
  const std::vector<long long> lengths = fmt::parse_token_counts(args.seq_len);
  if (lengths.size() != 1) throw std::invalid_argument("--seq-len takes one length here");
  const model::PlanOptions options = plan_options(args);
  const std::vector<model::TunedStrategy> tuned = model::tune(topology, workload, lengths[0], args.gpus, options);
  const auto shown = distinct(tuned);
  // Strategies within the best one's band: the model cannot tell them from the best.
  const model::RelativeErrors errors = model::prediction_errors(topology, *options.impl, false);
  std::vector<model::Band> bands;
  for (const auto& [t, equivalents] : shown) bands.push_back(model::latency_band(t->result, errors));
  auto within_best = [&](size_t i) { return model::bands_overlap(bands[i], bands[0]); };
  size_t close = 0;
  for (size_t i = 1; i < shown.size(); ++i) close += within_best(i) ? 1 : 0;
  const model::TunedStrategy* tree = nullptr;
  const model::TunedStrategy* ring = nullptr;
  for (const auto& t : tuned) {
    const bool plain = !t.strategy.options.collective_algorithm && t.strategy.leader == 0;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::tree && !tree) tree = &t;
    if (plain && t.strategy.algorithm == model::DecodeAlgorithm::ring && !ring) ring = &t;
  }
  std::vector<Confirmed> confirmed;
  for (size_t i = 0; i < shown.size() && static_cast<int>(i) < args.confirm; ++i) {
    std::cerr << "simulating " << shown[i].first->strategy.describe() << "...\n";
    confirmed.push_back({shown[i].first, simulate(topology, args.gpus, shown[i].first->strategy, workload, lengths[0])});
  }
  const model::TunedStrategy& best = tuned.front();
  const int swaps = discordant_pairs(confirmed);
  size_t sim_best = 0;
  for (size_t i = 1; i < confirmed.size(); ++i) sim_best = confirmed[i].simulated_s < confirmed[sim_best].simulated_s ? i : sim_best;
  if (args.format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < shown.size(); ++i) {
      const model::TunedStrategy& t = *shown[i].first;
      nlohmann::ordered_json row = {{"rank", i + 1}, {"strategy", t.strategy.describe()}, {"equivalents", shown[i].second},
                                    {"algo", model::to_string(t.strategy.algorithm)}, {"latency_s", t.result.latency_s},
                                    {"latency_s_low", bands[i].low_s},
                                    {"latency_s_high", std::isfinite(bands[i].high_s) ? nlohmann::ordered_json(bands[i].high_s) : nlohmann::ordered_json()},
                                    {"within_best_band", within_best(i)}};
      if (i < confirmed.size()) row["simulated_latency_s"] = confirmed[i].simulated_s;
      rows.push_back(row);
    }
    nlohmann::ordered_json json = {{"best", best.strategy.describe()}, {"best_latency_s", best.result.latency_s},
                                   {"tree_latency_s", tree->result.latency_s}, {"ring_latency_s", ring->result.latency_s},
                                   {"strategies_tried", tuned.size()}, {"within_best_band", close}, {"engines_disagree_pairs", swaps},
                                   {"strategies", rows}};
    std::cout << json.dump(2) << '\n';
    return;
  }
  std::cout << "tune: " << topology.spec().name << ", " << tree->result.gpus << " GPUs, " << workload.name << " (batch " << workload.batch
            << "), " << fmt::format_token_count(lengths[0]) << " tokens: " << tuned.size() << " strategies timed by the model ("
            << shown.size() << " distinct; 'same': equivalents folded in)\n\n";
  Table table({"rank", "strategy", "same", "model", "~best", "simulated", "vs tree", "vs ring"});
  for (size_t i = 0; i < shown.size() && static_cast<int>(i) < args.top; ++i) {
    const double s = shown[i].first->result.latency_s;
    table.add_row({std::to_string(i + 1), shown[i].first->strategy.describe(), shown[i].second ? "+" + std::to_string(shown[i].second) : "",
                   fmt::format_duration(s), i > 0 && within_best(i) ? "~" : "",
                   i < confirmed.size() ? fmt::format_duration(confirmed[i].simulated_s) : "-", times(tree->result.latency_s / s),
                   times(ring->result.latency_s / s)});
  }
  table.print(std::cout);
  std::cout << "\nbest: " << best.strategy.describe() << ", " << fmt::format_duration(best.result.latency_s) << " per layer: "
            << times(tree->result.latency_s / best.result.latency_s) << " faster than the paper's tree ("
            << fmt::format_duration(tree->result.latency_s) << "), " << times(ring->result.latency_s / best.result.latency_s)
            << " faster than ring (" << fmt::format_duration(ring->result.latency_s) << ")\n";
  char band[96];
  std::snprintf(band, sizeof band, "bands: compute +-%.1f %%, communication +-%.1f %%", 100 * errors.compute, 100 * errors.communication);
  if (close > 0) {
    std::cout << "~: " << close << " strateg" << (close == 1 ? "y" : "ies") << " within the best's band (" << band
              << "): the model cannot tell " << (close == 1 ? "it" : "them") << " from the best\n";
  } else {
    std::cout << "no other strategy is within the best's band (" << band << ")\n";
  }
  if (swaps == 0) {
    std::cout << "the simulator ranks the best " << confirmed.size() << " in the same order\n";
  } else {
    std::cout << "the simulator orders " << swaps << " pair(s) of the best " << confirmed.size() << " differently; it ranks "
              << confirmed[sim_best].tuned->strategy.describe() << " first (" << fmt::format_duration(confirmed[sim_best].simulated_s) << ")\n";
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand("tune", "Search combine strategies (algorithm, collective algorithm, tree fan-ins, leaders) for the fastest");
  auto args = std::make_shared<TuneArgs>();
  add_decode_options(*command, *args, "(not used: tune tries every algorithm)", {"table", "json"});
  command->add_option("--top", args->top, "Strategies shown")->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--confirm", args->confirm, "The best this many replayed in the simulator")->check(CLI::Range(1, 1000))->capture_default_str();
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
