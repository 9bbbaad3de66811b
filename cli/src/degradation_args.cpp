#include "degradation_args.hpp"
#include "treering/topologies/input_error.hpp"

#include <stdexcept>

namespace treering::cli {
namespace {

// "GPU:VALUE" -> {GPU, VALUE}.
std::pair<int, double> gpu_and_value(const std::string& text, const char* option) {
  const size_t colon = text.find(':');
  try {
    size_t used_gpu = 0, used_value = 0;
    if (colon == std::string::npos) throw topologies::InputError("no colon");
    const int gpu = std::stoi(text.substr(0, colon), &used_gpu);
    const double value = std::stod(text.substr(colon + 1), &used_value);
    if (used_gpu != colon || used_value != text.size() - colon - 1) throw topologies::InputError("trailing text");
    return {gpu, value};
  } catch (const std::exception&) {
    throw topologies::InputError(std::string(option) + " " + text + ": expected GPU:NUMBER, e.g. 3:2");
  }
}

}  // namespace

void add_degradation_options(CLI::App& command, DegradationArgs& args) {
  command
      .add_option("--slow-gpu", args.slow_gpus,
                  "What-if: a straggler, GPU:FACTOR (3:2 = GPU 3's kernels take twice as long); repeatable")
      ->allow_extra_args(false);
  command
      .add_option("--slow-nic", args.slow_nics,
                  "What-if: the NIC of GPU:FRACTION of its bandwidth (0:0.25); repeatable")
      ->allow_extra_args(false);
  command
      .add_option("--link-down", args.links_down,
                  "What-if: the cable DEVICE,DEVICE out of service, traffic rerouted (rail0/leaf0,spine1); repeatable")
      ->allow_extra_args(false);
}

sim::Degradation make_degradation(const DegradationArgs& args, const topologies::Topology& topology) {
  sim::Degradation degradation;
  for (const std::string& text : args.slow_gpus) {
    const auto [gpu, factor] = gpu_and_value(text, "--slow-gpu");
    if (gpu < 0 || gpu >= topology.gpu_count())
      throw topologies::InputError("--slow-gpu " + text + ": no GPU " + std::to_string(gpu));
    if (!(factor >= 1))
      throw topologies::InputError("--slow-gpu " + text + ": the factor is how many times slower, at least 1");
    degradation.gpu_slowdown[gpu] = factor;
  }
  for (const std::string& text : args.slow_nics) {
    const auto [gpu, fraction] = gpu_and_value(text, "--slow-nic");
    sim::slow_nic(topology, gpu, fraction, degradation);
  }
  for (const std::string& text : args.links_down) {
    const size_t comma = text.find(',');
    if (comma == std::string::npos) throw topologies::InputError("--link-down " + text + ": expected DEVICE,DEVICE");
    sim::take_down(topology, text.substr(0, comma), text.substr(comma + 1), degradation);
  }
  return degradation;
}

}  // namespace treering::cli
