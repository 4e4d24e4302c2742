"""Seed: booked time slots of a meeting room (written for projectgen's bundled seed set)."""


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


def free(bookings, day_start, day_end):
    busy = sorted(bookings)
    gaps, at = [], day_start
    for start, end in busy:
        if start > at:
            gaps.append((at, start))
        at = max(at, end)
    if at < day_end:
        gaps.append((at, day_end))
    return gaps
