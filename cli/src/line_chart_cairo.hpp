// The chart's drawing routine, shared by the PNG and the SVG renderers (line_chart_files.cpp).
#pragma once

#include <cairo.h>

#include "line_chart.hpp"

namespace treering::cli::detail {

// Draws the whole chart, white background included, onto the cairo context, whose surface is
// layout.width_px x layout.height_px units. Throws std::invalid_argument when the plot or the legend has no room.
void draw_chart(cairo_t* cr, const ChartLayout& layout);

}  // namespace treering::cli::detail
