// The chart as files: the layout drawn by draw_chart onto a cairo image surface, written as PNG, or onto a cairo SVG
// surface; both collected in memory, then written.
#include <cairo-svg.h>
#include <cairo.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "line_chart.hpp"
#include "line_chart_cairo.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/input_error.hpp"

namespace treering::cli {
namespace {

using SurfacePtr = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using ContextPtr = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

void check_cairo(cairo_status_t status, const char* doing) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("line chart: cairo failed ") + doing + ": " + cairo_status_to_string(status));
  }
}

void check_axis(const ChartAxis& axis, const char* name) {
  const bool ordered = std::isfinite(axis.min) && std::isfinite(axis.max) && axis.min < axis.max;
  if (!ordered || (axis.logarithmic && axis.min <= 0)) {
    throw topologies::InputError(std::string("line chart: the ") + name + " axis' range [" + std::to_string(axis.min) +
                                 ", " + std::to_string(axis.max) + "] cannot be drawn" +
                                 (axis.logarithmic ? " on a log scale" : ""));
  }
}

// A layout that lay_out_chart made always passes; one built by hand may not.
void check_layout(const ChartLayout& layout) {
  detail::check_chart_size(layout.width_px, layout.height_px);
  check_axis(layout.x_axis, "x");
  check_axis(layout.y_axis, "y");
  for (std::size_t index : layout.legend) {
    if (index >= layout.series.size()) {
      throw std::logic_error("line chart: legend entry " + std::to_string(index) + " names no series");
    }
  }
}

void draw_onto(cairo_surface_t* surface, const ChartLayout& layout) {
  check_cairo(cairo_surface_status(surface), "to make a surface");
  const ContextPtr cr(cairo_create(surface), cairo_destroy);
  detail::draw_chart(cr.get(), layout);
  check_cairo(cairo_status(cr.get()), "to draw");
}

// cairo's write callback: appends to the std::string it is given.
cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void write_file(const std::string& bytes, const std::string& path) { topologies::write_output_file(path, bytes); }

}  // namespace

std::string render_png(const ChartLayout& layout) {
  check_layout(layout);
  const SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, layout.width_px, layout.height_px),
                           cairo_surface_destroy);
  draw_onto(surface.get(), layout);
  std::string png;
  check_cairo(cairo_surface_write_to_png_stream(surface.get(), append_bytes, &png), "to encode the PNG");
  return png;
}

std::string render_svg(const ChartLayout& layout) {
  check_layout(layout);
  std::string svg;
  const SurfacePtr surface(cairo_svg_surface_create_for_stream(append_bytes, &svg, layout.width_px, layout.height_px),
                           cairo_surface_destroy);
  cairo_svg_surface_set_document_unit(surface.get(), CAIRO_SVG_UNIT_PX);  // width="960px": the PNG's size
  draw_onto(surface.get(), layout);
  cairo_surface_finish(surface.get());  // writes the document out
  check_cairo(cairo_surface_status(surface.get()), "to write the SVG");
  return svg;
}

void write_png(const ChartLayout& layout, const std::string& path) { write_file(render_png(layout), path); }
void write_svg(const ChartLayout& layout, const std::string& path) { write_file(render_svg(layout), path); }

}  // namespace treering::cli
