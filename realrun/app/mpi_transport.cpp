#include "mpi_transport.hpp"

#include <climits>
#include <stdexcept>

namespace treering::realrun::app {
namespace {

int count_of(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("a message over 2 GiB: MPI counts are int");
  return static_cast<int>(bytes);
}

}  // namespace

MpiTransport::MpiTransport() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
}

Transport::Request MpiTransport::keep(MPI_Request request) {
  if (free_.empty()) {
    requests_.push_back(request);
    return static_cast<Request>(requests_.size() - 1);
  }
  const int slot = free_.back();
  free_.pop_back();
  requests_[static_cast<std::size_t>(slot)] = request;
  return slot;
}

Transport::Request MpiTransport::isend(const void* data, std::size_t bytes, int to, int tag) {
  MPI_Request request;
  MPI_Isend(data, count_of(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD, &request);
  return keep(request);
}

Transport::Request MpiTransport::irecv(void* data, std::size_t bytes, int from, int tag) {
  MPI_Request request;
  MPI_Irecv(data, count_of(bytes), MPI_BYTE, from, tag, MPI_COMM_WORLD, &request);
  return keep(request);
}

void MpiTransport::wait(Request request) {
  if (request < 0) return;
  MPI_Wait(&requests_.at(static_cast<std::size_t>(request)), MPI_STATUS_IGNORE);
  free_.push_back(request);
}

void MpiTransport::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

double MpiTransport::max_over_ranks(double value) const {
  double result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

std::vector<double> MpiTransport::max_over_ranks(const std::vector<double>& values) const {
  std::vector<double> result(values.size());
  MPI_Allreduce(values.data(), result.data(), count_of(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

std::vector<double> MpiTransport::gather(double value) const {
  std::vector<double> all(static_cast<std::size_t>(ranks_));
  MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

std::vector<float> MpiTransport::gather(const std::vector<float>& values) const {
  std::vector<float> all(values.size() * static_cast<std::size_t>(ranks_));
  MPI_Gather(values.data(), count_of(values.size()), MPI_FLOAT, all.data(), count_of(values.size()), MPI_FLOAT, 0,
             MPI_COMM_WORLD);
  return all;
}

std::string MpiTransport::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  const auto end = version.find_first_of(",\n");
  return end == std::string::npos ? version : version.substr(0, end);
}

}  // namespace treering::realrun::app
