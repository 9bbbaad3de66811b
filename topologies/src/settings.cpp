#include "treering/topologies/settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "treering/topologies/load.hpp"
#include "yaml_reader.hpp"

namespace treering::topologies {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  return parts;
}

// The node at parts[from..] below `node` (any kind), or an undefined node.
YAML::Node find_node(const YAML::Node& node, const std::vector<std::string>& parts, size_t from) {
  if (from == parts.size()) return node;
  const std::string& part = parts[from];
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (entry.first.IsScalar() && entry.first.Scalar() == part) return find_node(entry.second, parts, from + 1);
    }
  } else if (node.IsSequence() && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) {
    const size_t index = std::stoul(part);
    if (index < node.size()) return find_node(node[index], parts, from + 1);
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// The scalar at parts[from..] below `node`, or an undefined node.
YAML::Node find_scalar(const YAML::Node& node, const std::vector<std::string>& parts, size_t from) {
  const YAML::Node found = find_node(node, parts, from);
  return found && found.IsScalar() ? found : YAML::Node(YAML::NodeType::Undefined);
}

// Where a path that does not start at the top may apply: every node group, GPU model and the network.
std::vector<YAML::Node> shorthand_places(const YAML::Node& root) {
  std::vector<YAML::Node> places;
  if (!root.IsMap()) return places;
  if (root["nodes"] && root["nodes"].IsSequence()) {
    for (const YAML::Node& group : root["nodes"]) places.push_back(group);
  }
  if (root["gpu_models"] && root["gpu_models"].IsMap()) {
    for (const auto& entry : root["gpu_models"]) places.push_back(entry.second);
  }
  if (root["network"]) places.push_back(root["network"]);
  return places;
}

// The scalars a path names: from the top, else in every node group, GPU model and the network.
std::vector<YAML::Node> resolve(const YAML::Node& root, const std::string& path) {
  const std::vector<std::string> parts = split_path(path);
  if (parts.empty() || std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
    return {};
  if (YAML::Node top = find_scalar(root, parts, 0)) return {top};
  std::vector<YAML::Node> found;
  for (const YAML::Node& place : shorthand_places(root)) {
    if (YAML::Node scalar = find_scalar(place, parts, 0)) found.push_back(scalar);
  }
  return found;
}

YAML::Node parse(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& error) {
    throw InputError(yaml::location_of(source, error.mark), "YAML syntax: " + error.msg);
  }
}

// Where a scalar's text ends: a quoted one at its closing quote, a plain one before a comment, the end of the
// line or (inside {...} and [...]) the next ',', '}' or ']'; trailing blanks left out.
size_t scalar_end(const std::string& text, size_t start) {
  if (text[start] == '"' || text[start] == '\'') {
    const size_t close = text.find(text[start], start + 1);
    return close == std::string::npos ? text.size() : close + 1;
  }
  size_t end = start;
  while (end < text.size() && text[end] != '\n' && text[end] != ',' && text[end] != '}' && text[end] != ']' &&
         !(text[end] == '#' && end > start && (text[end - 1] == ' ' || text[end - 1] == '\t'))) {
    ++end;
  }
  while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
  return end;
}

// Values that YAML would read as something else than the plain text keep their meaning in double quotes.
std::string as_yaml_scalar(const std::string& value) {
  const bool plain = !value.empty() && value.find_first_of(":#,[]{}\"'\n") == std::string::npos &&
                     value.front() != ' ' && value.back() != ' ' && value.front() != '-' && value.front() != '&' &&
                     value.front() != '*';
  if (plain) return value;
  std::string quoted = "\"";
  for (char ch : value) quoted += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return quoted + "\"";
}

// Optional top-level scalars --set may add where a file leaves them out (the loader checks them as any).
bool is_addable(const std::string& path) { return path == "nccl_version" || path == "description"; }

// The maps a new key KEY of PATH = PARENT.KEY goes into: PARENT from the top, else in every node group, GPU
// model and the network that has it (as resolve finds scalars), where KEY is not there yet.
std::vector<YAML::Node> parent_maps(const YAML::Node& root, const std::vector<std::string>& parts) {
  const std::vector<std::string> parent(parts.begin(), parts.end() - 1);
  std::vector<YAML::Node> candidates;
  if (YAML::Node top = find_node(root, parent, 0); top && top.IsMap()) {
    candidates.push_back(top);
  } else {
    for (const YAML::Node& place : shorthand_places(root)) {
      if (YAML::Node map = find_node(place, parent, 0); map && map.IsMap()) candidates.push_back(map);
    }
  }
  std::vector<YAML::Node> maps;
  for (const YAML::Node& map : candidates) {
    if (!find_node(map, {parts.back()}, 0)) maps.push_back(map);
  }
  return maps;
}

// TEXT with KEY: VALUE added to each map, as its first key (block style: on a line of its own at the keys'
// indentation; flow style: "{KEY: VALUE, ..."), so that the loader checks it as any key of the file: an unknown one
// is its error. Example: `fabric.domain_nodes=9` in a group whose fabric is "      type: nvswitch" adds the line
// "      domain_nodes: 9" above it. Throws for an empty map ("{}": no key to stand beside).
std::string with_added_key(std::string text, const std::vector<YAML::Node>& maps, const Setting& setting,
                           const std::string& source) {
  const std::string key = split_path(setting.path).back();
  const std::string entry = key + ": " + as_yaml_scalar(setting.value);
  std::vector<std::pair<size_t, std::string>> inserts;  // (position of the map's first key, what goes there)
  for (const YAML::Node& map : maps) {
    if (map.size() == 0) {
      throw InputError({}, "--set " + setting.path + "=" + setting.value + ": " + source + " has an empty map where '" +
                               key + "' would go: add it to the file");
    }
    const YAML::Mark first = map.begin()->first.Mark();
    const bool flow = map.Style() == YAML::EmitterStyle::Flow;
    inserts.emplace_back(first.pos,
                         flow ? entry + ", " : entry + "\n" + std::string(static_cast<size_t>(first.column), ' '));
  }
  std::sort(inserts.rbegin(), inserts.rend());  // from the end: earlier positions stay valid
  for (const auto& [position, added] : inserts) text.insert(position, added);
  return text;
}

}  // namespace

