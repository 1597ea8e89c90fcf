// SPDX-License-Identifier: Apache-2.0
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

// A target's state before the commit.
struct Target {
  bool exists = false;
  bool special = false;  // a device or FIFO: written in place
  mode_t mode = 0;       // a replaced file's permissions
  std::string tmp;       // the temporary of a regular target, once created
};

// Undoes a commit that failed before its renames: temporaries and created directories.
class Rollback {
 public:
  explicit Rollback(std::vector<Target>& targets) : targets_(targets) {}
  ~Rollback() {
    if (done_) return;
    for (const Target& t : targets_) {
      if (!t.tmp.empty()) ::unlink(t.tmp.c_str());
    }
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) ::rmdir(it->c_str());
  }
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  // Creates the missing directories above `file`, remembering them.
  void create_parents(const std::string& file) {
    namespace fs = std::filesystem;
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = fs::path(file).parent_path(); !p.empty() && !fs::exists(p, ec);
         p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
        const int err = errno;
        fail(file, fmt::format("create directory '{}'", it->string()), err);
      }
      dirs_.push_back(it->string());
    }
  }
  void release() { done_ = true; }

 private:
  std::vector<Target>& targets_;
  std::vector<std::string> dirs_;
  bool done_ = false;
};

}  // namespace

void OutputFiles::add(std::string path, std::vector<uint8_t> data) {
  files_.push_back({std::move(path), std::move(data)});
}

void OutputFiles::add(std::string path, std::string_view text) {
  files_.push_back({std::move(path), std::vector<uint8_t>(text.begin(), text.end())});
}

void OutputFiles::commit() {
  std::vector<Target> targets(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) {
    struct stat st {};
    Target& t = targets[i];
    t.exists = ::stat(files_[i].path.c_str(), &st) == 0;
    if (t.exists && S_ISDIR(st.st_mode)) {
      throw Error("cannot write file: it is a directory", ErrorContext{files_[i].path, 0, ""});
    }
    t.special = t.exists && !S_ISREG(st.st_mode);
    t.mode = st.st_mode & 07777;
  }
  Rollback rollback(targets);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  // Regular targets: a temporary in the same directory, so the rename cannot
  // cross file systems; mkstemp makes it 0600, so give it the replaced file's
  // mode, or 0666 less the umask.
  for (size_t i = 0; i < files_.size(); ++i) {
    const File& f = files_[i];
    Target& t = targets[i];
    if (t.special) continue;
    rollback.create_parents(f.path);
    std::string tmp = f.path + ".XXXXXX.tmp";
    const int fd = ::mkstemps(tmp.data(), 4);
    if (fd < 0) fail(f.path, "create", errno);
    t.tmp = tmp;
    int err = finish(fd, write_all(fd, f.data.data(), f.data.size()));
    if (err == 0 && ::chmod(tmp.c_str(), t.exists ? t.mode : (0666 & ~mask)) != 0) err = errno;
    if (err != 0) fail(f.path, "write", err);
  }
  // Devices and FIFOs: renaming over one would replace the node, so write in place.
  for (size_t i = 0; i < files_.size(); ++i) {
    if (!targets[i].special) continue;
    const File& f = files_[i];
    const int fd = ::open(f.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(f.path, "open", errno);
    const int err = finish(fd, write_all(fd, f.data.data(), f.data.size()));
    if (err != 0) fail(f.path, "write", err);
  }
  for (size_t i = 0; i < files_.size(); ++i) {
    Target& t = targets[i];
    if (t.tmp.empty()) continue;
    if (::rename(t.tmp.c_str(), files_[i].path.c_str()) != 0) fail(files_[i].path, "write", errno);
    t.tmp.clear();
  }
  rollback.release();
}

void write_file(const std::string& path, std::span<const uint8_t> data) {
  OutputFiles out;
  out.add(path, std::vector<uint8_t>(data.begin(), data.end()));
  out.commit();
}

void write_file(const std::string& path, std::string_view text) {
  write_file(path,
             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace strata
