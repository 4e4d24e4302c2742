def window_medians(values, size):
    if size < 1 or size > len(values):
        raise ValueError("size must be from 1 to the number of values")
    medians = []
    for start in range(len(values) - size + 1):
        window = sorted(values[start:start + size])
        middle = size // 2
        medians.append(window[middle] if size % 2 else (window[middle - 1] + window[middle]) / 2)
    return medians
