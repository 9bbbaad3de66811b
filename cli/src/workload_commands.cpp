// treering workload list | show
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/model/weights.hpp"
#include "treering/model/workload.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
using treering::model::Workload;

bool is_moe(const Workload& w) { return w.experts > 0; }

// The parameters one token runs through: the MoE model's active ones, a dense model's all.
double active_parameters(const Workload& w) { return is_moe(w) ? model::active_parameters(w) : w.parameters; }

std::string attention_kind(const Workload& w) {
  if (model::has_latent_attention(w)) return "multi-head latent";
  return w.kv_heads == w.query_heads ? "multi-head" : "grouped-query";
}

ordered_json moe_json(const Workload& w) {
  if (!is_moe(w)) return nullptr;
  return {{"experts", w.experts},
          {"experts_per_token", w.experts_per_token},
          {"shared_experts", w.shared_experts},
          {"moe_intermediate_size", w.moe_intermediate_size},
          {"first_k_dense_replace", w.first_k_dense_replace},
          {"n_group", w.expert_groups},
          {"topk_group", w.expert_groups_per_token}};
}

ordered_json latent_json(const Workload& w) {
  if (!model::has_latent_attention(w)) return nullptr;
  return {{"kv_lora_rank", w.kv_lora_rank},
          {"qk_rope_head_dim", w.qk_rope_head_dim},
          {"qk_nope_head_dim", w.qk_nope_head_dim},
          {"v_head_dim", w.v_head_dim},
          {"q_lora_rank", w.q_lora_rank}};
}

ordered_json workload_json(const Workload& workload) {
  return {{"name", workload.name},
          {"description", workload.description},
          {"source", workload.source},
          {"layers", workload.layers},
          {"query_heads", workload.query_heads},
          {"kv_heads", workload.kv_heads},
          {"head_dim", workload.head_dim},
          {"hidden_size", workload.hidden_size},
          {"parameters", workload.parameters},
          {"dtype", workload.dtype},
          {"dtype_bytes", workload.dtype_bytes},
          {"batch", workload.batch},
          {"kv_cache_bytes_per_token", model::kv_cache_bytes_per_token(workload)},
          {"active_parameters", active_parameters(workload)},
          {"attention", attention_kind(workload)},
          {"latent_attention", latent_json(workload)},
          {"kv_cache_dtype", workload.kv_cache_dtype},
          {"intermediate_size", workload.intermediate_size},
          {"vocab_size", workload.vocab_size},
          {"weight_dtype", workload.weight_dtype},
          {"attention_weight_dtype", workload.attention_weight_dtype},
          {"weight_block_size", workload.weight_block_size},
          {"weight_bytes", model::model_weight_bytes(workload)},
          {"moe", moe_json(workload)}};
}

std::string parameters_text(double parameters) {
  if (parameters <= 0) return "-";
  char text[32];
  if (parameters >= 999.5e9) {  // "1.03T", not "1.03e+03B"
    std::snprintf(text, sizeof text, "%.3gT", parameters / 1e12);
  } else {
    std::snprintf(text, sizeof text, "%.3gB", parameters / 1e9);
  }
  return text;
}

// workload list's table: one preset a row.
void print_presets(std::ostream& out, const std::vector<Workload>& presets) {
  Table table(
      {"workload", "layers", "q heads", "kv heads", "head dim", "params", "active", "KV cache/token", "description"});
  for (const Workload& workload : presets) {
    table.add_row({workload.name, std::to_string(workload.layers), std::to_string(workload.query_heads),
                   std::to_string(workload.kv_heads), std::to_string(workload.head_dim),
                   parameters_text(workload.parameters), parameters_text(active_parameters(workload)),
                   topologies::format_bytes(model::kv_cache_bytes_per_token(workload)), workload.description});
  }
  table.print(out);
}

// "multi-head latent: 512 + 64 per token (q_lora_rank 1536, nope 128, v 128)" or "grouped-query: 32 query / 8 KV
// heads x 128".
std::string attention_text(const Workload& w) {
  const std::string kind = attention_kind(w) + ": ";
  if (model::has_latent_attention(w)) {
    return kind + std::to_string(w.kv_lora_rank) + " + " + std::to_string(w.qk_rope_head_dim) +
           " per token (q_lora_rank " + std::to_string(w.q_lora_rank) + ", nope " + std::to_string(w.qk_nope_head_dim) +
           ", v " + std::to_string(w.v_head_dim) + ")";
  }
  if (w.kv_heads == w.query_heads)
    return kind + std::to_string(w.query_heads) + " heads x " + std::to_string(w.head_dim);
  return kind + std::to_string(w.query_heads) + " query / " + std::to_string(w.kv_heads) + " KV heads x " +
         std::to_string(w.head_dim);
}

