// Calibrating an implementation profile's overheads from timed decodes (calibration_runs.hpp).
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/units.hpp"
#include "treering/analysis/calibration_runs.hpp"
#include "treering/validate/decode_timings.hpp"

namespace treering::analysis {
namespace {

using nlohmann::ordered_json;

struct Inputs {
  std::vector<validate::TimedDecode> timings;
  bool all_realrun_cpu = true;  // every timing is a realrun cpu-backend decode
};

Inputs read_inputs(const OverheadCalibrationRequest& request) {
  Inputs in;
  for (const std::string& file : request.files) {
    if (validate::is_decode_timings_csv(file)) {
      const auto rows = validate::read_decode_timings_csv(file);
      in.timings.insert(in.timings.end(), rows.begin(), rows.end());
      in.all_realrun_cpu = false;
      continue;
    }
    if (!request.cluster)
      throw topologies::InputError({file, 0, 0},
                                   "a treering-realrun decode file needs --cluster (the cluster it ran on)");
    const auto measured = validate::read_decode_measurements(file);
    for (const auto& m : measured) in.all_realrun_cpu = in.all_realrun_cpu && m.backend == "cpu";
    const auto rows = validate::timings_of(measured, *request.cluster);
    in.timings.insert(in.timings.end(), rows.begin(), rows.end());
  }
  return in;
}

ordered_json timing_json(const validate::FittedTiming& f) {
  const validate::TimedDecode& t = f.timing;
  return {{"file", t.file},
          {"line", t.line},
          {"cluster", t.cluster},
          {"workload", t.workload},
          {"algo", t.algorithm},
          {"gpus", t.gpus},
          {"seq_len", t.seq_len},
          {"batch", t.batch},
          {"tokens", t.tokens ? ordered_json(*t.tokens) : ordered_json()},
          {"prefill", t.prefill},
          {"measured_s", t.measured_s},
          {"prior_s", f.before_s},
          {"fitted_s", f.after_s},
          {"rel_error", f.rel_error()}};
}

}  // namespace

OverheadCalibration calibrate_overheads(const OverheadCalibrationRequest& request) {
  const Inputs in = read_inputs(request);
  const std::string prior_name = !request.impl.empty() ? request.impl
                                 : in.all_realrun_cpu  ? "treering-realrun-cpu"
                                                       : "efficient";
  OverheadCalibration result{topologies::load_impl_profile(prior_name), {}, {}};
  std::vector<validate::Overhead> free;
  for (const std::string& name : request.fit) free.push_back(validate::parse_overhead(name));
  try {
    result.fit = validate::fit_overheads(result.prior, in.timings, free,
                                         topologies::format_list(request.files) + ", " + today_utc());
  } catch (const topologies::InputError& error) {
    if (error.located()) throw;  // a file's error, as it was
    throw topologies::InputError(std::string(error.what()) + " (choose the overheads with --fit NAME,...)");
  }
  const std::string text = topologies::impl_profile_yaml(result.fit.profile);
  topologies::load_impl_profile_text(text, request.output_name);  // what is written must load
  result.profile_yaml = "# Written by treering calibrate from " + topologies::format_list(request.files) +
                        " (prior: " + result.prior.name + ").\n" + text;
  return result;
}

ordered_json overhead_calibration_json(const OverheadCalibration& result, const OverheadCalibrationRequest& request) {
  const validate::OverheadFit& fit = result.fit;
  ordered_json json{{"prior", result.prior.name}, {"inputs", request.files}, {"output", request.output_name}};
  json["overheads"] = ordered_json::array();
  for (const validate::OverheadEstimate& e : fit.estimates) {
    json["overheads"].push_back({{"overhead", to_string(e.overhead)},
                                 {"prior_s", e.prior_s ? ordered_json(*e.prior_s) : ordered_json()},
                                 {"fitted_s", e.fitted_s},
                                 {"std_error_s", e.std_error_s},
                                 {"at_bound", e.at_bound},
                                 {"share", e.share},
                                 {"kept_prior", e.kept_prior}});
  }
  json["base_share"] = fit.base_share;
  json["unexplained_share"] = fit.unexplained_share;
  json["timings"] = ordered_json::array();
  for (const validate::FittedTiming& f : fit.timings) json["timings"].push_back(timing_json(f));
  json["median_abs_rel_error_prior"] = fit.median_abs_rel_error_before;
  json["median_abs_rel_error"] = fit.median_abs_rel_error;
  json["max_abs_rel_error"] = fit.max_abs_rel_error;
  json["iterations"] = fit.iterations;
  return json;
}

}  // namespace treering::analysis
