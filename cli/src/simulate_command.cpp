// treering simulate | compare: the simulator's replay of the plans, alone (in predict's schema) or beside the
// model.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/analysis/decode_output.hpp"
#include "degradation_args.hpp"
#include "layout_args.hpp"
#include "treering/model/layout_model.hpp"
#include "replay_progress.hpp"
#include "reporter.hpp"
#include "treering/analysis/simulated_decode.hpp"
#include "treering/sim/layout_replay.hpp"
#include "table.hpp"
#include "treering/sim/replay.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;

struct SimulateArgs : DecodeArgs {
  SimulateArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  LayoutArgs layout;
  std::string trace;
  bool full_ring = false;
  bool in_simgrid = false;
  bool every_group = false;
  DegradationArgs degraded;
  sim::Degradation degradation;  // made from `degraded` once the topology is loaded
};

ordered_json link_json(const topologies::Topology& topology, topologies::LinkId id, double bytes, double utilisation) {
  const topologies::Link& link = topology.link(id);
  return {{"from", topology.device(link.from).name},
          {"to", topology.device(link.to).name},
          {"tier", topologies::to_string(link.tier)},
          {"bytes", bytes},
          {"utilisation", utilisation}};
}

// The links the replay loaded most, busiest first.
ordered_json busiest_json(const topologies::Topology& topology, const sim::ReplayResult& simulated) {
  ordered_json links = ordered_json::array();
  for (const sim::LinkLoad& load : sim::busiest_links(topology, simulated, 5)) {
    links.push_back(link_json(topology, load.link, load.bytes, load.utilisation));
  }
  return links;
}

ordered_json links_json(const topologies::Topology& topology, const sim::ReplayResult& simulated) {
  ordered_json links = ordered_json::array();
  for (const sim::LinkLoad& load : sim::link_loads(topology, simulated))
    links.push_back(link_json(topology, load.link, load.bytes, load.utilisation));
  return links;
}

// Each case simulated, with a line on stderr before each (several cases, a table, progress shown) and the
// replay's progress on a terminal.
std::vector<SimulatedCase> run_cases(const SimulateArgs& args, const topologies::Topology& topology) {
  const DecodeRequest request = decode_request(args, args.layout);
  const bool lines = args.format == OutputFormat::table &&
                     request.workloads.size() * request.seq_lens.size() * request.algorithms.size() > 1 &&
                     progress_shown();
  auto before_case = [lines](ReplayChoice& replay, const model::Workload& workload, long long seq_len,
                             model::DecodeAlgorithm algorithm) {
    const std::string name = model::to_string(algorithm);
    if (lines)
      std::cerr << "simulating " << name << " at " << seq_len << " tokens, batch " << workload.batch << "...\n";
    replay.progress = terminal_progress(name + " at " + std::to_string(seq_len) + " tokens");
  };
  return simulate_cases(topology, request,
                        {!args.trace.empty(), args.full_ring, args.in_simgrid, args.degradation, args.every_group, {}},
                        before_case);
}

std::string percent(double simulated, double predicted) { return format_change(simulated, predicted); }

// What replayed the cases: "event loop", "SimGrid 3.32.0" (--simgrid), or both (the event loop leaves plans
// with sends of no bytes to SimGrid).
std::string engines(const std::vector<SimulatedCase>& cases) {
  std::vector<std::string> names;
  for (const SimulatedCase& c : cases) {
    if (std::find(names.begin(), names.end(), c.simulated.engine) == names.end()) names.push_back(c.simulated.engine);
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " and ") + name;
  return text;
}

// Under the table: each case's busiest links, "ring at 1000000: dgx-h100-0/nic0 -> leaf0 99.7 % (24.6 GB), ...",
// and what its replay took a shortcut through (the same figures, fewer events).
void print_busiest_links(std::ostream& out, const std::vector<SimulatedCase>& cases,
                         const topologies::Topology& topology) {
  bool shortcuts = false;
  for (const SimulatedCase& c : cases) shortcuts = shortcuts || !c.simulated.shortcuts.empty();
  if (shortcuts) {
    out << "\nshortcuts (the same figures as replaying every event):\n";
    for (const SimulatedCase& c : cases) {
      std::string text;
      for (const std::string& shortcut : c.simulated.shortcuts) text += (text.empty() ? "" : "; ") + shortcut;
      if (!text.empty())
        out << "  " << model::to_string(c.row.result.algorithm) << " at " << c.row.result.seq_len << ": " << text
            << '\n';
    }
  }
  out << "\nbusiest links (bytes / (rate x latency)):\n";
  for (const SimulatedCase& c : cases) {
    out << "  " << model::to_string(c.row.result.algorithm) << " at " << c.row.result.seq_len << ":";
    const char* separator = " ";
    for (const sim::LinkLoad& load : sim::busiest_links(topology, c.simulated, 3)) {
      const topologies::Link& link = topology.link(load.link);
      char share[32];
      std::snprintf(share, sizeof share, "%.1f %%", 100 * load.utilisation);
      out << separator << topology.device(link.from).name << " -> " << topology.device(link.to).name << " " << share
          << " (" << topologies::format_bytes(load.bytes) << ")";
      separator = ", ";
    }
    out << '\n';
  }
}

