#include "treering/model/paper_formulas.hpp"

namespace treering::model::paper {

double ring_memory_elements(double b, double t, double d) { return 4 * b * t * d + 2 * b * d; }
double tree_memory_elements(double b, double t, double d, double n_h) {
  return 2 * b * t * d + 2 * b * d + 2 * b * n_h;
}
double ring_volume_elements(double b, double t, double d, double p) { return 2 * b * t * d * p; }
double allreduce_volume_elements(double elements, double p) { return 2 * (p - 1) / p * elements; }
double tree_volume_elements(double b, double d, double n_h, double p) {
  return allreduce_volume_elements(b * d + 2 * b * n_h, p);
}

}  // namespace treering::model::paper
