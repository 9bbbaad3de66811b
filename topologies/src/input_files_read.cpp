#include "treering/topologies/input_files_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace treering::topologies {

namespace {

// A file as it was read, held open (see the header).
struct ReadFile {
  dev_t device;
  ino_t inode;
  int descriptor;
  std::string path;
};

// The live scopes' records on this thread, innermost last.
thread_local std::vector<std::vector<ReadFile>> scopes;

const ReadFile* find(dev_t device, ino_t inode) {
  for (const std::vector<ReadFile>& record : scopes) {
    for (const ReadFile& file : record) {
      if (file.device == device && file.inode == inode) return &file;
    }
  }
  return nullptr;
}

}  // namespace

InputFilesScope::InputFilesScope() { scopes.emplace_back(); }

InputFilesScope::~InputFilesScope() {
  for (const ReadFile& file : scopes.back()) ::close(file.descriptor);
  scopes.pop_back();
}

void note_input_file(const std::string& path) {
  if (scopes.empty()) return;
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return;
  struct stat info {};
  if (::fstat(descriptor, &info) != 0 || find(info.st_dev, info.st_ino) != nullptr) {
    ::close(descriptor);
    return;
  }
  scopes.back().push_back({info.st_dev, info.st_ino, descriptor, path});
}

std::optional<std::string> input_file_same_as(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;  // stat follows symbolic links: a link to an input matches
  const ReadFile* file = find(info.st_dev, info.st_ino);
  if (file == nullptr) return std::nullopt;
  return file->path;
}

}  // namespace treering::topologies
