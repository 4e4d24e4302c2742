import pytest

from inventory import apply_orders


def test_orders_taken():
    assert apply_orders({"apple": 5, "pear": 2}, [("apple", 2), ("apple", 1)]) == {"apple": 2, "pear": 2}


def test_stock_unchanged():
    stock = {"apple": 5}
    apply_orders(stock, [("apple", 2)])
    assert stock == {"apple": 5}


def test_unknown_item():
    with pytest.raises(KeyError):
        apply_orders({"apple": 5}, [("plum", 1)])


def test_not_enough():
    with pytest.raises(ValueError):
        apply_orders({"apple": 1}, [("apple", 2)])


def test_fewer_than_one():
    with pytest.raises(ValueError):
        apply_orders({"apple": 1}, [("apple", 0)])


def test_sold_out_items_left_out():
    assert apply_orders({"apple": 2, "pear": 1}, [("pear", 1)]) == {"apple": 2}
