#include "treering/topologies/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "treering/topologies/input_error.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "pending_outputs.hpp"

namespace treering::topologies {

namespace {

bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

// "PATH: error: is also an input of this run (read as IN.yaml): write the output to another file".
void refuse_an_input(const std::string& path) {
  const std::optional<std::string> input = input_file_same_as(path);
  if (!input) return;
  const std::string as = *input == path ? "" : " (read as " + *input + ")";
  throw InputError({path, 0, 0}, "is also an input of this run" + as + ": write the output to another file");
}

std::string reason(int error_number) { return error_number == 0 ? "a write failed" : std::strerror(error_number); }

// Why a stream's write failed. A stream keeps no error number: errno after the failure is the write's when it is one
// a write gives (a full disk, a quota, an I/O error), and stale otherwise (another call may have set it since).
std::string write_failure_reason() {
  const int error_number = errno;
  for (const int write_error : {ENOSPC, EDQUOT, EIO, EFBIG, EROFS, EPIPE}) {
    if (error_number == write_error) return std::strerror(error_number);
  }
  return "a write failed";
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw InputError({}, "an empty output path");
  refuse_an_input(path_);
  if (!is_special_file(path_)) temporary_path_ = path_ + ".tmp-" + std::to_string(::getpid());
  const std::string& opened = temporary_path_.empty() ? path_ : temporary_path_;
  out_.open(opened, std::ios::binary | std::ios::trunc);
  if (!out_) throw InputError({path_, 0, 0}, "cannot write the file (" + reason(errno) + ")");
  if (!temporary_path_.empty()) pending_slot_ = note_pending_output(temporary_path_);
}

OutputFile::~OutputFile() {
  if (committed_ || temporary_path_.empty()) return;
  out_.close();
  std::remove(temporary_path_.c_str());
  forget_pending_output(pending_slot_);
}

void OutputFile::commit() {
  if (committed_) throw std::logic_error("OutputFile::commit called twice for " + path_);
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();  // a failed write may show only here (the buffer's last bytes)
  if (!written || out_.fail())
    throw InputError({path_, 0, 0}, "cannot write the file (" + write_failure_reason() + ")");
  refuse_an_input(path_);  // an input read after the file was opened (the destructor then removes the temporary)
  if (!temporary_path_.empty() && std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    throw InputError({path_, 0, 0}, std::string("cannot replace the file (") + std::strerror(errno) + ")");
  }
  committed_ = true;
  forget_pending_output(pending_slot_);
}

void write_output_file(const std::string& path, const std::string& text) {
  OutputFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace treering::topologies