Setting parse_setting(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw InputError({}, "--set " + text + ": expected PATH=VALUE, e.g. nics.bandwidth=800Gb/s");
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

std::string apply_settings(std::string_view yaml_text, const std::string& source,
                           const std::vector<Setting>& settings) {
  std::string text(yaml_text);
  for (const Setting& setting : settings) {
    const YAML::Node root = parse(text, source);
    const std::vector<YAML::Node> scalars = resolve(root, setting.path);
    const std::vector<std::string> parts = split_path(setting.path);
    const bool well_formed =
        !parts.empty() && std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); });
    if (scalars.empty() && is_addable(setting.path) && root.IsMap() && !root[setting.path]) {
      if (root.Style() == YAML::EmitterStyle::Flow) {
        throw InputError({}, "--set " + setting.path + "=" + setting.value + ": " + source +
                                 " is one flow-style map ({...}); "
                                 "add '" +
                                 setting.path + "' to the file");
      }
      text += (text.empty() || text.back() == '\n' ? "" : "\n") + setting.path + ": " + as_yaml_scalar(setting.value) +
              "\n";
      continue;
    }
    if (scalars.empty() && well_formed && parts.size() > 1) {
      if (const std::vector<YAML::Node> maps = parent_maps(root, parts); !maps.empty()) {
        text = with_added_key(text, maps, setting, source);
        continue;
      }
    }
    if (scalars.empty() && setting.path.find('.') == std::string::npos && root.IsMap() && root[setting.path] &&
        root[setting.path].IsNull()) {
      throw InputError({}, "--set " + setting.path + "=" + setting.value + ": '" + setting.path + "' is empty in " +
                               source + ": give it a value there");
    }
    if (scalars.empty()) {
      throw InputError({}, "--set " + setting.path + "=" + setting.value + ": " + source + " has no value at '" +
                               setting.path +
                               "' (name a key that holds a value, e.g. nics.bandwidth or nodes.0.count)");
    }
    std::vector<std::pair<size_t, size_t>> spans;
    for (const YAML::Node& scalar : scalars) spans.emplace_back(scalar.Mark().pos, scalar_end(text, scalar.Mark().pos));
    std::sort(spans.rbegin(), spans.rend());  // from the end: earlier positions stay valid
    for (const auto& [start, end] : spans) text.replace(start, end - start, as_yaml_scalar(setting.value));
  }
  return text;
}

void check_setting_conflicts(const std::vector<Setting>& settings, std::optional<int> nodes,
                             std::optional<int> gpus_per_node) {
  // "count" or "nodes.N.count" (not "nodes.N.nics.count"): a group's node count; likewise gpus_per_node.
  const auto names = [](const std::string& path, const std::string& key) {
    const std::vector<std::string> parts = split_path(path);
    return (parts.size() == 1 && parts[0] == key) ||
           (parts.size() == 3 && parts[0] == "nodes" && !parts[1].empty() &&
            std::all_of(parts[1].begin(), parts[1].end(), ::isdigit) && parts[2] == key);
  };
  for (const Setting& setting : settings) {
    const std::string given = "--set " + setting.path + "=" + setting.value;
    if (nodes && names(setting.path, "count")) {
      throw InputError({}, given + " and --nodes " + std::to_string(*nodes) + " both set the node count: give one");
    }
    if (gpus_per_node && names(setting.path, "gpus_per_node")) {
      throw InputError({}, given + " and --gpus-per-node " + std::to_string(*gpus_per_node) +
                               " both set the GPUs per node: give one");
    }
  }
}

std::string scale_setting(std::string_view yaml_text, const std::string& source, const std::string& path,
                          double factor) {
  std::string text(yaml_text);
  const std::vector<YAML::Node> scalars = resolve(parse(text, source), path);
  if (scalars.empty()) throw InputError({}, source + " has no value at '" + path + "'");
  std::vector<std::pair<size_t, std::string>> scaled;  // position, new text
  for (const YAML::Node& scalar : scalars)
    scaled.emplace_back(scalar.Mark().pos, scale_quantity(scalar.Scalar(), factor));
  std::sort(scaled.rbegin(), scaled.rend());
  for (const auto& [start, value] : scaled) text.replace(start, scalar_end(text, start) - start, as_yaml_scalar(value));
  return text;
}

std::vector<std::string> setting_values(std::string_view yaml_text, const std::string& source,
                                        const std::string& path) {
  std::vector<std::string> values;
  for (const YAML::Node& scalar : resolve(parse(yaml_text, source), path)) values.push_back(scalar.Scalar());
  return values;
}

std::string scale_quantity(const std::string& text, double factor) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin) throw InputError({}, "'" + text + "' is not a number with a unit");
  char scaled[64];
  std::snprintf(scaled, sizeof scaled, "%.9g", number * factor);
  return scaled + std::string(end);
}

ClusterSource cluster_source(const std::string& name_or_path) {
  for (const Preset& preset : cluster_presets()) {
    if (preset.name == name_or_path) return {preset.yaml_text, "preset:" + preset.name};
  }
  if (name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".yaml") &&
      !name_or_path.ends_with(".yml")) {
    load_cluster(name_or_path);  // throws the unknown-preset error with the list
  }
  return {read_input_file(name_or_path), name_or_path};
}

}  // namespace treering::topologies
