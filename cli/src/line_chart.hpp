// Line charts as PNG files, drawn in memory with a built-in bitmap font and encoded with zlib alone, so that the
// `treering` command can write figures without Python, gnuplot or a graphics library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace treering::cli {

// Turns a tick's value into its label.
using TickFormatter = std::function<std::string(double)>;

struct ChartSeries {
  std::string name;                 // legend text
  std::vector<double> x, y;         // same size; points with non-positive values on a log axis are skipped
  std::uint32_t rgb = 0x1f77b4;     // line colour, 0xRRGGBB
  bool dashed = false;              // e.g. the simulator's figures dashed beside the model's solid
  bool markers = true;              // a small filled square at each point
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log_x = true, log_y = true;
  std::vector<ChartSeries> series;
  int width_px = 960, height_px = 600;
  // Tick labels; empty means the defaults: format_si for x, format_general for y.
  TickFormatter format_x, format_y;
};

// Renders the chart and returns the PNG file's bytes (8-bit RGB). Points with a non-finite coordinate, or a
// non-positive one on a log axis, are left out. Throws std::invalid_argument when no point is left to draw, when a
// series' x and y differ in size, or when the size is under 200x150 px or over 16384 px a side.
std::string render_png(const LineChart& chart);

// Renders and writes the file; throws std::runtime_error naming the path when it cannot be written.
void write_png(const LineChart& chart, const std::string& path);

// "80k", "1.3M", "5.12G": up to 4 significant digits with an SI prefix from 1000 up; "%g" below.
std::string format_si(double value);
// printf's "%g": "0.002", "150", "1e-05".
std::string format_general(double value);

namespace detail {

// The raster layer (bitmap_font.cpp). An RGB image in memory: rows top to bottom, 3 bytes per pixel, white when
// created.
struct Canvas {
  Canvas(int image_width_px, int image_height_px);
  void set(int x_px, int y_px, std::uint32_t rgb);  // ignores pixels outside the image
  void fill_rect(int left_px, int top_px, int width, int height, std::uint32_t rgb);
  std::uint32_t get(int x_px, int y_px) const;

  int width_px, height_px;
  std::vector<std::uint8_t> rgb_bytes;
};

// The bitmap font: 5x7 glyphs for printable ASCII plus 2 rows of descender, 1 px apart, each
// pixel drawn as a scale x scale square. Text is UTF-8; a character outside the font is drawn as a small box.
constexpr int kGlyphWidthPx = 5, kGlyphAdvancePx = 6, kCapHeightPx = 7, kGlyphHeightPx = 9;
int text_width_px(const std::string& text, int scale);
// Draws text with the top of its capitals at top_px.
void draw_text(Canvas& canvas, int left_px, int top_px, const std::string& text, std::uint32_t rgb, int scale);

// The canvas as PNG file bytes (png_encode.cpp): 8-bit RGB, one zlib-compressed IDAT. Throws std::runtime_error
// when zlib fails.
std::string encode_png(const Canvas& canvas);

}  // namespace detail
}  // namespace treering::cli
