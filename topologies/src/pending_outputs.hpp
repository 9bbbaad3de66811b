// The temporary files of the OutputFiles not yet committed, for a signal handler to remove (output_file.hpp).
#pragma once

#include <string>

namespace treering::topologies {

// Records TEMPORARY_PATH; the slot to forget it by, or -1 when the table is full or the path too long (that
// temporary is then left behind by a signal, the output itself untouched all the same).
int note_pending_output(const std::string& temporary_path);
// Forgets the slot's path (nothing for -1).
void forget_pending_output(int slot);

}  // namespace treering::topologies
