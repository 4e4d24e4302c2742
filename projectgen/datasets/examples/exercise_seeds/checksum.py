"""Seed: a digit checksum of an account number (written for projectgen's bundled seed set)."""


def check_digit(number):
    total = sum((i % 2 + 1) * int(d) for i, d in enumerate(reversed(number)))
    return (10 - total % 10) % 10