void print_simulations(std::ostream& out, const std::vector<SimulatedCase>& cases, const topologies::Topology& topology,
                       bool compare) {
  out << (compare ? "model vs simulator" : "simulator") << " (" << engines(cases) << ", links shared max-min) on "
      << topology.spec().name << ", " << (cases.empty() ? "no case" : replay_summary(cases.front().simulated))
      << ", one attention layer"
      << (!cases.empty() && cases.front().row.step
              ? " and the " + std::string(model::to_string(cases.front().row.step->scope)) + " around it"
              : "")
      << "\n"
      << calibration_line(topology) << "\n\n";
  const bool calibrated = topology.spec().calibration.has_value();
  std::vector<const DecodeRow*> listed;
  for (const SimulatedCase& c : cases) listed.push_back(&c.row);
  const bool marks = any_does_not_fit(listed);  // a "fits" column only where some row does not
  const auto fits = [&](const SimulatedCase& c) { return marks && !c.row.memory_shortfall.empty() ? "no !" : ""; };
  if (compare) {
    Table table({"tokens", "algorithm", "model", "simulated", "difference", calibrated ? "calibration" : "",
                 marks ? "fits" : ""});
    for (const SimulatedCase& c : cases) {
      table.add_row({std::to_string(c.predicted.seq_len), model::to_string(c.predicted.algorithm),
                     topologies::format_duration(c.predicted.latency_s),
                     topologies::format_duration(c.simulated.latency_s),
                     percent(c.simulated.latency_s, c.predicted.latency_s), calibration_marker(c.row), fits(c)});
    }
    table.print(out);
    return print_extrapolation_notes(out, listed);
  }
  const bool degraded = !cases.empty() && cases.front().healthy_s;
  const bool step = !cases.empty() && cases.front().row.step.has_value();  // --scope layer|step: the step around it
  const bool generation = !cases.empty() && cases.front().row.generation_s.has_value();  // --tokens
  Table table({"tokens", "algorithm", "latency", "compute", "comm intra", "comm inter", "sent/GPU", "inter-node",
               "transfers", degraded ? "healthy" : "vs model", degraded ? "slowdown" : "", step ? "layer" : "",
               step ? "per token" : "", generation ? "generation" : "", calibrated ? "calibration" : "",
               marks ? "fits" : ""});
  for (const SimulatedCase& c : cases) {
    const model::DecodeResult& r = c.row.result;
    const bool whole = step && c.row.step->scope == model::Scope::step;
    table.add_row({std::to_string(r.seq_len), model::to_string(r.algorithm), topologies::format_duration(r.latency_s),
                   topologies::format_duration(r.breakdown.compute_s),
                   topologies::format_duration(r.breakdown.intra_node_s),
                   topologies::format_duration(r.breakdown.inter_node_s), topologies::format_bytes(r.volume.per_gpu),
                   topologies::format_bytes(r.volume.inter_node), std::to_string(c.simulated.transfers_simulated),
                   degraded ? topologies::format_duration(*c.healthy_s) : percent(r.latency_s, c.predicted.latency_s),
                   degraded ? percent(r.latency_s, *c.healthy_s) : "",
                   step ? topologies::format_duration(c.row.step->layer_s) : "",
                   whole ? topologies::format_duration(c.row.step->step_s) : "",
                   generation ? topologies::format_duration(c.row.generation_s.value_or(0)) : "",
                   calibration_marker(c.row), fits(c)});
  }
  table.print(out);
  print_extrapolation_notes(out, listed);
  print_busiest_links(out, cases, topology);
}

// simulate's and compare's cases: the table above, print_decode_csv's rows (csv), or each row's decode_json with
// what the replay did (json).
class SimulationReport : public Report {
 public:
  SimulationReport(const std::vector<SimulatedCase>& cases, const std::vector<DecodeRow>& rows,
                   const topologies::Topology& topology, bool compare)
      : cases_(cases), rows_(rows), topology_(topology), compare_(compare) {}
  void print_table(std::ostream& out) const override { print_simulations(out, cases_, topology_, compare_); }
  void print_csv(std::ostream& out) const override { print_decode_csv(out, rows_); }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (size_t i = 0; i < rows_.size(); ++i) {
      const SimulatedCase& c = cases_[i];
      list.push_back(decode_json(rows_[i]));
      list.back()["simulator"] = c.simulated.engine;  // "event loop" or "SimGrid 3.32.0" (--simgrid)
      list.back()["groups"] = c.simulated.groups;
      list.back()["groups_replayed"] = c.simulated.groups_replayed;
      list.back()["gpus_replayed"] = c.simulated.gpus.size();
      list.back()["shortcuts"] = c.simulated.shortcuts;
      list.back()["busiest_links"] = busiest_json(topology_, c.simulated);
      if (c.healthy_s) list.back()["healthy_latency_s"] = *c.healthy_s;
    }
    return list;
  }

 private:
  const std::vector<SimulatedCase>& cases_;
  const std::vector<DecodeRow>& rows_;
  const topologies::Topology& topology_;
  bool compare_;
};

