// SPDX-License-Identifier: Apache-2.0
// The driver library's Linux backend (strata_rt_uio.h) against a simulated
// device: a sysfs tree and a /dev folder in a temporary directory, the
// register window a shared file, the DMA buffer a shared file at a physical
// address, and the interrupt a pseudo-terminal (a file that open(), write(),
// poll() and read() treat as UIO's: 4 bytes to unmask, 4 bytes of count when
// it fires). A device thread gives the window its registers' behaviour: it
// watches CTRL.START, runs the program on the ISA simulator (IsaDevice) over
// the DMA buffer, writes STATUS and ERROR_CODE, and raises the interrupt.
// Networks run bit-exact through it; a missing or malformed sysfs attribute is
// an error naming the file.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "strata/bundle.hpp"
#include "strata/compiler.hpp"
#include "strata/csr_map.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/isa_device.hpp"
#include "strata_rt_uio.h"
#include "sw_test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDmaAddr = 0x0010'0000;  // the buffer's "physical" address
constexpr uint64_t kDmaBytes = 4 << 20;
constexpr size_t kRegsBytes = 0x1000;

// A shared file of `bytes` bytes, mapped.
struct SharedFile {
  SharedFile(const fs::path& path, size_t bytes) : size(bytes) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0) << path;
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    EXPECT_NE(p, MAP_FAILED);
    data = static_cast<uint8_t*>(p);
  }
  ~SharedFile() { ::munmap(data, size); }
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  uint32_t load(uint32_t offset) const {
    return __atomic_load_n(reinterpret_cast<uint32_t*>(data + offset), __ATOMIC_SEQ_CST);
  }
  void store(uint32_t offset, uint32_t v) {
    __atomic_store_n(reinterpret_cast<uint32_t*>(data + offset), v, __ATOMIC_SEQ_CST);
  }
  uint8_t* data = nullptr;
  size_t size = 0;
};

class SimulatedUio {
 public:
  SimulatedUio(const fs::path& root, const HwTarget& target) : root_(root), target_(target) {
    const fs::path uio = root / "sys/class/uio/uio0/maps/map0";
    const fs::path dma = root / "sys/class/u-dma-buf/udmabuf0";
    fs::create_directories(uio);
    fs::create_directories(dma);
    fs::create_directories(root / "dev");
    std::ofstream(uio / "size") << fmt::format("{:#x}\n", kRegsBytes);
    std::ofstream(dma / "phys_addr") << fmt::format("{:#010x}\n", kDmaAddr);
    std::ofstream(dma / "size") << kDmaBytes << "\n";
    regs_ = std::make_unique<SharedFile>(root / "dev/uio0", kRegsBytes);
    dma_ = std::make_unique<SharedFile>(root / "dev/udmabuf0", kDmaBytes);
    // The read-only registers hold what the hardware would show.
    IsaDevice shown(target, 0);
    for (uint32_t off = 0; off < 0x100; off += 4) regs_->store(off, shown.read32(off));
    // The interrupt: a pseudo-terminal in raw mode, its slave is dev/uio1.
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT_GE(master_, 0);
    EXPECT_EQ(::grantpt(master_), 0);
    EXPECT_EQ(::unlockpt(master_), 0);
    const char* slave = ::ptsname(master_);
    termios t{};
    const int s = ::open(slave, O_RDWR | O_NOCTTY);
    ::tcgetattr(s, &t);
    ::cfmakeraw(&t);
    ::tcsetattr(s, TCSANOW, &t);
    ::close(s);
    fs::create_symlink(slave, root / "dev/uio1");
    thread_ = std::thread([this] { serve(); });
  }

  ~SimulatedUio() {
    stop_ = true;
    thread_.join();
    ::close(master_);
  }

  int runs() const { return runs_; }

 private:
  // The device: registers, runs, interrupts.
  void serve() {
    bool unmasked = false;
    while (!stop_) {
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) {  // 4 bytes of "unmask" from the driver
        uint32_t v = 0;
        unmasked = ::read(master_, &v, sizeof v) == sizeof v || unmasked;
      }
      const uint32_t ctrl = regs_->load(csr::kCtrl);
      if ((ctrl & csr::kCtrlStart) == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      regs_->store(csr::kCtrl, ctrl & ~csr::kCtrlStart);  // START reads 0
      regs_->store(csr::kStatus, csr::kStatusBusy);
      IsaDevice engine(target_, kDmaAddr + kDmaBytes);
      std::memcpy(engine.memory().data() + kDmaAddr, dma_->data, kDmaBytes);
      for (uint32_t off : {csr::kInstrBaseLo, csr::kInstrBaseHi, csr::kInstrLimit}) {
        engine.write32(off, regs_->load(off));
      }
      engine.write32(csr::kCtrl, ctrl);
      std::memcpy(dma_->data, engine.memory().data() + kDmaAddr, kDmaBytes);
      for (uint32_t off = csr::kPerfCycles; off < csr::kPerfCycles + 0x80; off += 4) {
        regs_->store(off, engine.read32(off));
      }
      regs_->store(csr::kErrorCode, engine.read32(csr::kErrorCode));
      regs_->store(csr::kStatus, engine.read32(csr::kStatus));
      ++runs_;
      const uint32_t cause = engine.read32(csr::kStatus) & csr::kStatusError ? csr::kIrqEnableError
                                                                             : csr::kIrqEnableDone;
      if (unmasked && (regs_->load(csr::kIrqEnable) & cause) != 0) {
        const uint32_t count = static_cast<uint32_t>(runs_);
        EXPECT_EQ(::write(master_, &count, sizeof count), static_cast<ssize_t>(sizeof count));
        unmasked = false;
      }
    }
  }

