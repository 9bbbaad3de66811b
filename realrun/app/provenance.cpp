#include "provenance.hpp"

#include <unistd.h>

#include <ctime>

#include "treering/realrun/build_info.hpp"
#include "treering/realrun/cuda_attention.hpp"

#ifndef TREERING_GIT_SHA
#define TREERING_GIT_SHA "unknown"
#endif

namespace treering::realrun::app {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

nlohmann::ordered_json provenance(const std::vector<std::string>& argv, model::RealrunBackend backend,
                                  const MpiTransport& transport) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  const BuildInfo info = build_info();
  return {{"host", host},
          {"time", utc_now()},
          {"git_sha", TREERING_GIT_SHA},
          {"argv", argv},
          {"backend", model::to_string(backend)},
          {"ranks", transport.ranks()},
          {"mpi", transport.library_version()},
          {"cuda", info.cuda_runtime_version},
          {"nccl", info.nccl_version},
          {"gpu", backend == model::RealrunBackend::cuda ? nlohmann::ordered_json(cuda::device_name()) : nullptr},
          {"driver", nullptr},
          {"cuda_devices", info.cuda_device_status}};
}

}  // namespace treering::realrun::app
