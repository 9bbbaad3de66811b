// The files a run has read as input, so that no output of the run replaces one (output_file.hpp).
//
// A user who types `calibrate g2.log -o g2.log` or `topo dot in.yaml -o in.yaml` means to write a new file, not to
// destroy the one being read. Files are told apart by what they are, not how they are spelt: the device and inode
// (so "./in.yaml", "../dir/in.yaml", a hard link and a symbolic link to it are all the same file). Each input is
// held open while it is on record, so that its inode cannot pass to a new file meanwhile (the next file created
// often gets the inode just freed).
//
// A run is an InputFilesScope: a command's main holds one for the whole command, the Python module one for each
// call that writes a file (adding the file its Cluster was loaded from, read in an earlier call). Outside every
// scope nothing is noted and nothing refused.
#pragma once

#include <optional>
#include <string>

namespace treering::topologies {

// While one lives, the input files read on this thread are on its record; scopes nest (an inner one's record is
// checked along with the outer ones'). Not copyable; destroyed in the reverse order of construction.
class InputFilesScope {
 public:
  InputFilesScope();
  ~InputFilesScope();
  InputFilesScope(const InputFilesScope&) = delete;
  InputFilesScope& operator=(const InputFilesScope&) = delete;
};

// Notes PATH as read in the innermost scope (check_input_file does it for every input file). A path that cannot be
// opened, or a call outside every scope, notes nothing.
void note_input_file(const std::string& path);

// The input path, as it was given when read, of the file PATH is (same device and inode), if a scope alive on this
// thread has it; nullopt when PATH does not exist or is no input. Example: after reading "topologies/x.yaml",
// input_file_same_as("./topologies/x.yaml") is "topologies/x.yaml".
std::optional<std::string> input_file_same_as(const std::string& path);

}  // namespace treering::topologies
