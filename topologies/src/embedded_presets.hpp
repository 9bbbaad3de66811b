// Presets compiled into the binary (topologies/clusters/*.yaml and topologies/impls/*.yaml, embedded by CMake as
// arrays of EmbeddedFile), loaded once and found by name: what cluster presets (presets.cpp) and
// implementation profiles (impl_presets.cpp) share. Private to topologies.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies::detail {

struct EmbeddedFile {
  const char* name;  // the file's name without .yaml: the preset's name
  const char* text;
};

// Every file loaded by `load(file)` (which throws InputError naming "preset:NAME"), sorted by `name_of`.
template <class T, std::size_t N, class Load, class NameOf>
std::vector<T> load_embedded(const EmbeddedFile (&files)[N], Load load, NameOf name_of) {
  std::vector<T> list;
  for (const EmbeddedFile& file : files) list.push_back(load(file));
  std::sort(list.begin(), list.end(), [&](const T& a, const T& b) { return name_of(a) < name_of(b); });
  return list;
}

// The preset named `name`; else InputError "unknown KIND 'x' (presets: a, b; a file path must contain '/' or end
// in .yaml)".
template <class T, class NameOf>
const T& find_preset(const std::vector<T>& presets, const std::string& name, const std::string& kind, NameOf name_of) {
  std::string known;
  for (const T& preset : presets) {
    if (name_of(preset) == name) return preset;
    known += (known.empty() ? "" : ", ") + name_of(preset);
  }
  throw InputError(
      {}, "unknown " + kind + " '" + name + "' (presets: " + known + "; a file path must contain '/' or end in .yaml)");
}

}  // namespace treering::topologies::detail
