// Checked, all-or-nothing file output (file_io.hpp).
#include "strata/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "strata/error.hpp"

namespace strata {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw Error(fmt::format("cannot write file: {}: {}", what, std::strerror(err)),
              ErrorContext{path, 0, ""});
}

// Writes every byte to `fd` (write() may write less than asked); returns errno or 0.
int write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// Closes `fd`, keeping the first error of the write and the close.
int finish(int fd, int write_err) {
  const int close_rc = ::close(fd);
  if (write_err != 0) return write_err;
  return close_rc == 0 ? 0 : errno;
}

}  // namespace

void write_file(const std::string& path, std::span<const uint8_t> data) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    throw Error("cannot write file: it is a directory", ErrorContext{path, 0, ""});
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO: renaming over it would replace the node, so write in place.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "open", errno);
    const int err = finish(fd, write_all(fd, data.data(), data.size()));
    if (err != 0) fail(path, "write", err);
    return;
  }
  // A temporary name in the same directory, so the rename cannot cross file systems.
  std::string tmp = path + ".XXXXXX.tmp";
  const int fd = ::mkstemps(tmp.data(), 4);
  if (fd < 0) fail(path, "create", errno);
  int err = finish(fd, write_all(fd, data.data(), data.size()));
  // mkstemp makes the file 0600: keep a replaced file's mode, give a new one 0666 less umask.
  if (err == 0) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~mask);
    if (::chmod(tmp.c_str(), mode) != 0) err = errno;
  }
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    fail(path, "write", err);
  }
}

void write_file(const std::string& path, std::string_view text) {
  write_file(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                            text.size()));
}

}  // namespace strata
