"""Protocols: each paper's way of running models on a dataset, one folder each.

A protocol folder (``protocols/<name>/``) holds its dataset loader, its solver (a LangGraph graph factory),
its scorers and its typed settings, and names them in its ``protocol.py`` as ``PROTOCOL`` (`definition.Protocol`).
`registry` finds the folders (a new protocol edits no shared list); `evaluate.evaluate` runs any protocol over
the batch engine (`projectgen.experiments.engine`) and the driver (`projectgen.runs.unit.drive_unit`),
resumable; `samples` is the batch of a protocol that brings only a solver and scorers.

Shared machinery stays below this package (sandbox, model door, engine, driver, memory, SSAT, metrics):
nothing there imports a protocol. Nothing is imported here, so `projectgen --help` stays fast.
"""
