"""Three integer operations (not implemented)."""


def add(a, b):
    return None


def sub(a, b):
    return None


def div(a, b):
    return None
