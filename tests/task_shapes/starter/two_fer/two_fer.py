def two_fer(name="you"):
    """One for `name`, one for me."""
    pass
