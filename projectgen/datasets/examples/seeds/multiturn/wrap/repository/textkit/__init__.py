"""Small text tools."""
