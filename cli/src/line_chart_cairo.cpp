// Draws a chart's layout with cairo: places the plot, the tick labels, the titles and the legend on the image
// (text measured in the font cairo draws with), then draws them. The same routine draws onto an image surface
// (the PNG) and an SVG surface (line_chart_files.cpp).
#include "line_chart_cairo.hpp"
#include "treering/topologies/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace treering::cli::detail {
namespace {

// Where the layout goes on the image, in px from the top left corner.
struct ChartPlacement {
  double scale = 1;  // of text and lines: 1 up to 960x600 px, more on larger images
  double left_px = 0, top_px = 0, right_px = 0, bottom_px = 0;          // the plot's frame
  double legend_width_px = 0, legend_height_px = 0, legend_row_px = 0;  // 0 wide: no legend
  std::vector<std::string> legend_names;                                // the legend's names, cut to fit
  double x_px(const ChartAxis& axis, double value) const;
  double y_px(const ChartAxis& axis, double value) const;
};

constexpr const char* kFontFamily = "sans-serif";
// Sizes in px for images up to 960x600; larger images scale them up (ChartPlacement::scale).
constexpr double kTickFontPx = 13, kAxisTitleFontPx = 14, kTitleFontPx = 16;
constexpr double kPadPx = 12, kTickPx = 5, kMinorTickPx = 3, kLabelGapPx = 4, kTitleGapPx = 8;
constexpr double kLineWidthPx = 1.8, kMarkerRadiusPx = 3, kDashOnPx = 7, kDashOffPx = 4;
constexpr double kSwatchPx = 32, kLegendPadPx = 8, kLegendRowEm = 1.6, kLegendMaxFraction = 0.3;
constexpr std::uint32_t kInkRgb = 0x262626, kGridRgb = 0xdadada, kMinorGridRgb = 0xf0f0f0, kLegendFrameRgb = 0xb0b0b0;
constexpr double kMinPlotPx = 40;

void set_rgb(cairo_t* cr, std::uint32_t rgb) {
  cairo_set_source_rgb(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0);
}

void use_font(cairo_t* cr, double size_px, bool bold = false) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size_px);
}

double text_width_px(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  return extents.x_advance;
}

// The height of a digit in the current font: tick labels are centred on it.
double digit_height_px(cairo_t* cr) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, "0", &extents);
  return extents.height;
}

// The text's line in the current font, ascent plus descent.
double line_height_px(cairo_t* cr) {
  cairo_font_extents_t extents;
  cairo_font_extents(cr, &extents);
  return extents.ascent + extents.descent;
}

double descent_px(cairo_t* cr) {
  cairo_font_extents_t extents;
  cairo_font_extents(cr, &extents);
  return extents.descent;
}

// The text cut short with an ellipsis to fit max_px, at a UTF-8 character boundary.
std::string fit_text(cairo_t* cr, std::string text, double max_px) {
  if (text_width_px(cr, text) <= max_px) return text;
  const std::string ellipsis = "\xE2\x80\xA6";
  while (!text.empty() && text_width_px(cr, text + ellipsis) > max_px) {
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
    if (!text.empty()) text.pop_back();
  }
  return text + ellipsis;
}

// Where a value of the axis falls between px_lo (the axis' min) and px_hi (its max).
double to_px(const ChartAxis& axis, double value, double px_lo, double px_hi) {
  auto along = [&](double v) { return axis.logarithmic ? std::log10(v) : v; };
  return px_lo + (along(value) - along(axis.min)) / (along(axis.max) - along(axis.min)) * (px_hi - px_lo);
}

// A 1-px-wide line's position on the pixel grid: centred on a pixel so that it stays sharp in the PNG.
double crisp(double px, double line_width_px) {
  return std::lround(line_width_px) % 2 == 1 ? std::floor(px) + 0.5 : std::round(px);
}

// The legend's box and its names (cut to fit).
void place_legend(cairo_t* cr, const ChartLayout& layout, ChartPlacement& place) {
  if (layout.legend.empty()) return;
  const double s = place.scale;
  use_font(cr, kTickFontPx * s);
  const double chrome_px = (2 * kLegendPadPx + kSwatchPx + kLabelGapPx * 2) * s;
  const double max_name_px = std::max(4 * kTickFontPx * s, layout.width_px * kLegendMaxFraction - chrome_px);
  double name_px = 0;
  for (std::size_t index : layout.legend) {
    place.legend_names.push_back(fit_text(cr, layout.series[index].name, max_name_px));
    name_px = std::max(name_px, text_width_px(cr, place.legend_names.back()));
  }
  place.legend_row_px = kLegendRowEm * kTickFontPx * s;
  place.legend_width_px = chrome_px + name_px;
  place.legend_height_px = 2 * kLegendPadPx * s + static_cast<double>(layout.legend.size()) * place.legend_row_px;
}

