// calibrate(): the command's two kinds of run. Benchmarks fit the cluster (network, attention kernel, decode step)
// and write the calibrated cluster file; timed decodes fit an implementation profile's overheads and write the
// profile. Each returns what `treering calibrate ... --format json` prints.
#include "calibrate.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "json_values.hpp"
#include "treering/analysis/calibration_runs.hpp"
#include "treering/analysis/engine_runs_report.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/load.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/settings.hpp"

namespace py = pybind11;

namespace treering::python {
namespace {

void warn_each(const std::vector<std::string>& notes) {
  for (const std::string& note : notes) py::module_::import("warnings").attr("warn")(note);
}

// The cluster's text with its edits, its node counts written in (as the command writes --nodes), and the loaded
// cluster the benchmarks ran on.
analysis::BenchmarkCalibrationRequest benchmark_request(const Cluster& cluster, const std::vector<std::string>& files,
                                                        const std::vector<long long>& tokens,
                                                        const std::string& output) {
  std::vector<topologies::Setting> sizes;
  if (cluster.recipe().nodes) sizes.push_back({"nodes.0.count", std::to_string(*cluster.recipe().nodes)});
  if (cluster.recipe().gpus_per_node)
    sizes.push_back({"gpus_per_node", std::to_string(*cluster.recipe().gpus_per_node)});
  return {cluster.topology().spec(), topologies::apply_settings(cluster.text(), cluster.source_name(), sizes), files,
          tokens, output};
}

py::object calibrate_benchmarks(const Cluster* cluster, const std::vector<std::string>& files,
                                const std::vector<long long>& tokens, const std::string& output) {
  if (cluster == nullptr) throw topologies::InputError("calibrating from benchmarks needs the cluster they ran on");
  const topologies::InputFilesScope inputs;  // `output` may be none of the files read here, nor the cluster's file
  if (!cluster->source_name().starts_with("preset:")) topologies::note_input_file(cluster->source_name());
  topologies::OutputFile out(output);  // a bad path fails before the fit; replaced only once all succeeded
  const analysis::BenchmarkCalibrationRequest request = benchmark_request(*cluster, files, tokens, output);
  analysis::BenchmarkCalibration result;
  {
    const py::gil_scoped_release release;
    result = analysis::calibrate_benchmarks(request);
  }
  warn_each(result.notes);
  out.stream() << result.cluster_yaml;
  out.commit();
  return from_json(analysis::benchmark_calibration_json(result, request));
}

py::object calibrate_timings(const Cluster* cluster, const std::vector<std::string>& files, const std::string& impl,
                             const std::vector<std::string>& fit, const std::string& output) {
  if (cluster && (cluster->recipe().nodes || cluster->recipe().gpus_per_node || !cluster->recipe().edits.empty()))
    throw topologies::InputError("timings name their GPUs: nodes, gpus_per_node and edits are for benchmarks");
  const topologies::InputFilesScope inputs;
  analysis::OverheadCalibrationRequest request{files, std::nullopt, impl, fit, output};
  if (cluster) request.cluster = cluster->recipe().source;
  topologies::OutputFile out(output);
  analysis::OverheadCalibration result;
  {
    const py::gil_scoped_release release;
    result = analysis::calibrate_overheads(request);
  }
  out.stream() << result.profile_yaml;
  out.commit();
  return from_json(analysis::overhead_calibration_json(result, request));
}

// A serving engine's benchmarks fit `impl`'s (efficient's) engine work a step; the fitted profile is written.
py::object calibrate_engine_runs(const Cluster* cluster, const std::vector<std::string>& files, const std::string& impl,
                                 const std::string& output) {
  if (cluster == nullptr) throw topologies::InputError("calibrating from an engine's benchmarks needs the cluster");
  const topologies::InputFilesScope inputs;
  topologies::OutputFile out(output);
  const topologies::ImplProfile prior = topologies::load_impl_profile(impl.empty() ? "efficient" : impl);
  analysis::EngineCalibration result;
  {
    const py::gil_scoped_release release;
    result = analysis::calibrate_engine(cluster->topology().spec(), prior, files, output);
  }
  out.stream() << result.profile_yaml;
  out.commit();
  nlohmann::ordered_json json = analysis::engine_calibration_json(result);
  json["output"] = output;
  return from_json(json);
}

}  // namespace

void add_calibrate(py::module_& m) {
  m.def(
      "calibrate",
      [](const Cluster* cluster, const std::vector<std::string>& files, const std::string& output,
         const std::vector<long long>& tokens, const std::string& impl, const std::vector<std::string>& fit) {
        if (files.empty()) throw topologies::InputError("no measurement file given");
        if (analysis::engine_benchmark_files(files)) {
          if (!tokens.empty() || !fit.empty())
            throw topologies::InputError("tokens and fit are not for a serving engine's benchmarks");
          return calibrate_engine_runs(cluster, files, impl, output);
        }
        if (analysis::calibration_kind(files) == analysis::CalibrationKind::timed_decodes) {
          if (!tokens.empty()) throw topologies::InputError("tokens selects attention benchmarks, not timed decodes");
          return calibrate_timings(cluster, files, impl, fit, output);
        }
        if (!impl.empty() || !fit.empty())
          throw topologies::InputError(
              "impl and fit are for timed decodes (a timings CSV, treering-realrun decode JSON)");
        return calibrate_benchmarks(cluster, files, tokens, output);
      },
      py::arg("cluster").none(true), py::arg("files"), py::arg("output"), py::arg("tokens"), py::arg("impl"),
      py::arg("fit"));
}

}  // namespace treering::python
