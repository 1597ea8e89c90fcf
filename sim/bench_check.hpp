// SPDX-License-Identifier: Apache-2.0
// How the bench agents (AXI memory model, AXI4-Lite driver) report a failed
// check. In the GoogleTest benches a failed check is ADD_FAILURE: the test
// fails and the simulation goes on. Code built without GoogleTest (define
// STRATA_TB_NO_GTEST; the RTL runner that the `strata` command line links)
// installs a handler on each agent; without one the check throws, so a failed
// check is never silent. A binary must not mix the two modes in the agents it
// instantiates (the runner's agents are only instantiated in the runner).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#ifndef STRATA_TB_NO_GTEST
#include <gtest/gtest.h>
#endif

namespace strata::tb {

using FailureHandler = std::function<void(const std::string&)>;

inline void report_failure(const FailureHandler& handler, const std::string& what) {
  if (handler) {
    handler(what);
    return;
  }
#ifndef STRATA_TB_NO_GTEST
  ADD_FAILURE() << what;
#else
  throw std::runtime_error(what);
#endif
}

}  // namespace strata::tb
