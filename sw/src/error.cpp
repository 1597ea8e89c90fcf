// SPDX-License-Identifier: Apache-2.0
#include "strata/error.hpp"

#include <fmt/format.h>

namespace strata {
namespace {

std::string format_error(const std::string& message, const ErrorContext& where) {
  std::string out;
  if (!where.file.empty()) {
    out = where.line > 0 ? fmt::format("{}:{}: ", where.file, where.line)
                         : fmt::format("{}: ", where.file);
  }
  if (!where.layer.empty()) out += fmt::format("layer '{}': ", where.layer);
  return out + message;
}

}  // namespace

Error::Error(const std::string& message, ErrorContext where)
    : std::runtime_error(format_error(message, where)),
      message_(message),
      where_(std::move(where)) {}

}  // namespace strata
