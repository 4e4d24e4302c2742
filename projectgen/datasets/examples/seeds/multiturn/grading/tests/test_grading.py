import pytest

from grading import letter_grade


def test_letters():
    assert letter_grade(95) == "A"
    assert letter_grade(75) == "C"
    assert letter_grade(12) == "F"


def test_signs():
    assert letter_grade(87) == "B+"
    assert letter_grade(81) == "B-"
    assert letter_grade(100) == "A+"
    assert letter_grade(59.5) == "F"


def test_out_of_range():
    with pytest.raises(ValueError):
        letter_grade(-1)
    with pytest.raises(ValueError):
        letter_grade(100.5)
