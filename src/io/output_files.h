// Output files that appear under their final names only when complete: each is written as a
// nameless file in its directory (O_TMPFILE, through /proc/self/fd/N) or, where the file system
// has none, under a hidden temporary name, and moved into place when the caller commits, so a
// failed or killed run leaves no half-written output behind.
#pragma once

#include <string>
#include <vector>

namespace gspmd {

// Collects output files of one job step.
//
//   PendingFiles files;
//   WriteNpyInPlace(files.Add(dir + "/out0.npy"), value);   // writes /proc/self/fd/N
//   files.Commit();                                           // links it as dir/out0.npy
//
// A nameless file disappears with the process however it ends (SIGKILL too). Named temporaries
// (dir/.out0.npy.tmp-<pid>-1) that were added but not committed are removed when the object is
// destroyed (an error on the way out) and when the process receives SIGTERM or SIGINT (an MPI
// launcher ending the job because another rank failed). Not thread-safe: one owner thread.
class PendingFiles {
 public:
  PendingFiles() = default;
  ~PendingFiles();
  PendingFiles(const PendingFiles&) = delete;
  PendingFiles& operator=(const PendingFiles&) = delete;

  // Registers final_path and returns the temporary path to write it under.
  std::string Add(const std::string& final_path);
  // Moves every file to its final name, in the order added (UserError naming the file when a
  // move fails; files not yet moved are then removed).
  void Commit();
  // Removes every temporary file not yet committed.
  void Discard();

 private:
  struct Entry {
    std::string temporary;
    std::string final_path;
    int signal_slot = -1;
    int fd = -1;  // the nameless file, until committed
  };
  static void ForgetNameless(Entry& entry);
  std::vector<Entry> entries_;
};

// The final path of a temporary path returned by PendingFiles::Add (for messages); any other
// path unchanged.
std::string FinalPathOf(const std::string& path);

}  // namespace gspmd
