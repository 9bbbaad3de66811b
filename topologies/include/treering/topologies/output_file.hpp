// Files a command writes: whole or not at all, and never one of its inputs.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace treering::topologies {

// A file written whole or not at all. The text goes to a temporary file beside PATH ("PATH.tmp-PID"), which
// commit() renames onto PATH in one step. Until then PATH is untouched; a writer destroyed without commit() (an error
// on the way) removes its temporary file and leaves PATH as it was, and so does a run stopped by a signal where main
// called remove_unfinished_outputs_on_signals(). Opening the temporary file at construction also makes a bad path fail
// before any long work. A PATH that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written
// directly: it cannot be replaced, and nothing there could be destroyed.
// A PATH that is one of the files this process has read as input (input_files_read.hpp: the same file, by device
// and inode, whatever its spelling or a link to it) is refused, at construction and again at commit, with
// InputError "PATH: error: is also an input of this run (read as IN): write the output to another file".
// Every failure names PATH and is an InputError (a bad output path is bad input): /dev/full gives
// "/dev/full: error: cannot write the file (No space left on device)".
class OutputFile {
 public:
  // Throws InputError "PATH: error: cannot write the file (REASON)" when the file cannot be created, or the one
  // above when PATH is an input.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, closes and renames onto the path. Throws InputError when a write or the rename failed, or PATH is an
  // input read since construction.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temporary_path_;  // empty when writing the path directly
  std::ofstream out_;
  bool committed_ = false;
  int pending_slot_ = -1;  // where a signal handler finds the temporary (pending_outputs.hpp)
};

// Makes SIGINT, SIGTERM and SIGHUP remove the temporary files of the OutputFiles not yet committed before the
// process dies of them (as it would have without a handler): an interrupted run leaves its outputs as they were,
// and no "PATH.tmp-PID" behind. For a program's main; the Python module leaves Python's handlers alone (there a
// KeyboardInterrupt unwinds, and the destructor removes the temporary).
void remove_unfinished_outputs_on_signals();

// Writes TEXT to PATH through an OutputFile.
void write_output_file(const std::string& path, const std::string& text);

}  // namespace treering::topologies
