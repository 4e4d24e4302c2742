// Exercises bundle Catch2's single header here; this example takes Debian's (package catch2) instead
// of shipping its 17,000 lines.
#include <catch2/catch.hpp>
