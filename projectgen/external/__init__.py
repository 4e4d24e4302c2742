"""External systems (MetaGPT, gpt-engineer, ...) as experiment methods, run in the sandbox behind the model bridge.

One job per module:

- `systems`: systems.toml and its typed loader (`SystemEntry`, `load_systems`)
- `environment`: a system's own venv in the environment cache (`SystemEnvironments`)
- `checkout`: a checkout system's version, the git commit of its checkout (`checkout_version`)
- `call_budget`: the number of model calls one run may make through the bridge (`CallBudget`)
- `runner`: one system on one task into its run folder: bridge, sandbox, output, scores (`run_external`)
- `methods`: which names are experiment methods, and the ``--system-path`` of checkout systems
- `adapters/`: one standalone script per system, run inside the sandbox (docs/external-systems.md)

Names are re-exported lazily: importing this package imports nothing.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "CallBudget": "projectgen.external.call_budget",
    "checkout_version": "projectgen.external.checkout",
    "SystemEnvironment": "projectgen.external.environment",
    "SystemEnvironments": "projectgen.external.environment",
    "experiment_methods": "projectgen.external.methods",
    "is_external": "projectgen.external.methods",
    "ExternalRun": "projectgen.external.runner",
    "run_external": "projectgen.external.runner",
    "SystemEntry": "projectgen.external.systems",
    "load_systems": "projectgen.external.systems",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