// The plot's sides: room on the left for the y title and tick labels, below for the x tick labels and title,
// above for the title, on the right for the legend (or half the last x label).
void place_frame(cairo_t* cr, const ChartLayout& layout, ChartPlacement& place) {
  const double s = place.scale, pad_px = kPadPx * s, tick_room_px = (kTickPx + kLabelGapPx) * s;
  use_font(cr, kTickFontPx * s);
  double y_labels_px = 0;
  for (const AxisTick& tick : layout.y_axis.ticks) y_labels_px = std::max(y_labels_px, text_width_px(cr, tick.label));
  const auto& x_ticks = layout.x_axis.ticks;
  const double first_x_half_px = x_ticks.empty() ? 0 : text_width_px(cr, x_ticks.front().label) / 2;
  const double last_x_half_px = x_ticks.empty() ? 0 : text_width_px(cr, x_ticks.back().label) / 2;
  const double x_labels_px = digit_height_px(cr) + descent_px(cr);
  use_font(cr, kAxisTitleFontPx * s);
  const double axis_title_px = line_height_px(cr) + kLabelGapPx * s;
  use_font(cr, kTitleFontPx * s, true);
  const double title_px = layout.title.empty() ? 0 : line_height_px(cr) + kTitleGapPx * s;

  place.left_px = pad_px + (layout.y_axis.title.empty() ? 0 : axis_title_px) + y_labels_px + tick_room_px;
  place.left_px = std::max(place.left_px, pad_px + first_x_half_px);
  place.top_px = pad_px + title_px;
  place.bottom_px =
      layout.height_px - pad_px - (layout.x_axis.title.empty() ? 0 : axis_title_px) - x_labels_px - tick_room_px;
  const double legend_room_px = place.legend_width_px > 0 ? place.legend_width_px + pad_px : 0;
  place.right_px = layout.width_px - pad_px - std::max(legend_room_px, last_x_half_px);
  if (place.right_px - place.left_px < kMinPlotPx * s || place.bottom_px - place.top_px < kMinPlotPx * s) {
    throw topologies::InputError("line chart: no room left for the plot at " + std::to_string(layout.width_px) + "x" +
                                 std::to_string(layout.height_px) + " px");
  }
  if (place.legend_height_px > layout.height_px - place.top_px - pad_px) {
    throw topologies::InputError("line chart: " + std::to_string(layout.legend.size()) +
                                 " legend entries do not fit in " + std::to_string(layout.height_px) + " px");
  }
}

ChartPlacement place_chart(cairo_t* cr, const ChartLayout& layout) {
  ChartPlacement place;
  place.scale = std::max(1.0, std::min(layout.width_px / 960.0, layout.height_px / 600.0));
  place_legend(cr, layout, place);
  place_frame(cr, layout, place);
  return place;
}

double ChartPlacement::x_px(const ChartAxis& axis, double value) const { return to_px(axis, value, left_px, right_px); }
double ChartPlacement::y_px(const ChartAxis& axis, double value) const { return to_px(axis, value, bottom_px, top_px); }

// Light lines across the plot at the minor ticks, darker ones at the labelled ticks.
void draw_grid(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  const double width_px = std::max(1.0, std::round(place.scale));
  cairo_set_line_width(cr, width_px);
  for (const bool minor : {true, false}) {
    set_rgb(cr, minor ? kMinorGridRgb : kGridRgb);
    auto xs = minor ? layout.x_axis.minor_ticks : std::vector<double>{};
    auto ys = minor ? layout.y_axis.minor_ticks : std::vector<double>{};
    if (!minor) {
      for (const AxisTick& tick : layout.x_axis.ticks) xs.push_back(tick.value);
      for (const AxisTick& tick : layout.y_axis.ticks) ys.push_back(tick.value);
    }
    for (double value : xs) {
      const double x = crisp(place.x_px(layout.x_axis, value), width_px);
      cairo_move_to(cr, x, place.top_px);
      cairo_line_to(cr, x, place.bottom_px);
    }
    for (double value : ys) {
      const double y = crisp(place.y_px(layout.y_axis, value), width_px);
      cairo_move_to(cr, place.left_px, y);
      cairo_line_to(cr, place.right_px, y);
    }
    cairo_stroke(cr);
  }
}

