#include "treering/topologies/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "treering/topologies/input_error.hpp"

namespace treering::topologies {

namespace {

bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw InputError({}, "an empty output path");
  if (!is_special_file(path_)) temporary_path_ = path_ + ".tmp-" + std::to_string(::getpid());
  const std::string& opened = temporary_path_.empty() ? path_ : temporary_path_;
  out_.open(opened, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw InputError({path_, 0, 0}, std::string("cannot write the file (") + std::strerror(errno) + ")");
  }
}

OutputFile::~OutputFile() {
  if (committed_ || temporary_path_.empty()) return;
  out_.close();
  std::remove(temporary_path_.c_str());
}

void OutputFile::commit() {
  if (committed_) throw std::logic_error("OutputFile::commit called twice for " + path_);
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) throw std::runtime_error(path_ + ": error: writing the file failed");
  if (!temporary_path_.empty() && std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error(path_ + ": error: cannot replace the file (" + std::strerror(errno) + ")");
  }
  committed_ = true;
}

void write_output_file(const std::string& path, const std::string& text) {
  OutputFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace treering::topologies
