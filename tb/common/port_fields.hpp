// SPDX-License-Identifier: Apache-2.0
// Bit fields of Verilated ports of any width, for every bench: integer ports (CData, SData,
// IData, QData) and wide ports (VlWide<N>), so a bench addresses element i of
// a packed-array port the same way whatever the configuration makes its width.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace strata::tb {

// Bits [lsb, lsb + width) of a port, width <= 64.
template <class T>
requires std::is_integral_v<T>
void set_field(T& port, unsigned lsb, unsigned width, uint64_t value) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  uint64_t word = static_cast<uint64_t>(port);
  word = (word & ~(mask << lsb)) | ((value & mask) << lsb);
  port = static_cast<T>(word);
}

template <class T>
requires std::is_integral_v<T> uint64_t get_field(const T& port, unsigned lsb, unsigned width) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return (static_cast<uint64_t>(port) >> lsb) & mask;
}

template <std::size_t W>
void set_field(VlWide<W>& port, unsigned lsb, unsigned width, uint64_t value) {
  for (unsigned done = 0; done < width;) {
    const unsigned bit = lsb + done;
    const unsigned word = bit / 32, off = bit % 32;
    const unsigned take = std::min(32 - off, width - done);
    const uint32_t mask = take >= 32 ? ~uint32_t{0} : ((uint32_t{1} << take) - 1);
    const uint32_t chunk = static_cast<uint32_t>(value >> done) & mask;
    port[word] = (port[word] & ~(mask << off)) | (chunk << off);
    done += take;
  }
}

template <std::size_t W>
uint64_t get_field(const VlWide<W>& port, unsigned lsb, unsigned width) {
  uint64_t value = 0;
  for (unsigned done = 0; done < width;) {
    const unsigned bit = lsb + done;
    const unsigned word = bit / 32, off = bit % 32;
    const unsigned take = std::min(32 - off, width - done);
    const uint32_t mask = take >= 32 ? ~uint32_t{0} : ((uint32_t{1} << take) - 1);
    value |= static_cast<uint64_t>((port[word] >> off) & mask) << done;
    done += take;
  }
  return value;
}

// The C++ type Verilator gives a port of `Bits` bits.
template <unsigned Bits>
using VlPort = std::conditional_t<
    Bits <= 8, CData,
    std::conditional_t<
        Bits <= 16, SData,
        std::conditional_t<Bits <= 32, IData,
                           std::conditional_t<Bits <= 64, QData, VlWide<(Bits + 31) / 32>>>>>;

// Copies a flat port (any width) to or from bits [lsb, lsb + width) of a struct port.
template <class Port, class Flat>
void pack_field(Port& port, unsigned lsb, unsigned width, const Flat& flat) {
  if constexpr (std::is_integral_v<Flat>) {
    set_field(port, lsb, width, static_cast<uint64_t>(flat));
  } else {
    for (unsigned done = 0; done < width; done += 32) {
      set_field(port, lsb + done, std::min(32u, width - done), flat[done / 32]);
    }
  }
}

template <class Port, class Flat>
void unpack_field(const Port& port, unsigned lsb, unsigned width, Flat& flat) {
  if constexpr (std::is_integral_v<Flat>) {
    flat = static_cast<Flat>(get_field(port, lsb, width));
  } else {
    for (unsigned done = 0; done < width; done += 32) {
      const unsigned take = std::min(32u, width - done);
      flat[done / 32] = static_cast<uint32_t>(get_field(port, lsb + done, take));
    }
  }
}

// Sign-extended field.
template <class Port>
int64_t get_signed(const Port& port, unsigned lsb, unsigned width) {
  const uint64_t raw = get_field(port, lsb, width);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((raw ^ sign) - sign);
}

}  // namespace strata::tb
