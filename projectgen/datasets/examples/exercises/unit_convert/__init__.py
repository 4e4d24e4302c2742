from .convert import convert, parse_quantity
from .units import UnknownUnitError, factor

__all__ = ["UnknownUnitError", "convert", "factor", "parse_quantity"]
