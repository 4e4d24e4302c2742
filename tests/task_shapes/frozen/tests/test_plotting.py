# Needs an optional dependency that the benchmark's image had and this environment does not: the module
# cannot be collected, and its two tests count as failed out of the frozen total.
import projectgen_missing_plotting_library  # noqa: F401

from temps import to_fahrenheit


def test_plot_axis():
    assert to_fahrenheit(0) == 32


def test_plot_legend():
    assert to_fahrenheit(-40) == -40
