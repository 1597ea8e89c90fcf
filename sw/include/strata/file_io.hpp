// SPDX-License-Identifier: Apache-2.0
// Checked file output for every file the tools write (.npy, program images,
// listings, JSON reports). A write is complete or it is an error: the data goes
// to a temporary file beside the target, which is flushed, closed and checked,
// then renamed over the target, so a full disk or an I/O error never leaves a
// partial file under the requested name. Targets that are not regular files
// (a character device such as /dev/full or /dev/null, a FIFO) are written in
// place, and the write and the close are checked the same way.
//
// A command that writes several files collects them in an OutputFiles and
// commits them together: all of them are written or none is.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Writes `data` to `path`. Throws strata::Error naming the path and the
// operating system's reason ("No space left on device") on any failure.
void write_file(const std::string& path, std::span<const uint8_t> data);
void write_file(const std::string& path, std::string_view text);

// Files written all together or not at all. commit() checks every target
// (none may be a directory), creates missing parent directories, writes every
// regular target to its temporary and every device or FIFO in place, and only
// when all of that succeeded renames the temporaries over their targets. On a
// failure it removes the temporaries and the directories it created, leaves
// every regular target as it was, and throws strata::Error naming the path.
class OutputFiles {
 public:
  void add(std::string path, std::vector<uint8_t> data);
  void add(std::string path, std::string_view text);
  void commit();
  bool empty() const { return files_.empty(); }
  size_t size() const { return files_.size(); }

 private:
  struct File {
    std::string path;
    std::vector<uint8_t> data;
  };
  std::vector<File> files_;
};

}  // namespace strata
