// A cluster as the Python module holds it: the graph and the decode model on all its GPUs, together with how it
// was made (the preset or file, the node overrides and the what-if edits), so that a what-if can rebuild it
// with more edits (Cluster.what_if, treering.sensitivity). Plain C++: no Python here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "treering/model/decode.hpp"
#include "treering/topologies/topology.hpp"

namespace treering::python {

// One edit of the cluster file's text, applied in order: `set` replaces the scalar(s) PATH names by `value`
// (topologies::apply_settings), `scale` multiplies them by `factor` in their own unit (topologies::scale_setting).
struct Edit {
  std::string path;
  std::string value;  // set: the new value
  double factor = 0;  // scale: the factor (> 0); 0 for a set
};

struct ClusterRecipe {
  std::string source;                // a preset name or a YAML file
  std::optional<int> nodes;          // as --nodes
  std::optional<int> gpus_per_node;  // as --gpus-per-node
  std::vector<Edit> edits;
};

class Cluster {
 public:
  // Loads and checks the cluster. Throws topologies::InputError (FILE:LINE:COL) or std::invalid_argument.
  explicit Cluster(ClusterRecipe recipe);

  const ClusterRecipe& recipe() const { return recipe_; }
  const topologies::Topology& topology() const { return *topology_; }
  const model::DecodeModel& decode() const { return *decode_; }
  // The same cluster with `more` edits after its own.
  Cluster with_edits(const std::vector<Edit>& more) const;
  // The scalars PATH names in the edited file, as written ("400Gb/s"): what a scale would multiply.
  std::vector<std::string> setting_values(const std::string& path) const;
  // The file's text with the edits applied, and its name for messages ("preset:dgx-h100" or the path).
  const std::string& text() const { return text_; }
  const std::string& source_name() const { return source_name_; }

 private:
  ClusterRecipe recipe_;
  std::string text_;         // the file's text with the edits applied
  std::string source_name_;  // "preset:NAME" or the path, for messages
  std::unique_ptr<topologies::Topology> topology_;
  std::unique_ptr<model::DecodeModel> decode_;  // points into *topology_: both live on the heap, never moved
};

}  // namespace treering::python
