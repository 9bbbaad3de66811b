// Names of collective operations, algorithms and protocols, as the command line and JSON spell them.
#include <array>
#include <stdexcept>
#include <string>

#include "treering/model/collectives.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::model {
namespace {

constexpr std::array<const char*, 6> kOps{"allreduce", "allgather", "reducescatter",
                                          "broadcast", "sendrecv",  "alltoall"};
constexpr std::array<const char*, 9> kAlgorithms{"ring",           "tree",          "nvls",
                                                 "nvls-tree",      "hierarchical",  "recursive-doubling",
                                                 "collnet-direct", "collnet-chain", "p2p"};
constexpr std::array<const char*, 3> kProtocolNames{"LL", "LL128", "Simple"};

template <size_t N>
int index_of(const std::array<const char*, N>& names, const std::string& text, const char* what) {
  std::string known;
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i]) return static_cast<int>(i);
    known += (i ? ", " : "") + std::string(names[i]);
  }
  throw topologies::InputError("unknown " + std::string(what) + " '" + text + "' (expected one of: " + known + ")");
}

}  // namespace

const char* to_string(CollectiveOp op) { return kOps[static_cast<size_t>(op)]; }
const char* to_string(CollectiveAlgorithm algorithm) { return kAlgorithms[static_cast<size_t>(algorithm)]; }
const char* to_string(Protocol protocol) { return kProtocolNames[static_cast<size_t>(protocol)]; }

CollectiveOp parse_collective_op(const std::string& text) {
  return static_cast<CollectiveOp>(index_of(kOps, text, "collective operation"));
}
CollectiveAlgorithm parse_collective_algorithm(const std::string& text) {
  return static_cast<CollectiveAlgorithm>(index_of(kAlgorithms, text, "collective algorithm"));
}
Protocol parse_protocol(const std::string& text) {
  return static_cast<Protocol>(index_of(kProtocolNames, text, "protocol"));
}

bool reduces_in_network(CollectiveAlgorithm algorithm, int domains) {
  return algorithm == CollectiveAlgorithm::collnet_direct || algorithm == CollectiveAlgorithm::collnet_chain ||
         (algorithm == CollectiveAlgorithm::nvls && domains > 1);
}

std::string requirements(CollectiveAlgorithm algorithm) {
  const std::string sharp = "the network's in_network_reduction: true (SHARP), 2 or more nodes, Simple, all-reduce";
  switch (algorithm) {
    case CollectiveAlgorithm::collnet_direct: return " (needs " + sharp + ", an NVSwitch and at most 8 GPUs a node)";
    case CollectiveAlgorithm::collnet_chain: return " (needs " + sharp + " and at most 8 GPUs a node)";
    case CollectiveAlgorithm::nvls:
      return " (needs in-switch reduction; across nodes also " + sharp + " and 2 or more GPUs a node)";
    case CollectiveAlgorithm::nvls_tree:
      return " (needs in-switch reduction, 2 or more nodes and GPUs a node, all-reduce)";
    default: return "";
  }
}

}  // namespace treering::model
