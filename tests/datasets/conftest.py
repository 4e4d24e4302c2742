"""exercism_layouts/ and benchmark_layouts/ hold tasks (data for the loader tests), whose test files are not ours
to collect."""
collect_ignore = ["exercism_layouts", "benchmark_layouts"]
