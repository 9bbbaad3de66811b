// treering calibrate on timed decodes (calibrate_overheads.hpp): the fit is the analysis library's
// (calibrate_overheads); here the fitted profile is written and the fit reported.
#include "calibrate_overheads.hpp"

#include <iostream>

#include "table.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"

namespace treering::cli {
using namespace treering::analysis;  // the analysis library's requests and results
namespace {

std::string percent(double value) { return format_percent(value); }

std::string timed_what(const validate::TimedDecode& t) {
  if (!t.tokens) return "1 layer step";
  return std::to_string(*t.tokens) + " tokens" + (t.prefill ? " + prefill" : "");
}

void print_report(std::ostream& out, const validate::OverheadFit& fit, const topologies::ImplProfile& prior,
                  const OverheadCalibrationRequest& args) {
  out << "prior: " << prior.name << " (" << prior.origin << "); " << fit.timings.size() << " timings from "
      << topologies::format_list(args.files) << "\n\n";
  Table overheads({"overhead", "prior", "fitted", "+- (1 sigma)", "share of measured time"});
  for (const validate::OverheadEstimate& e : fit.estimates) {
    overheads.add_row({to_string(e.overhead), e.prior_s ? topologies::format_duration(*e.prior_s) : "the cluster's",
                       topologies::format_duration(e.fitted_s) + (e.kept_prior ? " (prior kept)" : ""),
                       e.at_bound ? "at 0 (bound)" : topologies::format_duration(e.std_error_s), percent(e.share)});
  }
  overheads.add_row({"the rest of the model", "", "", "", percent(fit.base_share)});
  overheads.add_row({"unexplained (measured - fitted)", "", "", "", percent(fit.unexplained_share)});
  overheads.print(out);
  for (const validate::OverheadEstimate& e : fit.estimates) {
    if (e.kept_prior) {
      out << to_string(e.overhead) << ": the prior kept (fitted " << topologies::format_duration(e.fitted_s)
          << ": median |error| " << percent(e.median_fitted) << ", " << percent(e.median_prior) << " with the prior)\n";
    } else if (!e.at_bound && e.std_error_s > e.fitted_s) {
      out << to_string(e.overhead)
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
  out << '\n';
  rows.print(out);
  out << "\nmedian |error| " << percent(fit.median_abs_rel_error_before) << " with the prior, "
      << percent(fit.median_abs_rel_error) << " fitted (max " << percent(fit.max_abs_rel_error) << "), "
      << fit.iterations << " iterations\nwrote " << args.output_name << " (use it with --impl " << args.output_name
      << ")\n";
}

// The fit: a table of the overheads and of the timings (table), or overhead_calibration_json (json).
class OverheadReport : public Report {
 public:
  OverheadReport(const OverheadCalibration& result, const OverheadCalibrationRequest& request)
      : result_(result), request_(request) {}
  void print_table(std::ostream& out) const override { print_report(out, result_.fit, result_.prior, request_); }
  nlohmann::ordered_json json() const override { return overhead_calibration_json(result_, request_); }

 private:
  const OverheadCalibration& result_;
  const OverheadCalibrationRequest& request_;
};

}  // namespace

void run_overhead_calibration(const OverheadCalibrationRequest& request, Reporter& reporter) {
  topologies::OutputFile out(request.output_name);  // opened first: a bad path fails before the fit
  const OverheadCalibration result = calibrate_overheads(request);
  out.stream() << result.profile_yaml;
  out.commit();
  reporter.report(OverheadReport(result, request));
}

}  // namespace treering::cli