void print_simulation(SimulateArgs& args, bool compare) {
  if (!args.trace.empty() && topologies::parse_token_counts(args.seq_len).size() * args.algorithms.size() != 1) {
    throw topologies::InputError("--trace needs one algorithm and one sequence length");
  }
  std::optional<topologies::OutputFile> trace;  // opened before simulating, so that a bad path fails at once
  if (!args.trace.empty()) trace.emplace(args.trace);
  const topologies::Topology topology = load_topology(args.cluster);
  args.degradation = make_degradation(args.degraded, topology);
  std::vector<SimulatedCase> cases = run_cases(args, topology);
  if (!args.trace.empty()) {
    const SimulatedCase& c = cases.front();
    trace->stream() << (c.layout ? sim::chrome_trace(c.layout->groups, c.simulated)
                                 : sim::chrome_trace(c.plan, c.simulated));
    trace->commit();
    std::cerr << "wrote " << args.trace << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  }
  std::vector<DecodeRow> rows;
  for (SimulatedCase& c : cases) {
    if (!compare && args.format == OutputFormat::json) c.row.links = links_json(topology, c.simulated);
    rows.push_back(c.row);
  }
  make_reporter(args.format, std::cout)->report(SimulationReport(cases, rows, topology, compare));
}

void add_common(CLI::App& command, SimulateArgs& args) {
  add_decode_options(command, args, "Algorithms: " + model::decode_algorithm_names(),
                     {OutputFormat::table, OutputFormat::json, OutputFormat::csv});
  add_layout_options(command, args.layout);
  add_progress_flag(command);
  command.add_flag("--full-ring", args.full_ring,
                   "Replay every ring round, even once they repeat exactly (slower; the same latency)");
  command.add_flag("--simgrid", args.in_simgrid,
                   "Replay on SimGrid's network, not treering's event loop (the same results to 1e-9, 10-30x slower: "
                   "to check one by the other)");
  command.add_flag("--every-group", args.every_group,
                   "Replay every CP group even where they are alike and share no link (by default one stands for "
                   "them all: the same figures, faster)");
}

}  // namespace

// What the simulator shares and what it leaves out, under both commands' --help.
constexpr const char* kSharing =
    "\nWhat is shared: every directed link of the cluster's graph (NVSwitch ports, PCIe switch uplinks, the GPU-NIC "
    "and NIC-leaf links, leaf-spine cables) among all transfers under way, of every CP group of the layout (and its "
    "TP groups with --scope layer|step, its replicas with --replicas), max-min fair as SimGrid's CM02 model shares "
    "them (Velho and Legrand, SIMUTools 2009), each transfer no faster than its NCCL protocol's rate; routes are "
    "D-mod-k, as InfiniBand's fat-tree routing (Zahavi, 2010). Not modelled: congestion control, packet loss and "
    "retransmission, adaptive routing (routes are fixed), switch buffers and queueing delay (a transfer pays its "
    "path's fixed latency), NIC message rates, and communication kernels slowing the GPU's compute.\n";

void add_simulate_commands(CLI::App& app) {
  auto* simulate = app.add_subcommand(
      "simulate", "Replay decode plans in the simulator (links shared max-min, as SimGrid shares them)");
  simulate->footer(model::decode_algorithm_help() + "\n" + kSharing);
  auto simulate_args = std::make_shared<SimulateArgs>();
  add_common(*simulate, *simulate_args);
  simulate->add_option("--trace", simulate_args->trace,
                       "Write a Chrome/Perfetto trace (one track per GPU) to FILE.json");
  add_degradation_options(*simulate, simulate_args->degraded);
  simulate->callback([simulate_args] { print_simulation(*simulate_args, false); });
  auto* compare = app.add_subcommand("compare", "The model and the simulator side by side, with their difference");
  compare->footer(kSharing);
  auto compare_args = std::make_shared<SimulateArgs>();
  add_common(*compare, *compare_args);
  drop_options(*compare,
               {"--tokens", "--prefill", "--scope"});  // compare sets one attention layer's two times side by side
  compare->callback([compare_args] { print_simulation(*compare_args, true); });
}

}  // namespace treering::cli
