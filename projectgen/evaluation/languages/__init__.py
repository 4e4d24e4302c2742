"""Test runners for the languages other than Python: Go, Rust, C++, JavaScript and Java.

Each runs a task's tests inside the same sandbox as pytest (`sandbox_session.run_session`) with the
language's own tools, offline, and reads per-test outcomes from the tool's structured report
(`toolchains` probes the tools, `dependencies` prepares what they need outside the sandbox,
`plans` says how each language builds and tests, `reports` parses what they write, `session`
runs it all and returns a `TestReport`).
"""
