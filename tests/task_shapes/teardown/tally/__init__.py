def total(values):
    return sum(values)


def mean(values):
    if not values:
        raise ValueError("no values")
    return total(values) / len(values)
