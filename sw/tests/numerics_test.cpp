// Unit tests of the numerics contract functions (numerics.hpp).
#include <gtest/gtest.h>

#include "strata/error.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

TEST(Numerics, RshiftRoundHalfUp) {
  EXPECT_EQ(rshift_round(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(rshift_round(-5, 1), -2);  // -2.5 -> -2 (toward +infinity)
  EXPECT_EQ(rshift_round(-6, 1), -3);
  EXPECT_EQ(rshift_round(7, 0), 7);
  EXPECT_THROW(rshift_round(1, 48), Error);
}

}  // namespace
}  // namespace strata
