#include <fstream>
#include <limits>
#include <sstream>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/workload_spec.hpp"
#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

Workload read_workload(const std::string& file, const YAML::Node& root) {
  yaml::StrictMap map(root, file, "the workload",
                      {"name", "description", "source", "layers", "query_heads", "kv_heads", "head_dim", "parameters",
                       "dtype", "batch"});
  Workload workload;
  workload.name = map.name("name");
  if (map.has("description")) workload.description = map.string("description");
  workload.source = map.has("source") ? map.string("source") : file;
  workload.layers = map.integer("layers", 1, 100000);
  workload.query_heads = map.integer("query_heads", 1, 65536);
  workload.kv_heads = map.integer("kv_heads", 1, 65536);
  workload.head_dim = map.integer("head_dim", 1, 65536);
  if (workload.query_heads % workload.kv_heads != 0) {
    yaml::fail(file, map.required("kv_heads"),
               "query_heads (" + std::to_string(workload.query_heads) + ") must be a multiple of kv_heads (" +
                   std::to_string(workload.kv_heads) + ")");
  }
  // hidden_size is an int: 65536 heads of 65536 would overflow it (undefined behaviour), so the product is bounded.
  const long long hidden_size = static_cast<long long>(workload.query_heads) * workload.head_dim;
  if (hidden_size > std::numeric_limits<int>::max()) {
    yaml::fail(file, map.required("head_dim"),
               "query_heads x head_dim (" + std::to_string(hidden_size) + ") is too large (at most " +
                   std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  workload.hidden_size = static_cast<int>(hidden_size);
  workload.parameters = map.number_or("parameters", 0.0, 1e15, 0.0);
  if (map.has("dtype")) {
    workload.dtype = map.string("dtype");
    if (workload.dtype != "bf16" && workload.dtype != "fp16") {
      yaml::fail(file, map.required("dtype"), "dtype must be bf16 or fp16, got '" + workload.dtype + "'");
    }
  }
  workload.batch = map.integer_or("batch", 1, 1000000, 1);
  return workload;
}

}  // namespace

Workload load_workload_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& error) {
    throw InputError(yaml::location_of(path, error.mark), "YAML syntax: " + error.msg);
  }
  return read_workload(path, root);
}

}  // namespace treering::topologies
