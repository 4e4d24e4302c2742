"""Times of day as minutes."""
import warnings


def minutes(text: str) -> int:
    hours, sep, mins = text.partition(":")
    if not sep or not hours.isdigit() or not mins.isdigit() or int(hours) > 23 or int(mins) > 59:
        raise ValueError(f"not a time: {text!r}")
    return int(hours) * 60 + int(mins)


def to_text(total: int) -> str:
    total %= 24 * 60
    return f"{total // 60:02d}:{total % 60:02d}"


def parse(text: str) -> int:
    """The old name of `minutes`."""
    warnings.warn("parse() is deprecated, use minutes()", DeprecationWarning, stacklevel=2)
    return minutes(text)


def old_name(text: str) -> int:
    warnings.warn("the old name is pending removal", PendingDeprecationWarning, stacklevel=2)
    return minutes(text)