// A series' line style: its colour, width and (if dashed) dash pattern.
void use_line_style(cairo_t* cr, const SeriesLayout& series, double scale) {
  set_rgb(cr, series.rgb);
  cairo_set_line_width(cr, kLineWidthPx * scale);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  const double dashes[] = {kDashOnPx * scale, kDashOffPx * scale};
  cairo_set_dash(cr, dashes, series.dashed ? 2 : 0, 0);
}

// Filled circles at the points, as one path.
void fill_markers(cairo_t* cr, const std::vector<ChartPoint>& points_px, double scale) {
  for (const ChartPoint& point : points_px) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, point.x, point.y, kMarkerRadiusPx * scale, 0, 2 * std::numbers::pi);
  }
  cairo_fill(cr);
}

// Each series as one line through its points (one path), its markers as another, both clipped to the plot.
void draw_series(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  cairo_save(cr);
  cairo_rectangle(cr, place.left_px, place.top_px, place.right_px - place.left_px, place.bottom_px - place.top_px);
  cairo_clip(cr);
  for (const SeriesLayout& series : layout.series) {
    std::vector<ChartPoint> points_px;
    for (const ChartPoint& p : series.points) {
      points_px.push_back({place.x_px(layout.x_axis, p.x), place.y_px(layout.y_axis, p.y)});
    }
    if (points_px.empty()) continue;
    use_line_style(cr, series, place.scale);
    if (points_px.size() > 1) {
      cairo_move_to(cr, points_px.front().x, points_px.front().y);
      for (std::size_t i = 1; i < points_px.size(); ++i) cairo_line_to(cr, points_px[i].x, points_px[i].y);
      cairo_stroke(cr);
    }
    if (series.markers || points_px.size() == 1) fill_markers(cr, points_px, place.scale);  // a lone point shows
  }
  cairo_restore(cr);
}

// The frame, and tick marks outside it: long at the labelled ticks, short at the minor ones.
void draw_frame_and_ticks(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  const double s = place.scale, width_px = std::max(1.0, std::round(s));
  set_rgb(cr, kInkRgb);
  cairo_set_line_width(cr, width_px);
  auto tick_x = [&](double value, double length_px) {
    const double x = crisp(place.x_px(layout.x_axis, value), width_px);
    cairo_move_to(cr, x, place.bottom_px);
    cairo_line_to(cr, x, place.bottom_px + length_px);
  };
  auto tick_y = [&](double value, double length_px) {
    const double y = crisp(place.y_px(layout.y_axis, value), width_px);
    cairo_move_to(cr, place.left_px, y);
    cairo_line_to(cr, place.left_px - length_px, y);
  };
  for (const AxisTick& tick : layout.x_axis.ticks) tick_x(tick.value, kTickPx * s);
  for (double value : layout.x_axis.minor_ticks) tick_x(value, kMinorTickPx * s);
  for (const AxisTick& tick : layout.y_axis.ticks) tick_y(tick.value, kTickPx * s);
  for (double value : layout.y_axis.minor_ticks) tick_y(value, kMinorTickPx * s);
  cairo_stroke(cr);
  cairo_rectangle(cr, crisp(place.left_px, width_px), crisp(place.top_px, width_px),
                  crisp(place.right_px, width_px) - crisp(place.left_px, width_px),
                  crisp(place.bottom_px, width_px) - crisp(place.top_px, width_px));
  cairo_stroke(cr);
}

// Tick labels centred under the x ticks and right-aligned beside the y ticks; one that would come closer than a
// gap to the last label drawn is left out.
void draw_tick_labels(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  const double s = place.scale, gap_px = kLabelGapPx * s, tick_room_px = (kTickPx + kLabelGapPx) * s;
  use_font(cr, kTickFontPx * s);
  set_rgb(cr, kInkRgb);
  const double digit_px = digit_height_px(cr);
  double last_right_px = -1e300;
  for (const AxisTick& tick : layout.x_axis.ticks) {
    const double width_px = text_width_px(cr, tick.label);
    const double left_px = place.x_px(layout.x_axis, tick.value) - width_px / 2;
    if (left_px < last_right_px + 2 * gap_px) continue;
    cairo_move_to(cr, left_px, place.bottom_px + tick_room_px + digit_px);
    cairo_show_text(cr, tick.label.c_str());
    last_right_px = left_px + width_px;
  }
  double last_top_px = 1e300;
  for (const AxisTick& tick : layout.y_axis.ticks) {
    const double baseline_px = place.y_px(layout.y_axis, tick.value) + digit_px / 2;
    if (baseline_px > last_top_px - gap_px) continue;
    cairo_move_to(cr, place.left_px - tick_room_px - text_width_px(cr, tick.label), baseline_px);
    cairo_show_text(cr, tick.label.c_str());
    last_top_px = baseline_px - digit_px;
  }
}

