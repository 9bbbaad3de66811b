// collective, plan and validate from Python: the reports the command prints with --format json, as Python values.
#include "report_calls.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "json_values.hpp"
#include "treering/analysis/collective_report.hpp"
#include "treering/analysis/engine_runs_report.hpp"
#include "treering/analysis/kernel_validation.hpp"
#include "treering/analysis/moe_report.hpp"
#include "treering/analysis/plan_report.hpp"
#include "treering/analysis/validate_report.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/validate/report.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

// The collective model over sizes, as `treering collective --format json`: one dict per size.
py::object collective(const Cluster& cluster, const analysis::CollectiveChoice& choice) {
  const analysis::CollectiveReport report = analysis::collective_report(cluster.topology(), choice);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const analysis::BandedEstimate& estimate : report.estimates)
    list.push_back(analysis::estimate_json(estimate, report.group));
  py::object rows = from_json(list);
  if (!report.warnings.empty()) {
    py::module_::import("warnings")
        .attr("warn")(report.warnings.front() + (report.warnings.size() > 1
                                                     ? " (and " + std::to_string(report.warnings.size() - 1) + " more)"
                                                     : ""));
  }
  return rows;
}

// An MoE layer's dispatch or combine over batches, as `treering collective --op moe-dispatch --format json`.
py::object moe_exchange(const Cluster& cluster, const analysis::MoeExchangeChoice& choice) {
  const analysis::MoeExchangeReport report = analysis::moe_exchange_report(cluster.topology(), choice);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const analysis::MoeExchangeEstimate& estimate : report.estimates)
    list.push_back(analysis::moe_estimate_json(estimate, report));
  return from_json(list);
}

// The deployment planner, as `treering plan --format json`: one dict with the ranked choices.
py::object plan(const Cluster& cluster, const analysis::PlanChoice& choice) {
  analysis::PlanReport report;
  {
    const py::gil_scoped_release release;
    report = analysis::plan_report(cluster.topology(), choice);
  }
  return from_json(analysis::plan_json(cluster.topology(), choice, report));
}

// `treering validate --format json`: collective measurements and timed decodes (cases and summary per engine), or
// attention benchmarks kernel by kernel, or decode steps part by part (the model alone: engines are not asked), or
// a serving engine's benchmarks run by run with the profile `impl` (empty: efficient).
py::object validate_files(const Cluster& cluster, const std::vector<std::string>& files,
                          const std::vector<std::string>& engine_names, const std::string& impl) {
  if (files.empty()) throw topologies::InputError("no measurement file given");
  if (analysis::engine_benchmark_files(files)) {
    const topologies::ImplProfile profile = topologies::load_impl_profile(impl.empty() ? "efficient" : impl);
    nlohmann::ordered_json json;
    {
      const py::gil_scoped_release release;
      json =
          analysis::engine_validation_json(analysis::validate_engine_runs(cluster.topology().spec(), profile, files));
    }
    return from_json(json);
  }
  if (!impl.empty())
    throw topologies::InputError(
        "impl is for serving engines' benchmarks (vLLM latency or serve JSON, SGLang one-batch lines)");
  std::vector<validate::Engine> engines;
  for (const std::string& name : engine_names) engines.push_back(validate::parse_engine(name));
  if (engines.empty()) throw topologies::InputError("no engine given (model, sim)");
  const analysis::KernelFiles kind = analysis::kernel_files(files);
  nlohmann::ordered_json json;
  std::vector<std::string> warnings;
  {
    const py::gil_scoped_release release;
    const topologies::ClusterSpec& spec = cluster.topology().spec();
    if (kind == analysis::KernelFiles::steps) {
      const analysis::StepValidation validation = analysis::validate_steps(spec, files);
      warnings = validation.notes;
      json = analysis::step_validation_json(validation);
    } else if (kind == analysis::KernelFiles::attention) {
      json = analysis::attention_validation_json(analysis::validate_attention(spec, files));
    } else {
      const analysis::ValidateReport report = analysis::validate_measurements(cluster.topology(), files, engines);
      warnings = report.warnings;
      json = analysis::validate_json(cluster.topology(), report);
    }
  }
  for (const std::string& warning : warnings) py::module_::import("warnings").attr("warn")(warning);
  return from_json(json);
}

}  // namespace

void add_report_calls(py::module_& m) {
  m.def(
      "collective",
      [](const Cluster& cluster, const std::string& op, const std::string& bytes, const std::vector<int>& gpus,
         const std::string& algorithm, const std::string& protocol, const std::string& algorithms,
         const std::vector<std::string>& engines) {
        std::vector<treering::validate::Engine> parsed;
        for (const std::string& name : engines) parsed.push_back(treering::validate::parse_engine(name));
        return collective(cluster, {op, bytes, gpus, algorithm, protocol, algorithms, parsed, false});
      },
      py::arg("cluster"), py::arg("op"), py::arg("bytes"), py::arg("gpus"), py::arg("algorithm"), py::arg("protocol"),
      py::arg("algorithms"), py::arg("engines"));
  m.def(
      "moe_exchange",
      [](const Cluster& cluster, const std::string& op, const std::string& workload, const std::vector<int>& batches,
         const std::string& kernel, const std::string& dtype, int redundant_experts, double skew,
         const std::vector<int>& gpus, const std::vector<std::string>& engines) {
        analysis::MoeExchangeChoice choice;
        choice.op = op;
        choice.workload = workload;
        choice.batches = batches;
        choice.kernel = kernel;
        choice.dtype = dtype;
        choice.redundant_experts = redundant_experts;
        choice.skew = skew;
        choice.gpus = gpus;
        choice.engines.clear();
        for (const std::string& name : engines) choice.engines.push_back(treering::validate::parse_engine(name));
        return moe_exchange(cluster, choice);
      },
      py::arg("cluster"), py::arg("op"), py::arg("workload"), py::arg("batches"), py::arg("kernel"), py::arg("dtype"),
      py::arg("redundant_experts"), py::arg("skew"), py::arg("gpus"), py::arg("engines"));
  m.def("validate", &validate_files, py::arg("cluster"), py::arg("files"), py::arg("engines"), py::arg("impl"));
  m.def(
      "plan",
      [](const Cluster& cluster, long long seq_len, const std::string& workload, int batch, int gpus_max,
         const std::vector<std::string>& combines, const std::string& impl, int confirm,
         std::optional<double> tpot_target_ms, const std::string& ep_kernel) {
        if (batch < 0 || gpus_max < 0 || confirm < 0)
          throw treering::topologies::InputError("batch, gpus_max and confirm must be at least 0 (0: the default)");
        return plan(cluster, {workload, seq_len, batch, gpus_max, combines, impl, confirm, tpot_target_ms, ep_kernel});
      },
      py::arg("cluster"), py::arg("seq_len"), py::arg("workload"), py::arg("batch"), py::arg("gpus_max"),
      py::arg("combines"), py::arg("impl"), py::arg("confirm"), py::arg("tpot_target_ms"), py::arg("ep_kernel"));
}

}  // namespace treering::python
