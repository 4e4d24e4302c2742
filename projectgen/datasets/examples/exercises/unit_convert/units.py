"""Units of length and their size in metres."""


class UnknownUnitError(ValueError):
    """A unit that is not in the table."""


FACTORS = {}


def factor(unit):
    pass
