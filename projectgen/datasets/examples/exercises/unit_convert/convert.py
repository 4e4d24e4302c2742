"""Converting lengths between units."""


def convert(value, from_unit, to_unit):
    pass


def parse_quantity(text):
    pass