std::string kv_cache_text(const Workload& w) {
  const std::string bytes = topologies::format_bytes(model::kv_cache_bytes_per_token(w));
  if (!model::has_latent_attention(w)) return bytes + " (all layers)";
  return bytes + " (all layers; latent: " + std::to_string(w.kv_lora_rank + w.qk_rope_head_dim) + " values of " +
         w.kv_cache_dtype + " a layer)";
}

std::string weights_text(const Workload& w) {
  const double bytes = model::model_weight_bytes(w);
  if (bytes <= 0) return "-";
  std::string text =
      topologies::format_bytes(bytes) + " (" + w.weight_dtype + " MLP, " + w.attention_weight_dtype + " attention";
  if (w.weight_block_size > 0) {
    text += ", fp8 scaled per " + std::to_string(w.weight_block_size) + " x " + std::to_string(w.weight_block_size);
  }
  return text + ")";
}

// "256 routed experts of 2048, 8 per token, 1 shared; first 3 layers dense; 8 groups, 4 per token".
std::string moe_text(const Workload& w) {
  const int width = w.moe_intermediate_size > 0 ? w.moe_intermediate_size : w.intermediate_size;
  std::string text = std::to_string(w.experts) + " routed experts of " + std::to_string(width) + ", " +
                     std::to_string(w.experts_per_token) + " per token, " + std::to_string(w.shared_experts) +
                     " shared";
  if (w.first_k_dense_replace == 1) text += "; first layer dense";
  if (w.first_k_dense_replace > 1) text += "; first " + std::to_string(w.first_k_dense_replace) + " layers dense";
  if (w.expert_groups > 1) {
    text +=
        "; " + std::to_string(w.expert_groups) + " groups, " + std::to_string(w.expert_groups_per_token) + " per token";
  }
  return text;
}

// workload show's table: the fields, one a line.
void print_workload(std::ostream& out, const Workload& w) {
  out << w.name << " — " << w.description << "\n\n";
  std::vector<std::pair<std::string, std::string>> fields = {
      {"layers", std::to_string(w.layers)},
      {"query heads", std::to_string(w.query_heads)},
      {"KV heads", std::to_string(w.kv_heads)},
      {"head dim", std::to_string(w.head_dim)},
      {"hidden size", std::to_string(w.hidden_size)},
      {"attention", attention_text(w)},
      {"parameters", parameters_text(w.parameters)},
      {"active parameters", parameters_text(active_parameters(w))},
      {"weights", weights_text(w)},
      {"dtype", w.dtype},
      {"batch", std::to_string(w.batch)},
      {"KV cache per token", kv_cache_text(w)}};
  if (is_moe(w)) fields.push_back({"MoE", moe_text(w)});
  fields.push_back({"source", w.source});
  print_fields(out, fields);
}

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the workload presets");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback([format] {
    const std::vector<Workload>& presets = model::workload_presets();
    make_reporter(*format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_presets(out, presets); },
                                 .csv = {},
                                 .json =
                                     [&] {
                                       ordered_json list = ordered_json::array();
                                       for (const Workload& workload : presets) list.push_back(workload_json(workload));
                                       return list;
                                     }}));
  });
}

void add_show(CLI::App& parent) {
  auto* command = parent.add_subcommand("show", "Show one workload preset");
  auto name = std::make_shared<std::string>();
  auto format = std::make_shared<OutputFormat>();
  command->add_option("workload", *name, "A workload preset (treering workload list) or a YAML file")->required();
  add_format_option(*command, *format);
  command->callback([name, format] {
    const Workload workload = load_workload(*name);
    make_reporter(*format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_workload(out, workload); },
                                 .csv = {},
                                 .json = [&] { return workload_json(workload); }}));
  });
}

}  // namespace

void add_workload_commands(CLI::App& app) {
  auto* command = app.add_subcommand("workload", "Decoding workloads: model shapes");
  command->require_subcommand(1);
  add_list(*command);
  add_show(*command);
}

}  // namespace treering::cli
