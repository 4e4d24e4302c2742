"""exercism_layouts/ holds exercises (data for the loader tests), whose test files are not ours to collect."""
collect_ignore = ["exercism_layouts"]
