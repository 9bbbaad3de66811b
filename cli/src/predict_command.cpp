// treering predict: the analytical model's decode latency, volume and memory for algorithms x lengths.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "table.hpp"
#include "treering/model/decode.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
namespace fmt = treering::topologies;

struct PredictArgs : DecodeArgs {
  PredictArgs() { algorithms = {"ring", "tree", "tree-fused", "tree-lse", "allgather-merge"}; }
  std::optional<long long> tokens;
  bool prefill = false;
};

struct Row {
  model::DecodeResult result;
  double generation_s = 0;
  double prefill_s = 0;
  int nodes_used = 0;
};

int nodes_used(const topologies::Topology& topology, const std::vector<int>& gpus) {
  std::vector<int> nodes;
  for (int gpu : gpus) nodes.push_back(topology.node_of_gpu(gpu));
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

ordered_json row_json(const Row& row, const PredictArgs& args, const topologies::Topology& topology,
                      const model::Workload& workload) {
  const model::DecodeResult& r = row.result;
  ordered_json phases = ordered_json::array();
  for (const auto& phase : r.phases) {
    phases.push_back({{"label", phase.label}, {"time_s", phase.time_s}, {"inter_node", phase.inter_node}, {"how", phase.how}});
  }
  ordered_json json = {
      {"algo", model::to_string(r.algorithm)}, {"cluster", topology.spec().name}, {"nodes", row.nodes_used},
      {"cluster_nodes", topology.node_count()},
      {"gpus", r.gpus}, {"workload", workload.name}, {"batch", workload.batch}, {"seq_len", r.seq_len},
      {"latency_s", r.latency_s},
      {"breakdown", {{"compute_s", r.breakdown.compute_s}, {"intra_node_s", r.breakdown.intra_node_s},
                     {"inter_node_s", r.breakdown.inter_node_s},
                     {"exposed_communication_s", r.breakdown.intra_node_s + r.breakdown.inter_node_s},
                     {"overlapped_communication_s", r.breakdown.overlapped_communication_s}}},
      {"volume_bytes", {{"per_gpu", r.volume.per_gpu}, {"intra_node", r.volume.intra_node},
                        {"inter_node", r.volume.inter_node}, {"total", r.volume.total}}},
      {"peak_memory_bytes", r.memory.total},
      {"memory_bytes", {{"kv_cache", r.memory.kv_cache}, {"receive_buffers", r.memory.receive_buffers},
                        {"partial_states", r.memory.partial_states}, {"workspace", r.memory.workspace},
                        {"weights", r.memory.weights}}},
      {"token_s", r.token_s}};
  if (args.prefill) json["prefill_s"] = row.prefill_s;
  if (args.tokens) json["generation_s"] = row.generation_s;
  json["phases"] = phases;
  return json;
}

void print_csv(const std::vector<Row>& rows, const PredictArgs& args, const topologies::Topology& topology,
               const model::Workload& workload) {
  std::cout << "algo,cluster,nodes,gpus,workload,batch,seq_len,latency_s,compute_s,intra_node_s,inter_node_s,"
               "overlapped_communication_s,volume_per_gpu_bytes,volume_intra_node_bytes,volume_inter_node_bytes,"
               "volume_total_bytes,peak_memory_bytes,token_s"
            << (args.prefill ? ",prefill_s" : "") << (args.tokens ? ",generation_s" : "") << '\n';
  for (const Row& row : rows) {
    const model::DecodeResult& r = row.result;
    std::cout << model::to_string(r.algorithm) << ",\"" << topology.spec().name << "\"," << row.nodes_used << ','
              << r.gpus << ',' << workload.name << ',' << workload.batch << ',' << r.seq_len << ',' << r.latency_s << ','
              << r.breakdown.compute_s << ',' << r.breakdown.intra_node_s << ',' << r.breakdown.inter_node_s << ','
              << r.breakdown.overlapped_communication_s << ',' << r.volume.per_gpu << ',' << r.volume.intra_node << ','
              << r.volume.inter_node << ',' << r.volume.total << ',' << r.memory.total << ',' << r.token_s;
    if (args.prefill) std::cout << ',' << row.prefill_s;
    if (args.tokens) std::cout << ',' << row.generation_s;
    std::cout << '\n';
  }
}

void print_table(const std::vector<Row>& rows, const PredictArgs& args, const topologies::Topology& topology,
                 const model::Workload& workload) {
  std::cout << workload.name << " (batch " << workload.batch << ") on " << topology.spec().name << ": "
            << topology.node_count() << " nodes, " << (rows.empty() ? 0 : rows.front().result.gpus)
            << " GPUs used — analytical model, one "
            << "attention layer per row\n\n";
  std::vector<std::string> header{"tokens", "algorithm", "latency", "compute", "comm intra", "comm inter",
                                  "overlapped", "sent/GPU", "inter-node", "memory/GPU"};
  if (workload.layers > 1 || workload.parameters > 0) header.push_back("per token");
  if (args.tokens) header.push_back("generation");
  Table table(header);
  for (const Row& row : rows) {
    const model::DecodeResult& r = row.result;
    std::vector<std::string> cells{std::to_string(r.seq_len), model::to_string(r.algorithm), fmt::format_duration(r.latency_s),
                                   fmt::format_duration(r.breakdown.compute_s), fmt::format_duration(r.breakdown.intra_node_s),
                                   fmt::format_duration(r.breakdown.inter_node_s),
                                   fmt::format_duration(r.breakdown.overlapped_communication_s),
                                   fmt::format_bytes(r.volume.per_gpu), fmt::format_bytes(r.volume.inter_node),
                                   fmt::format_bytes(r.memory.total)};
    if (workload.layers > 1 || workload.parameters > 0) cells.push_back(fmt::format_duration(r.token_s));
    if (args.tokens) cells.push_back(fmt::format_duration(row.generation_s));
    table.add_row(cells);
  }
  table.print(std::cout);
}

void run(const PredictArgs& args) {
  const topologies::Topology topology = load_topology(args.cluster);
  const model::Workload workload = load_workload(args);
  std::vector<model::DecodeAlgorithm> algorithms;
  for (const std::string& name : args.algorithms) algorithms.push_back(model::parse_decode_algorithm(name));
  const model::DecodeModel decode(topology, args.gpus);
  std::vector<Row> rows;
  for (long long seq_len : topologies::parse_token_counts(args.seq_len)) {
    for (model::DecodeAlgorithm algorithm : algorithms) {
      Row row{decode.predict(algorithm, workload, seq_len), 0, 0, nodes_used(topology, decode.group().gpus)};
      model::check_fits(row.result, decode);
      if (args.prefill) row.prefill_s = decode.prefill_s(workload, seq_len);
      if (args.tokens) {
        row.generation_s = row.prefill_s + decode.generation_s(algorithm, workload, seq_len, *args.tokens);
        model::check_fits(decode.predict(algorithm, workload, seq_len + *args.tokens - 1), decode);  // the last token
      }
      rows.push_back(std::move(row));
    }
  }
  if (args.format == "table") return print_table(rows, args, topology, workload);
  if (args.format == "csv") return print_csv(rows, args, topology, workload);
  ordered_json list = ordered_json::array();
  for (const Row& row : rows) list.push_back(row_json(row, args, topology, workload));
  std::cout << list.dump(2) << '\n';
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand("predict", "Predict decode latency, volume and memory of tree vs ring attention");
  auto args = std::make_shared<PredictArgs>();
  add_decode_options(*command, *args, "Algorithms: ring, tree, tree-fused, tree-lse, allgather-merge",
                     {"table", "json", "csv"});
  command->add_option("--tokens", args->tokens, "Also estimate generating this many tokens (JSON generation_s)");
  command->add_flag("--prefill", args->prefill, "Add a prefill estimate of the prompt (JSON prefill_s; in generation_s)");
  command->callback([args] { run(*args); });
}

}  // namespace treering::cli