// The text centred on centre_px along the line, kept inside [min_px, max_px] and cut to fit it.
void show_centred(cairo_t* cr, const std::string& text, double centre_px, double baseline_px, double min_px,
                  double max_px) {
  const std::string shown = fit_text(cr, text, max_px - min_px);
  const double width_px = text_width_px(cr, shown);
  const double left_px = std::clamp(centre_px - width_px / 2, min_px, max_px - width_px);
  cairo_move_to(cr, left_px, baseline_px);
  cairo_show_text(cr, shown.c_str());
}

// The title in bold over the plot, the x title under the tick labels, the y title turned upright left of them.
void draw_titles(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  const double s = place.scale, pad_px = kPadPx * s, width_px = layout.width_px;
  const double centre_x_px = (place.left_px + place.right_px) / 2, centre_y_px = (place.top_px + place.bottom_px) / 2;
  set_rgb(cr, kInkRgb);
  use_font(cr, kTitleFontPx * s, true);
  cairo_font_extents_t font;
  cairo_font_extents(cr, &font);
  show_centred(cr, layout.title, centre_x_px, pad_px + font.ascent, pad_px, width_px - pad_px);
  use_font(cr, kAxisTitleFontPx * s);
  cairo_font_extents(cr, &font);
  show_centred(cr, layout.x_axis.title, centre_x_px, layout.height_px - pad_px - font.descent, pad_px,
               width_px - pad_px);
  cairo_save(cr);
  cairo_translate(cr, pad_px + font.ascent, centre_y_px);
  cairo_rotate(cr, -std::numbers::pi / 2);  // the text runs upwards; x along it is now -y on the image
  // Along the turned text, the image's rows pad_px .. height - pad_px run from height - pad_px - centre (its
  // start) to pad_px - centre.
  show_centred(cr, layout.y_axis.title, 0, 0, -(layout.height_px - pad_px - centre_y_px), centre_y_px - pad_px);
  cairo_restore(cr);
}

// A framed white box right of the plot, top-aligned with it: per named series a sample of its line and its name.
void draw_legend(cairo_t* cr, const ChartLayout& layout, const ChartPlacement& place) {
  if (layout.legend.empty()) return;
  const double s = place.scale, left_px = place.right_px + kPadPx * s, top_px = place.top_px;
  const double frame_width_px = std::max(1.0, std::round(s));
  cairo_rectangle(cr, crisp(left_px, frame_width_px), crisp(top_px, frame_width_px), place.legend_width_px,
                  place.legend_height_px);
  set_rgb(cr, 0xffffff);
  cairo_fill_preserve(cr);
  set_rgb(cr, kLegendFrameRgb);
  cairo_set_line_width(cr, frame_width_px);
  cairo_set_dash(cr, nullptr, 0, 0);
  cairo_stroke(cr);
  use_font(cr, kTickFontPx * s);
  const double digit_px = digit_height_px(cr);
  for (std::size_t row = 0; row < layout.legend.size(); ++row) {
    const SeriesLayout& series = layout.series[layout.legend[row]];
    const double middle_px = top_px + kLegendPadPx * s + (static_cast<double>(row) + 0.5) * place.legend_row_px;
    const double swatch_left_px = left_px + kLegendPadPx * s;
    use_line_style(cr, series, s);
    cairo_move_to(cr, swatch_left_px, middle_px);
    cairo_line_to(cr, swatch_left_px + kSwatchPx * s, middle_px);
    cairo_stroke(cr);
    if (series.markers) fill_markers(cr, {{swatch_left_px + kSwatchPx * s / 2, middle_px}}, s);
    set_rgb(cr, kInkRgb);
    cairo_move_to(cr, swatch_left_px + (kSwatchPx + 2 * kLabelGapPx) * s, middle_px + digit_px / 2);
    cairo_show_text(cr, place.legend_names[row].c_str());
  }
}

}  // namespace

void draw_chart(cairo_t* cr, const ChartLayout& layout) {
  const ChartPlacement place = place_chart(cr, layout);
  set_rgb(cr, 0xffffff);
  cairo_paint(cr);
  draw_grid(cr, layout, place);
  draw_series(cr, layout, place);
  draw_frame_and_ticks(cr, layout, place);
  draw_tick_labels(cr, layout, place);
  draw_titles(cr, layout, place);
  draw_legend(cr, layout, place);
}

}  // namespace treering::cli::detail
