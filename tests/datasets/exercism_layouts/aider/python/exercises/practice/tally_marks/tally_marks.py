def tally(n):
    pass
