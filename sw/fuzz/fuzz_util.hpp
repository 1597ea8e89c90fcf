// SPDX-License-Identifier: Apache-2.0
// Shared by the libFuzzer harnesses: a file in memory that the readers open by
// path (load_npy, load_network and HwTarget::from_yaml take paths), and the report of a finding.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::fuzz {

// An anonymous in-memory file (memfd). write() replaces its contents and
// returns the /proc/self/fd path under which a reader opens it afresh, so a
// harness runs millions of inputs without touching the disk.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(::memfd_create(name, 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) fail("ftruncate");
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) fail("pwrite");
      done += static_cast<size_t>(n);
    }
    return path_;
  }
  const std::string& write(const std::string& text) {
    return write(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::perror(what);
    std::abort();
  }

  int fd_;
  std::string path_;
};

// A finding: what was wrong, then abort() so that libFuzzer saves the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\n==== strata fuzz finding ====\n%s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// STRATA_FUZZ_VERBOSE=1: harnesses print what they decoded from each input
// (for replaying a reproducer by hand).
inline bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("STRATA_FUZZ_VERBOSE");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

}  // namespace strata::fuzz
