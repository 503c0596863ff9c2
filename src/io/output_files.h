// Output files that appear under their final names only when complete: each is written under
// a hidden temporary name in the same directory and renamed when the caller commits, so a
// failed or killed run leaves no half-written output behind.
#pragma once

#include <string>
#include <vector>

namespace gspmd {

// Collects output files of one job step.
//
//   PendingFiles files;
//   WriteNpyInPlace(files.Add(dir + "/out0.npy"), value);   // writes dir/.out0.npy.tmp-<pid>-1
//   files.Commit();                                           // renames it to dir/out0.npy
//
// Files that were added but not committed are removed when the object is destroyed (an error
// on the way out) and when the process receives SIGTERM or SIGINT (an MPI launcher ending the
// job because another rank failed). Not thread-safe: one owner thread.
class PendingFiles {
 public:
  PendingFiles() = default;
  ~PendingFiles();
  PendingFiles(const PendingFiles&) = delete;
  PendingFiles& operator=(const PendingFiles&) = delete;

  // Registers final_path and returns the temporary path to write it under.
  std::string Add(const std::string& final_path);
  // Renames every temporary file to its final name, in the order added (UserError naming the
  // file when a rename fails; files not yet renamed are then removed).
  void Commit();
  // Removes every temporary file not yet committed.
  void Discard();

 private:
  struct Entry {
    std::string temporary;
    std::string final_path;
    int signal_slot = -1;
  };
  std::vector<Entry> entries_;
};

// The final path of a temporary path returned by PendingFiles::Add (for messages); any other
// path unchanged.
std::string FinalPathOf(const std::string& path);

}  // namespace gspmd
