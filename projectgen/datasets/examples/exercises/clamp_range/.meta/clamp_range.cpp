#include "clamp_range.h"

#include <stdexcept>

namespace clamp_range {

int clamp(int value, int low, int high) {
    if (low > high) {
        throw std::invalid_argument("low is above high");
    }
    return value < low ? low : (value > high ? high : value);
}

std::vector<int> clamp_all(const std::vector<int>& values, int low, int high) {
    std::vector<int> clamped;
    clamped.reserve(values.size());
    for (int value : values) {
        clamped.push_back(clamp(value, low, high));
    }
    return clamped;
}

}  // namespace clamp_range
