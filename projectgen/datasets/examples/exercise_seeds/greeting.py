"""Seed: a greeting line (written for projectgen's bundled seed set)."""


def greet(name):
    return "Hello, " + name + "!"
