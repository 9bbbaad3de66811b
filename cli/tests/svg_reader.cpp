// Reading back cairo's SVG: a small XML well-formedness check and the attributes the chart tests look at.
#include "svg_reader.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace treering::cli::test_svg {
namespace {

// The value of attribute name in the tag's text, or "" when it has none.
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t start = tag.find(key);
  if (start == std::string::npos) return "";
  const std::size_t from = start + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

// "stroke:rgb(83.921569%,15.294118%,15.686275%)" in a style -> 0xd62728; -1 when the style sets none.
int colour(const std::string& style, const std::string& property) {
  const std::size_t at = style.find(property + ":rgb(");
  if (at == std::string::npos) return -1;
  std::istringstream in(style.substr(at + property.size() + 5));
  int rgb = 0;
  for (int channel = 0; channel < 3; ++channel) {
    double percent = 0;
    char separator = 0;
    in >> percent >> separator >> separator;  // "83.921569" "%" ","
    rgb = (rgb << 8) | static_cast<int>(std::lround(percent * 255 / 100));
  }
  return rgb;
}

// Each tag's text from '<' to '>', quoted values kept whole; comments, CDATA and the prolog as they are.
std::vector<std::string> tags(const std::string& document) {
  std::vector<std::string> found;
  for (std::size_t at = document.find('<'); at != std::string::npos; at = document.find('<', at)) {
    std::size_t end = at + 1;
    if (document.compare(at, 4, "<!--") == 0) {
      end = document.find("-->", at);
      end = end == std::string::npos ? std::string::npos : end + 2;
    } else if (document.compare(at, 9, "<![CDATA[") == 0) {
      end = document.find("]]>", at);
      end = end == std::string::npos ? std::string::npos : end + 2;
    } else {
      char quote = 0;
      for (; end < document.size() && (quote != 0 || document[end] != '>'); ++end) {
        if (quote == 0 && (document[end] == '"' || document[end] == '\''))
          quote = document[end];
        else if (document[end] == quote)
          quote = 0;
      }
      if (end >= document.size()) end = std::string::npos;
    }
    if (end == std::string::npos) return {"<"};  // never closed: not a tag
    found.push_back(document.substr(at, end - at + 1));
    at = end + 1;
  }
  return found;
}

std::string tag_name(const std::string& tag) {
  const std::size_t from = tag[1] == '/' ? 2 : 1;
  std::size_t end = from;
  while (end < tag.size() && tag[end] != ' ' && tag[end] != '\n' && tag[end] != '>' && tag[end] != '/') ++end;
  return tag.substr(from, end - from);
}

}  // namespace

bool well_formed_xml(const std::string& document) {
  std::vector<std::string> open;
  int roots = 0;
  for (const std::string& tag : tags(document)) {
    if (tag.size() < 2 || tag.back() != '>') return false;
    if (tag[1] == '?' || tag[1] == '!') continue;  // prolog, comment, CDATA, doctype
    const std::string name = tag_name(tag);
    if (name.empty()) return false;
    if (tag[1] == '/') {
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
      continue;
    }
    if (open.empty()) ++roots;
    if (tag[tag.size() - 2] != '/') open.push_back(name);
  }
  return open.empty() && roots == 1;
}

std::vector<TextRun> text_runs(const std::string& document) {
  std::vector<TextRun> runs;
  TextRun current;
  for (const std::string& tag : tags(document)) {
    const std::string name = tag_name(tag);
    const bool closes_group = name == "g" && (tag[1] == '/' || tag[tag.size() - 2] != '/');
    if (closes_group && !current.glyphs.empty()) runs.push_back(std::move(current)), current = {};
    if (name != "use" || tag[1] == '/') continue;
    const std::string href = attribute(tag, "xlink:href");  // "#glyph2-5"
    const std::size_t dash = href.find('-');
    if (href.rfind("#glyph", 0) != 0 || dash == std::string::npos) continue;
    current.glyphs.push_back({href.substr(6, dash - 6), href.substr(dash + 1),
                              std::strtod(attribute(tag, "x").c_str(), nullptr),
                              std::strtod(attribute(tag, "y").c_str(), nullptr)});
  }
  if (!current.glyphs.empty()) runs.push_back(std::move(current));
  return runs;
}

std::vector<Path> paths(const std::string& document) {
  std::vector<Path> found;
  for (const std::string& tag : tags(document)) {
    if (tag_name(tag) != "path" || tag[1] == '/') continue;
    Path path;
    const std::string style = attribute(tag, "style");
    path.stroke_rgb = colour(style, "stroke");
    path.fill_rgb = colour(style, "fill");
    path.dashed = style.find("stroke-dasharray") != std::string::npos;
    std::istringstream commands(attribute(tag, "d"));
    std::string command;
    while (commands >> command) {
      if (command == "M" || command == "L") {
        Point point{};
        commands >> point.x >> point.y;
        path.points.push_back(point);
        path.subpaths += command == "M";
      } else if (command == "C") {
        double ignored = 0;
        for (int i = 0; i < 6; ++i) commands >> ignored;
      }
    }
    found.push_back(std::move(path));
  }
  return found;
}

}  // namespace treering::cli::test_svg
