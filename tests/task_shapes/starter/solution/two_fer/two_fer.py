def two_fer(name="you"):
    """One for `name`, one for me."""
    return f"One for {name}, one for me."
