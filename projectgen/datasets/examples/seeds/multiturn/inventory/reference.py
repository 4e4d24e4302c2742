"""Orders taken from a stock."""
from __future__ import annotations


def apply_orders(stock: dict[str, int], orders: list[tuple[str, int]]) -> dict[str, int]:
    """The stock left after `orders`, all or nothing; `stock` itself is not changed."""
    left = dict(stock)
    for item, quantity in orders:
        if item not in left:
            raise KeyError(item)
        if quantity < 1:
            raise ValueError(f"an order is for at least 1 {item}, got {quantity}")
        if quantity > left[item]:
            raise ValueError(f"not enough {item}: {left[item]} left, {quantity} ordered")
        left[item] -= quantity
    return {item: count for item, count in left.items() if count > 0}
