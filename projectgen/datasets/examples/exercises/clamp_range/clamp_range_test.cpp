#include "clamp_range.h"

#include <stdexcept>
#include <vector>

#ifdef EXERCISM_TEST_SUITE
#include <catch2/catch.hpp>
#else
#include "catch.hpp"
#endif

TEST_CASE("a value inside the range stays") {
    REQUIRE(clamp_range::clamp(5, 0, 10) == 5);
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("a value below the range is raised to low") {
    REQUIRE(clamp_range::clamp(-3, 0, 10) == 0);
}

TEST_CASE("a value above the range is lowered to high") {
    REQUIRE(clamp_range::clamp(42, 0, 10) == 10);
}

TEST_CASE("an empty range is refused") {
    REQUIRE_THROWS_AS(clamp_range::clamp(1, 5, 2), std::invalid_argument);
}

TEST_CASE("every value of a list is clamped") {
    REQUIRE(clamp_range::clamp_all({-1, 4, 11}, 0, 10) == std::vector<int>{0, 4, 10});
}
#endif
