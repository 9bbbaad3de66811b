// Files a command writes: whole or not at all, and never before its inputs are read.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace treering::topologies {

// A file written whole or not at all. The text goes to a temporary file beside PATH ("PATH.tmp-PID"), which
// commit() renames onto PATH in one step. Until then PATH is untouched, so it may be one of the command's inputs
// (`calibrate --cluster cal.yaml -o cal.yaml`); a writer destroyed without commit() (an error on the way) removes
// its temporary file and leaves PATH as it was. Opening the temporary file at construction also makes a bad path
// fail before any long work. A PATH that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is
// written directly: it cannot be replaced, and nothing there could be destroyed.
class OutputFile {
 public:
  // Throws InputError "PATH: error: cannot write the file (REASON)" when the file cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, closes and renames onto the path. Throws std::runtime_error when a write or the rename failed.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temporary_path_;  // empty when writing the path directly
  std::ofstream out_;
  bool committed_ = false;
};

// Writes TEXT to PATH through an OutputFile.
void write_output_file(const std::string& path, const std::string& text);

}  // namespace treering::topologies
