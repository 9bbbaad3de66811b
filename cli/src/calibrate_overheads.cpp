// treering calibrate on timed decodes (calibrate_overheads.hpp).
#include "calibrate_overheads.hpp"
#include "treering/analysis/network_calibration.hpp"  // today_utc

#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "table.hpp"
#include "treering/topologies/impl_profile.hpp"
#include "treering/topologies/input_error.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"
#include "treering/validate/decode_timings.hpp"
#include "treering/validate/overhead_fit.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

using nlohmann::ordered_json;

std::string percent(double value) { return format_percent(value); }

struct Inputs {
  std::vector<validate::TimedDecode> timings;
  bool all_realrun_cpu = true;  // every timing is a realrun cpu-backend decode
};

Inputs read_inputs(const OverheadCalibrationArgs& args) {
  Inputs in;
  for (const std::string& file : args.files) {
    if (validate::is_decode_timings_csv(file)) {
      const auto rows = validate::read_decode_timings_csv(file);
      in.timings.insert(in.timings.end(), rows.begin(), rows.end());
      in.all_realrun_cpu = false;
      continue;
    }
    if (!args.cluster)
      throw topologies::InputError({file, 0, 0},
                                   "a treering-realrun decode file needs --cluster (the cluster it ran on)");
    const auto measured = validate::read_decode_measurements(file);
    for (const auto& m : measured) in.all_realrun_cpu = in.all_realrun_cpu && m.backend == "cpu";
    const auto rows = validate::timings_of(measured, *args.cluster);
    in.timings.insert(in.timings.end(), rows.begin(), rows.end());
  }
  return in;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string timed_what(const validate::TimedDecode& t) {
  if (!t.tokens) return "1 layer step";
  return std::to_string(*t.tokens) + " tokens" + (t.prefill ? " + prefill" : "");
}

void print_report(const validate::OverheadFit& fit, const topologies::ImplProfile& prior,
                  const OverheadCalibrationArgs& args) {
  std::cout << "prior: " << prior.name << " (" << prior.origin << "); " << fit.timings.size() << " timings from "
            << joined(args.files) << "\n\n";
  Table overheads({"overhead", "prior", "fitted", "+- (1 sigma)", "share of measured time"});
  for (const validate::OverheadEstimate& e : fit.estimates) {
    overheads.add_row({to_string(e.overhead), e.prior_s ? topologies::format_duration(*e.prior_s) : "the cluster's",
                       topologies::format_duration(e.fitted_s) + (e.kept_prior ? " (prior kept)" : ""),
                       e.at_bound ? "at 0 (bound)" : topologies::format_duration(e.std_error_s), percent(e.share)});
  }
  overheads.add_row({"the rest of the model", "", "", "", percent(fit.base_share)});
  overheads.add_row({"unexplained (measured - fitted)", "", "", "", percent(fit.unexplained_share)});
  overheads.print(std::cout);
  for (const validate::OverheadEstimate& e : fit.estimates) {
    if (e.kept_prior) {
      std::cout << to_string(e.overhead) << ": the prior kept (fitted " << topologies::format_duration(e.fitted_s)
                << ": median |error| " << percent(e.median_fitted) << ", " << percent(e.median_prior)
                << " with the prior)\n";
    } else if (!e.at_bound && e.std_error_s > e.fitted_s) {
      std::cout << to_string(e.overhead)
                << ": its 1-sigma error is larger than its value: the timings do not tell it from 0\n";
    }
  }
  Table rows(
      {"file:line", "cluster", "workload", "algo", "gpus", "seq_len", "timed", "measured", "prior", "fitted", "error"});
  for (const validate::FittedTiming& f : fit.timings) {
    const validate::TimedDecode& t = f.timing;
    std::string where = t.file;
    if (t.line) where += ':' + std::to_string(t.line);  // (":" + a temporary made GCC 12 warn -Wrestrict falsely)
    rows.add_row({where, t.cluster, t.workload, t.algorithm, std::to_string(t.gpus),
                  topologies::format_token_count(t.seq_len), timed_what(t), topologies::format_duration(t.measured_s),
                  topologies::format_duration(f.before_s), topologies::format_duration(f.after_s),
                  percent(f.rel_error())});
  }
  std::cout << '\n';
  rows.print(std::cout);
  std::cout << "\nmedian |error| " << percent(fit.median_abs_rel_error_before) << " with the prior, "
            << percent(fit.median_abs_rel_error) << " fitted (max " << percent(fit.max_abs_rel_error) << "), "
            << fit.iterations << " iterations\nwrote " << args.output << " (use it with --impl " << args.output
            << ")\n";
}

ordered_json report_json(const validate::OverheadFit& fit, const topologies::ImplProfile& prior,
                         const OverheadCalibrationArgs& args) {
  ordered_json json{{"prior", prior.name}, {"inputs", args.files}, {"output", args.output}};
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
  for (const validate::FittedTiming& f : fit.timings) {
    const validate::TimedDecode& t = f.timing;
    json["timings"].push_back({{"file", t.file},
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
                               {"rel_error", f.rel_error()}});
  }
  json["median_abs_rel_error_prior"] = fit.median_abs_rel_error_before;
  json["median_abs_rel_error"] = fit.median_abs_rel_error;
  json["max_abs_rel_error"] = fit.max_abs_rel_error;
  json["iterations"] = fit.iterations;
  return json;
}

}  // namespace

bool is_timings_file(const std::string& path) {
  return validate::is_decode_timings_csv(path) || validate::is_decode_file(path);
}

void run_overhead_calibration(const OverheadCalibrationArgs& args) {
  const Inputs in = read_inputs(args);
  const std::string prior_name = !args.impl.empty()   ? args.impl
                                 : in.all_realrun_cpu ? "treering-realrun-cpu"
                                                      : "efficient";
  const topologies::ImplProfile prior = topologies::load_impl_profile(prior_name);
  std::vector<validate::Overhead> free;
  for (const std::string& name : args.fit) free.push_back(validate::parse_overhead(name));
  topologies::OutputFile out(args.output);  // opened first: a bad path fails before the fit; replaced only at the end
  validate::OverheadFit fit;
  try {
    fit = validate::fit_overheads(prior, in.timings, free, joined(args.files) + ", " + today_utc());
  } catch (const topologies::InputError& error) {
    if (error.located()) throw;  // a file's error, as it was
    throw topologies::InputError(std::string(error.what()) + " (choose the overheads with --fit NAME,...)");
  }
  const std::string text = topologies::impl_profile_yaml(fit.profile);
  topologies::load_impl_profile_text(text, args.output);  // what is written must load
  out.stream() << "# Written by treering calibrate from " << joined(args.files) << " (prior: " << prior.name << ").\n"
               << text;
  out.commit();
  if (args.format == "json") {
    std::cout << report_json(fit, prior, args).dump(2) << '\n';
  } else {
    print_report(fit, prior, args);
  }
}

}  // namespace treering::cli
