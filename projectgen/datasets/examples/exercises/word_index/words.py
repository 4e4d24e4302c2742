"""Splitting a text into words."""


def words(text):
    pass
