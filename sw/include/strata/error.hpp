// SPDX-License-Identifier: Apache-2.0
// strata::Error: the one exception type for user errors (bad files, bad
// networks, bad arguments). It carries where the problem is: file, line (from
// YAML, 0 when unknown) and layer, and formats them into what().
#pragma once

#include <stdexcept>
#include <string>

namespace strata {

struct ErrorContext {
  std::string file;   // input file the problem is in ("" if none)
  int line = 0;       // 1-based line in that file, 0 if unknown
  std::string layer;  // layer name ("" if not about a layer)
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorContext where = {});

  const std::string& message() const { return message_; }
  const ErrorContext& where() const { return where_; }

 private:
  std::string message_;
  ErrorContext where_;
};

}  // namespace strata
