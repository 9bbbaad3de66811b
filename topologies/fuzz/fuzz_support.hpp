// Helpers shared by the fuzz targets (topologies/fuzz, validate/fuzz): the exceptions that bad input may raise,
// checks that abort (a finding for libFuzzer), and a scratch file for readers that take only a path.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace treering::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property the code under test promises; a violation aborts, which libFuzzer reports with the input.
inline void check(bool condition, const char* what, std::string_view input = {}) {
  if (condition) return;
  if (input.empty()) {
    std::fprintf(stderr, "treering fuzz check failed: %s\n", what);
  } else {
    std::fprintf(stderr, "treering fuzz check failed: %s (input '%.*s')\n", what,
                 static_cast<int>(input.size() > 200 ? 200 : input.size()), input.data());
  }
  std::abort();
}

// A file of this process's own (/dev/shm when writable, else $TMPDIR, else /tmp), rewritten with every input and
// removed when the process exits normally. Unique per process, so parallel runs (-jobs, -fork) do not collide.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& stem) {
    std::string dir = "/dev/shm";
    if (access(dir.c_str(), W_OK) != 0) {
      const char* tmp = std::getenv("TMPDIR");
      dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    path_ = dir + "/treering-fuzz-" + stem + "-" + std::to_string(getpid());
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Writes the input (truncating what was there) and returns the path.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    if (file == nullptr) {
      std::perror(path_.c_str());
      std::abort();  // the harness cannot work: not a finding in the code under test, but loud
    }
    if (size > 0 && std::fwrite(data, 1, size, file) != size) {
      std::perror(path_.c_str());
      std::abort();
    }
    std::fclose(file);
    return path_;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace treering::fuzz
