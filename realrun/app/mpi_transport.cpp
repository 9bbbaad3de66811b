#include "mpi_transport.hpp"
#include "treering/topologies/input_error.hpp"

#include <cstdlib>

#include <climits>
#include <cstdio>
#include <string>
#include <stdexcept>

namespace treering::realrun::app {
namespace {

int count_of(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw topologies::InputError("a message over 2 GiB: MPI counts are int");
  return static_cast<int>(bytes);
}

}  // namespace

unsigned long long arguments_fingerprint(int argc, char** argv) {
  unsigned long long hash = 1469598103934665603ULL;
  for (int i = 1; i < argc; ++i) {
    for (const char* c = argv[i];; ++c) {  // the terminating zero too, so "a b" differs from "ab"
      hash = (hash ^ static_cast<unsigned char>(*c)) * 1099511628211ULL;
      if (*c == '\0') break;
    }
  }
  return hash;
}

MpiTransport::MpiTransport() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
}

Transport::Request MpiTransport::keep(MPI_Request request) {
  if (free_.empty()) {
    requests_.push_back(request);
    what_.emplace_back();
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
  const Request handle = keep(request);
  what_[static_cast<std::size_t>(handle)] = "a send to rank " + std::to_string(to);
  return handle;
}

Transport::Request MpiTransport::irecv(void* data, std::size_t bytes, int from, int tag) {
  MPI_Request request;
  MPI_Irecv(data, count_of(bytes), MPI_BYTE, from, tag, MPI_COMM_WORLD, &request);
  const Request handle = keep(request);
  what_[static_cast<std::size_t>(handle)] = "a receive from rank " + std::to_string(from);
  return handle;
}

// MPI_Test in a loop (MPI_Wait polls too), until done or the timeout: then the message and MPI_Abort, which
// ends every rank (mpirun reports the exit code).
void MpiTransport::wait_or_abort(MPI_Request& request, const std::string& what) {
  const double deadline_s = MPI_Wtime() + timeout_s_;
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (MPI_Wtime() > deadline_s) {
      std::fprintf(
          stderr,
          "error: rank %d: %s did not complete within %g s (a rank hung, crashed or runs another plan); aborting\n",
          rank_, what.c_str(), timeout_s_);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

void MpiTransport::abort_job(const std::string& message) const {
  std::fprintf(stderr, "error: %s; aborting\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return
}

void MpiTransport::wait(Request request) {
  if (request < 0) return;
  wait_or_abort(requests_.at(static_cast<std::size_t>(request)), what_.at(static_cast<std::size_t>(request)));
  free_.push_back(request);
}

void MpiTransport::barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  wait_or_abort(request, "a barrier of all ranks");
}

bool MpiTransport::same_on_all_ranks(unsigned long long value) const {
  unsigned long long low = 0, high = 0;
  MPI_Allreduce(&value, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

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
