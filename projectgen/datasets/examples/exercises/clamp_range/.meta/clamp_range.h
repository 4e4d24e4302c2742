#pragma once

#include <vector>

namespace clamp_range {

int clamp(int value, int low, int high);
std::vector<int> clamp_all(const std::vector<int>& values, int low, int high);

}  // namespace clamp_range
