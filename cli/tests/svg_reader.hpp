// Reading back what cairo writes into an SVG document, for the chart tests: whether it is well-formed XML, its
// texts (cairo draws each text as a <g> of <use> references to glyph outlines) and its paths.
#pragma once

#include <string>
#include <vector>

namespace treering::cli::test_svg {

// Tags nest and close, attribute values are quoted, one root element; the prolog (<?xml ?>), comments and
// CDATA are skipped over.
bool well_formed_xml(const std::string& document);

struct Glyph {
  std::string font, id;  // "#glyph2-5": font "2", id "5"; the same font's same character is the same glyph
  double x = 0, y = 0;   // where it is drawn
};

// One text as drawn: its glyphs in order.
struct TextRun {
  std::vector<Glyph> glyphs;
};

// The document's texts in the order they were drawn.
std::vector<TextRun> text_runs(const std::string& document);

struct Point {
  double x, y;
};

struct Path {
  int stroke_rgb = -1, fill_rgb = -1;  // 0xRRGGBB, -1 when none
  bool dashed = false;                 // a stroke-dasharray
  std::vector<Point> points;           // the ends of its straight segments: the M and L commands' points
  int subpaths = 0;                    // M commands
};

// Every <path> in the document, those in <defs> (glyph outlines, clip paths) included.
std::vector<Path> paths(const std::string& document);

}  // namespace treering::cli::test_svg
