def tally(n):
    if n < 0:
        raise ValueError("a count cannot be negative")
    groups, rest = divmod(n, 5)
    return " ".join(["||||/"] * groups + (["|" * rest] if rest else []))
