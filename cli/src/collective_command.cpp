// treering collective: the collective model's prediction for one operation over sizes, like nccl-tests.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "treering/analysis/collective_report.hpp"
#include "treering/analysis/moe_report.hpp"
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
  MoeExchangeChoice moe;                           // --op moe-dispatch | moe-combine
  std::vector<std::string> engine_names{"model"};  // --engine, as CollectiveChoice::engines once read
  bool moe_options_given = false;                  // --batch, --ep-kernel, ... given
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

void print_moe_exchange(std::ostream& out, const MoeExchangeReport& report, const CollectiveArgs& args) {
  const auto& estimates = report.estimates;
  const model::MoeExchange& first = estimates.front().exchange;
  const bool simulated = estimates.front().simulated.has_value();
  out << model::to_string(first.op) << " of " << report.workload << " over " << first.routing.ep << " GPUs (EP "
      << first.routing.ep << ") in " << first.routing.nodes << " node(s) of " << args.cluster.cluster << ": "
      << describe(first.kernel) << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "routing: %s, %g experts a token, %g experts a GPU; message %.0f B (%s)\n",
                first.routing.group_limited ? "group-limited" : "uniform top-k", first.routing.copies_per_token,
                first.routing.experts_per_gpu, first.message_bytes, first.dtype.c_str());
  out << line;
  std::snprintf(line, sizeof line, "band: +-%.1f %% (%s)\n", 100 * report.errors.communication,
                report.errors.source.c_str());
  out << line;
  if (simulated)
    out << "simulated: every pair's traffic at once on its routes (" << estimates.front().simulated->engine << ")\n";
  out << '\n';
  Table table({"tokens/GPU", "time", "band", "latency", "transfer", "bound", "GPUs/token", "nodes/token", "busiest",
               "NIC/GPU", "NVLink/GPU", simulated ? "simulated" : "", simulated ? "vs model" : "",
               simulated ? "busiest link" : ""});
  for (const MoeExchangeEstimate& e : estimates) {
    const model::MoeExchange& x = e.exchange;
    const std::string high = std::isfinite(e.band.high_s) ? topologies::format_duration(e.band.high_s) : "unbounded";
    char per_token[3][32];
    std::snprintf(per_token[0], sizeof per_token[0], "%.2f", x.routing.gpus_per_token);
    std::snprintf(per_token[1], sizeof per_token[1], "%.2f", x.routing.nodes_per_token);
    std::snprintf(per_token[2], sizeof per_token[2], "x%.3f", x.routing.busiest_factor);
    table.add_row({std::to_string(static_cast<long long>(x.routing.tokens_per_gpu)),
                   topologies::format_duration(x.time_s), topologies::format_duration(e.band.low_s) + " - " + high,
                   topologies::format_duration(x.latency_s), topologies::format_duration(x.transfer_s), x.bound,
                   per_token[0], per_token[1], per_token[2], topologies::format_bytes(x.nic_bytes_per_gpu),
                   topologies::format_bytes(x.nvlink_bytes_per_gpu),
                   e.simulated ? topologies::format_duration(e.simulated->time_s) : "",
                   e.simulated ? percent_of(e.simulated->time_s, x.time_s) : "",
                   e.simulated ? percent_of(e.simulated->busiest_utilisation) : ""});
  }
  table.print(out);
}

class MoeExchangeTableReport : public Report {
 public:
  MoeExchangeTableReport(const MoeExchangeReport& report, const CollectiveArgs& args) : report_(report), args_(args) {}
  void print_table(std::ostream& out) const override { print_moe_exchange(out, report_, args_); }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const auto& estimate : report_.estimates) list.push_back(moe_estimate_json(estimate, report_));
    return list;
  }

 private:
  const MoeExchangeReport& report_;
  const CollectiveArgs& args_;
};

void run_moe_exchange(const topologies::Topology& topology, CollectiveArgs& args) {
  if (!args.bytes.empty()) throw topologies::InputError(args.op + " takes --batch (tokens per GPU), not --bytes");
  if (!args.algorithm.empty() || !args.protocol.empty())
    throw topologies::InputError(args.op + " takes --ep-kernel, not --algo or --protocol");
  if (args.in_simgrid)
    throw topologies::InputError(args.op + " replays on treering's event loop only (leave out --simgrid)");
  args.moe.op = args.op;
  args.moe.gpus = args.gpus;
  args.moe.engines = args.engines;
  const MoeExchangeReport report = moe_exchange_report(topology, args.moe);
  make_reporter(args.format, std::cout)->report(MoeExchangeTableReport(report, args));
}

void run(CollectiveArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  args.engines.clear();
  for (const std::string& name : args.engine_names) args.engines.push_back(validate::parse_engine(name));
  if (is_moe_op(args.op)) return run_moe_exchange(topology, args);
  if (args.bytes.empty()) throw topologies::InputError("--bytes is required for " + args.op);
  if (!args.moe.workload.empty() || args.moe_options_given)
    throw topologies::InputError("--workload, --batch and --ep-kernel are for --op moe-dispatch and moe-combine");
  const CollectiveReport report = collective_report(topology, args);
  for (const std::string& warning : report.warnings) std::cerr << "warning: " << warning << '\n';
  make_reporter(args.format, std::cout)->report(CollectiveEstimatesReport(report, args));
}

void add_moe_options(CLI::App& command, CollectiveArgs& args) {
  const auto given = [&args](const auto&) { args.moe_options_given = true; };
  command.add_option("--workload", args.moe.workload, "moe-*: the MoE model (a preset, YAML or config.json)");
  command.add_option("--batch", args.moe.batches, "moe-*: tokens each GPU sends, e.g. 128 or 1,8,128")
      ->delimiter(',')
      ->each(given)
      ->capture_default_str();
  command
      .add_option("--ep-kernel", args.moe.kernel,
                  "moe-*: nccl (ncclAllToAll), low-latency (an RDMA write per token copy, through NICs) or normal "
                  "(RDMA once per node, NVLink forwarding)")
      ->each(given)
      ->capture_default_str();
  command.add_option("--dtype", args.moe.dtype, "moe-*: fp8 or bf16 (default: fp8 dispatch, bf16 combine)")
      ->each(given);
  command
      .add_option("--redundant-experts", args.moe.redundant_experts,
                  "moe-*: replicas of the hottest experts beside the routed ones")
      ->each(given);
  command
      .add_option("--expert-skew", args.moe.skew,
                  "moe-*: what-if, the hottest expert draws this many times the mean expert's tokens (1: uniform)")
      ->each(given);
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* command = app.add_subcommand("collective", "Predict a collective's time on a cluster (like nccl-tests)");
  auto args = std::make_shared<CollectiveArgs>();
  add_cluster_option(*command, args->cluster);
  command
      ->add_option("--op", args->op,
                   "allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall (--bytes: each rank's send "
                   "buffer, S / n per peer); moe-dispatch or moe-combine (an MoE layer's exchanges over the GPUs as "
                   "the EP group: --workload, --batch, --ep-kernel)")
      ->capture_default_str();
  command->add_option(
      "--bytes", args->bytes,
      std::string("Sizes: 8K, 1G, lists 8,1M and ranges 8:1G (doubling) or 8:1G:x4; ") + topologies::kMessageSizeRule);
  add_moe_options(*command, *args);
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
