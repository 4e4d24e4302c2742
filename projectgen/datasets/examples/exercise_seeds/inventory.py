"""Seed: a shop's stock counter (written for projectgen's bundled seed set)."""

stock = {}


def receive(item, count):
    stock[item] = stock.get(item, 0) + count


def sell(item, count):
    if stock.get(item, 0) < count:
        raise RuntimeError("not enough " + item)
    stock[item] -= count
