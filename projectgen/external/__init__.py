"""External systems (MetaGPT, gpt-engineer, ...) as experiment methods, run in the sandbox behind the model bridge.

One job per module:

- `systems`: systems.toml and its typed loader (`SystemEntry`, `load_systems`)
- `environment`: a system's own venv in the environment cache (`SystemEnvironments`)
- `checkout`: a checkout system's version, the git commit of its checkout (`checkout_version`)
- `call_budget`: the number of model calls one run may make through the bridge (`CallBudget`)
- `runner`: one system on one task into its run folder: bridge, sandbox, output, scores (`run_external`)
- `methods`: which names are experiment methods, and the ``--system-path`` of checkout systems
- `adapters/`: one standalone script per system, run inside the sandbox (docs/external-systems.md)

Nothing is imported here: import a name from its module (`experiments` imports `methods` on every run, and
`runner` needs the ``bridge`` extra).
"""
