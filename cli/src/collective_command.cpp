// treering collective: the collective model's prediction for one operation over sizes, like nccl-tests.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "treering/analysis/collective_report.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/model/collectives.hpp"
#include "treering/model/uncertainty.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;

struct CollectiveArgs : CollectiveChoice {
  ClusterArgs cluster;
  std::vector<std::string> engine_names{"model"};  // --engine, as CollectiveChoice::engines once read
  OutputFormat format = OutputFormat::table;
};

// "+12.34 %" (the difference from `reference`), or "87.5 %" (a share).
std::string percent_of(double value, double reference = 0) {
  return reference > 0 ? format_change(value, reference) : format_percent(value);
}

void print_estimates(std::ostream& out, const std::vector<BandedEstimate>& estimates, const model::CommGroup& group,
                     const CollectiveArgs& args) {
  const bool simulated = !estimates.empty() && estimates.front().simulated;
  out << args.op << " over " << group.ranks << " GPUs in " << group.domains << " scale-up domain(s) of "
      << args.cluster.cluster << " (model, " << nccl_constants(group) << ")\n";
  if (simulated) {
    out << "simulated: the model's pick replayed flow by flow on the routes (" << estimates.front().simulated->engine
        << ", links shared max-min)\n";
  }
  if (!estimates.empty()) {
    std::vector<double> told;  // each error once, named by the first size that has it
    for (const auto* e = estimates.data(); e != estimates.data() + estimates.size(); ++e) {
      if (std::find(told.begin(), told.end(), e->errors.communication) != told.end()) continue;
      told.push_back(e->errors.communication);
      char error[32];
      std::snprintf(error, sizeof error, "%.1f %%", 100 * e->errors.communication);
      out << "band"
          << (estimates.size() > 1 ? std::string(" (") + topologies::format_bytes(e->estimate.bytes) + ")"
                                   : std::string())
          << ": +-" << error << " (" << e->errors.source << ")\n";
    }
  }
  out << '\n';
  Table table({"bytes", "time", "band", "algbw", "busbw", "algorithm", "protocol", "latency", "transfer",
               simulated ? "simulated" : "", simulated ? "vs model" : "", simulated ? "busiest link" : ""});
  for (const auto& [estimate, band, errors, replay] : estimates) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", estimate.bytes);
    const std::string high = std::isfinite(band.high_s) ? topologies::format_duration(band.high_s) : "unbounded";
    table.add_row({bytes, topologies::format_duration(estimate.chosen.time_s),
                   topologies::format_duration(band.low_s) + " - " + high,
                   topologies::format_bandwidth(estimate.algorithm_bandwidth_Bps),
                   topologies::format_bandwidth(estimate.bus_bandwidth_Bps),
                   model::to_string(estimate.chosen.algorithm), model::to_string(estimate.chosen.protocol),
                   topologies::format_duration(estimate.chosen.latency_s),
                   topologies::format_duration(estimate.chosen.transfer_s),
                   replay ? topologies::format_duration(replay->time_s) : "",
                   replay ? percent_of(replay->time_s, estimate.chosen.time_s) : "",
                   replay ? percent_of(replay->busiest_utilisation) : ""});
  }
  table.print(out);
}

// The estimates, one per size: a heading, the bands' sources and a table (table), or an array of estimate_json
// (json: an array for one size as for several).
class CollectiveEstimatesReport : public Report {
 public:
  CollectiveEstimatesReport(const CollectiveReport& report, const CollectiveArgs& args)
      : report_(report), args_(args) {}
  void print_table(std::ostream& out) const override { print_estimates(out, report_.estimates, report_.group, args_); }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const auto& estimate : report_.estimates) list.push_back(estimate_json(estimate, report_.group));
    return list;
  }

 private:
  const CollectiveReport& report_;
  const CollectiveArgs& args_;
};

void run(CollectiveArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  args.engines.clear();
  for (const std::string& name : args.engine_names) args.engines.push_back(validate::parse_engine(name));
  const CollectiveReport report = collective_report(topology, args);
  for (const std::string& warning : report.warnings) std::cerr << "warning: " << warning << '\n';
  make_reporter(args.format, std::cout)->report(CollectiveEstimatesReport(report, args));
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* command = app.add_subcommand("collective", "Predict a collective's time on a cluster (like nccl-tests)");
  auto args = std::make_shared<CollectiveArgs>();
  add_cluster_option(*command, args->cluster);
  command
      ->add_option("--op", args->op,
                   "allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall (--bytes: each rank's send "
                   "buffer, S / n per peer)")
      ->capture_default_str();
  command
      ->add_option("--bytes", args->bytes,
                   std::string("Sizes: 8K, 1G, lists 8,1M and ranges 8:1G (doubling) or 8:1G:x4; ") +
                       topologies::kMessageSizeRule)
      ->required();
  command
      ->add_option("--gpus", args->gpus,
                   "The group's GPUs, e.g. 0,8 (default: all; sendrecv: 0 and the next domain's first)")
      ->delimiter(',');
  command->add_option("--algo", args->algorithm,
                      "Force an algorithm: ring, tree, nvls, nvls-tree, hierarchical, "
                      "recursive-doubling, collnet-direct, collnet-chain (SHARP), p2p");
  command->add_option("--protocol", args->protocol, "Force a protocol: LL, LL128, Simple");
  command->add_option("--algorithms", args->algorithms, "Pick from NCCL's algorithms or all that the model knows")
      ->check(CLI::IsMember({"nccl", "all"}))
      ->capture_default_str();
  command
      ->add_option("--engine", args->engine_names,
                   "model (NCCL's algorithms costed from the tiers), sim (the model's pick "
                   "replayed flow by flow on the routes, links shared: sees an oversubscribed "
                   "spine), or model,sim")
      ->delimiter(',')
      ->capture_default_str();
  command->add_flag("--simgrid", args->in_simgrid,
                    "With --engine sim: on SimGrid's network, not treering's event loop");
  add_format_option(*command, args->format, {OutputFormat::table, OutputFormat::json});
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
