// Checked file output for every file the tools write (.npy, program images,
// listings, JSON reports). A write is complete or it is an error: the data goes
// to a temporary file beside the target, which is flushed, closed and checked,
// then renamed over the target, so a full disk or an I/O error never leaves a
// partial file under the requested name. Targets that are not regular files
// (a character device such as /dev/full or /dev/null, a FIFO) are written in
// place, and the write and the close are checked the same way.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace strata {

// Writes `data` to `path`. Throws strata::Error naming the path and the
// operating system's reason ("No space left on device") on any failure.
void write_file(const std::string& path, std::span<const uint8_t> data);
void write_file(const std::string& path, std::string_view text);

}  // namespace strata