  fs::path root_;
  HwTarget target_;
  std::unique_ptr<SharedFile> regs_, dma_;
  int master_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> runs_{0};
  std::thread thread_;
};

class Uio : public test::TempDirTest {
 protected:
  void SetUp() override {
    test::TempDirTest::SetUp();
    const int m = ::posix_openpt(O_RDWR | O_NOCTTY);  // the simulated interrupt needs one
    if (m < 0) GTEST_SKIP() << "no pseudo-terminals on this machine (/dev/ptmx)";
    ::close(m);
  }
};

TEST_F(Uio, NetworksRunBitExactThroughTheLinuxBackend) {
  const HwTarget target = HwTarget::defaults();
  SimulatedUio device(dir_, target);
  strata_uio u{};
  char err[256] = {};
  const std::string sysfs = path("sys"), dev = path("dev");
  ASSERT_EQ(
      strata_uio_open(&u, sysfs.c_str(), dev.c_str(), "uio0", "uio1", "udmabuf0", err, sizeof err),
      0)
      << err;
  EXPECT_EQ(u.dma_addr, kDmaAddr);
  EXPECT_EQ(u.dma_bytes, kDmaBytes);
  const strata_hal hal = strata_uio_hal(&u);
  strata_device d{};
  ASSERT_EQ(strata_open(&d, &hal), STRATA_OK) << d.error.text;
  d.timeout = 10'000'000;  // microseconds
  EXPECT_EQ(d.hw.pes, 8u);
  int runs = 0;
  for (const char* name : {"lenet5", "cifar10_quick", "residual_net"}) {
    SCOPED_TRACE(name);
    const std::string yaml = std::string(STRATA_SOURCE_DIR) + "/examples/" + name + ".yaml";
    generate_network(yaml, path(name), GenOptions{.seed = 4});
    const Network net = load_network(yaml, {path(name), true});
    const Program prog = compile(net, target);
    const std::vector<uint8_t> bytes = make_bundle(prog);
    strata_bundle b{};
    ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &d.error), STRATA_OK);
    strata_network loaded{};
    ASSERT_EQ(strata_load(&d, &b, u.dma_addr, u.dma_bytes, &loaded), STRATA_OK) << d.error.text;
    const Tensor<int8_t> image = random_images(net.input_shape, 1, 9);
    std::vector<int8_t> out(strata_output_elements(&b));
    ASSERT_EQ(strata_run(&loaded, image.data(), image.size(), out.data(), out.size(), 1), STRATA_OK)
        << d.error.text;
    const Tensor<int8_t> want = run_network(
        net, Tensor<int8_t>(net.input_shape,
                            std::vector<int8_t>(image.values().begin(), image.values().end())));
    EXPECT_EQ(out, std::vector<int8_t>(want.values().begin(), want.values().end()));
    ++runs;
  }
  EXPECT_EQ(device.runs(), runs) << "every run went through the simulated device";
  strata_uio_close(&u);
}

TEST_F(Uio, MissingOrMalformedAttributesAreNamed) {
  const HwTarget target = HwTarget::defaults();
  SimulatedUio device(dir_, target);
  strata_uio u{};
  char err[256] = {};
  const std::string sysfs = path("sys"), dev = path("dev");
  EXPECT_EQ(
      strata_uio_open(&u, sysfs.c_str(), dev.c_str(), "uio7", "uio7", "udmabuf0", err, sizeof err),
      -1);
  EXPECT_EQ(std::string(err),
            path("sys/class/uio/uio7/maps/map0/size") + ": cannot open: No such file or directory");
  std::ofstream(path("sys/class/u-dma-buf/udmabuf0/phys_addr")) << "banana\n";
  EXPECT_EQ(
      strata_uio_open(&u, sysfs.c_str(), dev.c_str(), "uio0", "uio1", "udmabuf0", err, sizeof err),
      -1);
  EXPECT_EQ(std::string(err),
            path("sys/class/u-dma-buf/udmabuf0/phys_addr") + ": not a number: Invalid argument");
  EXPECT_EQ(u.uio_fd, -1);
}

}  // namespace
}  // namespace strata
