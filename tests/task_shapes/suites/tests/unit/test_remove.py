def test_remove(sample):
    sample.remove("b")
    assert sample.count("b") == 0 and sample.total == 3


def test_remove_absent_is_fine(sample):
    sample.remove("zzz")
    assert sample.total == 6
