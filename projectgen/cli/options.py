"""Option builders and value parsers shared by the commands, and the objects built from options.

Defaults of the pipeline and attempts options are read from `Settings` and `AttemptSettings`
(the paper's hyperparameters), not repeated here: an option left out is not passed on, and
`--help` shows the model's default, looked up only when the help is printed (importing the
settings loads pydantic, which `projectgen --help` should not pay for).
"""
from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from projectgen.cli.exit_codes import EXIT_USAGE


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage block), like every other user mistake, and a mistyped
    option is named as such, with the option meant (argparse reports `experiment --datset devbench` as an
    invalid choice of the `merge` sub-command, and `run --modle` against `projectgen --help`)."""

    given: list[str] | None = None

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def, override]
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # type: ignore[override]
        parser, unknown = self, None
        if self.given is not None:
            parser = _command_parser(self, self.given)
            unknown = next((arg for arg in self.given if _unknown_option(parser, arg)), None)
        if unknown is not None:
            meant = difflib.get_close_matches(unknown.partition("=")[0], _long_options(parser), n=1, cutoff=0.75)
            message = f"unknown option {unknown.partition('=')[0]}" + (f"; did you mean {meant[0]}?" if meant else "")
        self.exit(EXIT_USAGE, f"projectgen: error: {message} (see `{parser.prog} --help`)\n")


def _command_parser(parser: argparse.ArgumentParser, args: list[str]) -> argparse.ArgumentParser:
    """The (sub-)command parser `args` choose: the last sub-command named on the way down."""
    for arg in args:
        choices = next((action.choices for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction)), None)
        if choices and arg in choices:
            parser = choices[arg]
    return parser


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for option in parser._option_string_actions if option.startswith("--")]


def _unknown_option(parser: argparse.ArgumentParser, arg: str) -> bool:
    """Whether `arg` is a `--option` the parser neither knows nor takes as an unambiguous abbreviation."""
    if not arg.startswith("--") or arg == "--":
        return False
    name = arg.partition("=")[0]
    return not [option for option in _long_options(parser) if option == name or option.startswith(name)]


# --------------------------------------------------------------------------- value parsers

def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def positive_float(text: str) -> float:
    if (value := finite_float(text)) <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text!r}")
    return value


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def non_negative_int(text: str) -> int:
    if (value := whole_number(text)) < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def non_negative_float(text: str) -> float:
    if (value := finite_float(text)) < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def positive_int(text: str) -> int:
    if (value := whole_number(text)) <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def iteration_caps(text: str) -> tuple[int, int, int]:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"give three numbers ARCH,SKELETON,CODE, e.g. 3,3,5: {text!r}")
    return tuple(positive_int(p.strip()) for p in parts)  # type: ignore[return-value]


def task_ids(text: str) -> tuple[str, ...]:
    """``--tasks a,b``: ids in order; a repeated id is refused (it would run once, silently)."""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError(f"no task id given: {text!r}")
    repeated = sorted({task for task in ids if ids.count(task) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"task id(s) given twice: {', '.join(repeated)}")
    return tuple(ids)


def judge_score(text: str) -> float:
    value = positive_float(text)
    if value > 10:
        raise argparse.ArgumentTypeError(f"scores go from 0 to 10: {text!r}")
    return value


# --------------------------------------------------------------------------- defaults from the settings

class SettingDefault:
    """An option's default that is a field of `Settings` or `AttemptSettings`: left out, it is not passed
    on, so the model's own default applies. `str()` (what `--help` prints) looks the value up."""

    def __init__(self, model: str, *fields: str) -> None:
        self.model, self.fields = model, fields

    def value(self) -> Any:
        from projectgen import config

        defaults = getattr(config, self.model).model_fields
        values = [defaults[field].default for field in self.fields]
        return values[0] if len(values) == 1 else tuple(values)

    def __str__(self) -> str:
        value = self.value()
        if isinstance(value, tuple):
            return ",".join(map(str, value))
        return f"{value:g}" if isinstance(value, float) else str(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SettingDefault) and (self.model, self.fields) == (other.model, other.fields)

    def __hash__(self) -> int:
        return hash((self.model, self.fields))


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the user gave the option (its value is not a settings default)."""
    return not isinstance(getattr(args, dest, None), SettingDefault)


# --------------------------------------------------------------------------- option groups

def add_prices_option(parser) -> None:
    """`--prices FILE`, the same for every command that prices model calls."""
    parser.add_argument("--prices", type=Path, default=None, metavar="FILE",
                        help="model prices (TOML or JSON, USD per 1M tokens) over the built-in list prices")


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    """Overrides of the sampling every real model is made with (`projectgen.llm.sampling`)."""
    group = parser.add_argument_group("sampling (defaults: temperature 0, top_p 1.0, the per-model output cap)")
    group.add_argument("--temperature", type=non_negative_float, default=None, help="sampling temperature")
    group.add_argument("--top-p", type=positive_float, default=None, help="nucleus sampling mass (at most 1)")
    group.add_argument("--max-output-tokens", type=positive_int, default=None, metavar="N",
                       help="the longest reply a model may give (default: projectgen.llm.sampling's table: 8k for "
                            "DeepSeek-V3, 16k for GPT-4o, 8k otherwise)")


def sampling_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The sampling overrides given, as run.json's model specs keep them (strings), for `ModelRoles`."""
    if getattr(args, "top_p", None) is not None and args.top_p > 1:
        from projectgen.errors import ProjectGenError

        raise ProjectGenError(f"--top-p is a probability mass: at most 1, got {args.top_p:g}")
    given = {"temperature": getattr(args, "temperature", None), "top_p": getattr(args, "top_p", None),
             "max_tokens": getattr(args, "max_output_tokens", None)}
    return {key: str(value) for key, value in given.items() if value is not None}


def add_runner_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sandbox")
    group.add_argument("--timeout", type=positive_float, default=None,
                       help="seconds per test run (default: the task's `timeout`, else 300); given, it wins")
    group.add_argument("--memory-mb", type=positive_int, default=8192, help="address-space limit (default 8192)")
    group.add_argument("--isolation", choices=["auto", "namespaces", "none"], default="auto",
                       help="auto: namespaces when available, else say so and run without")
    group.add_argument("--cache-dir", type=Path, default=None,
                       help="environment cache (default $PROJECTGEN_CACHE_DIR or ~/.cache/projectgen)")


def add_profile_option(parser: Any) -> None:
    """`--profile`: the named defaults of the settings a run leaves unset (`projectgen.config.SETTINGS_PROFILES`)."""
    parser.add_argument("--profile", choices=["paper", "projectgen"], default=SettingDefault("Settings", "profile"),
                        help="paper: the papers' settings as printed (LiveCoder's selection by the functional score "
                             "and knowledge after every attempt, the paper's judges, distilled stage memory, "
                             "Self-Reflection's carried reflections); projectgen: this library's defaults (default: "
                             "paper for CodeProjectEval and DevBench tasks, else projectgen)")


def add_pipeline_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pipeline (paper defaults)")
    add_profile_option(group)
    group.add_argument("--threshold", type=judge_score, default=SettingDefault("Settings", "threshold"),
                       help="judge score a stage needs (default %(default)s)")
    group.add_argument("--threshold-rule", choices=["exceeds", "at_least"],
                       default=SettingDefault("Settings", "threshold_rule"),
                       help="exceeds: a score must be above the threshold (the paper's rule); at_least: equal is "
                            "enough (default %(default)s)")
    group.add_argument("--iterations", type=iteration_caps, metavar="A,S,C",
                       default=SettingDefault("Settings", "architecture_iterations", "skeleton_iterations",
                                              "code_iterations"),
                       help="iteration caps of the architecture, skeleton and code stages (default %(default)s)")
    group.add_argument("--gamma", type=non_negative_int, default=SettingDefault("Settings", "gamma"),
                       help="stage-memory entries per prompt (default %(default)s)")
    group.add_argument("--edit-format", choices=["whole", "search_replace"],
                       default=SettingDefault("Settings", "edit_format"),
                       help="how the coder answers repair requests (default %(default)s)")
    group.add_argument("--feedback-suite", choices=["check", "unit"],
                       default=SettingDefault("Settings", "feedback_suite"),
                       help="tests whose output the code judge, Self-Reflection and the knowledge agent see: check "
                            "(visible) or unit (the hidden tests the score comes from, as LiveCoder does on "
                            "RAL-Bench and NL2Repo-Bench, whose tasks set it; labelled in every report) "
                            "(default %(default)s)")
    group.add_argument("--max-concurrency", type=positive_int, default=SettingDefault("Settings", "max_concurrency"),
                       help="model calls in flight while filling one dependency layer (default %(default)s)")
    group.add_argument("--max-tokens", type=positive_int, default=None, help="stop the run beyond this many tokens")


def add_attempt_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("attempts (LiveCoder; paper defaults)")
    group.add_argument("--attempts", type=positive_int, default=SettingDefault("AttemptSettings", "attempts"),
                       help="attempts at the task (default %(default)s)")
    group.add_argument("--selection", choices=["check", "unit"], default=SettingDefault("AttemptSettings", "selection"),
                       help="tests that pick and reuse the best attempt: check (visible; the projectgen profile's) "
                            "or unit (hidden: the functional score, as the paper and the paper profile do; "
                            "labelled in every report)")
    group.add_argument("--no-success-knowledge", action="store_true", help="ablation: no success knowledge")
    group.add_argument("--no-failure-knowledge", action="store_true", help="ablation: no failure knowledge")
    group.add_argument("--no-best", action="store_true",
                       help="ablation: no historical best (the output is the last attempt)")
    group.add_argument("--warm-start", action="store_true",
                       help="later attempts start from the best attempt's architecture and skeleton")
    group.add_argument("--knowledge-store", default=None, metavar="URL",
                       help="a Chroma server (http://host:port) shared between runs; default: embedded in DIR")
    # the names of projectgen.memory.EMBEDDINGS (spelled out: importing projectgen.memory would load pydantic)
    group.add_argument("--embedding", default=None, metavar="NAME",
                       help="how knowledge entries are embedded for retrieval: wordllama (default: static word "
                            "embeddings, offline), e5 (multilingual-e5-small via the e5 extra; slower) or hashing "
                            "(lexical overlap, no model); a store built with one refuses the others")


def add_checkpoint_option(parser) -> None:
    """`--checkpoint-url URL`: where a run's (or every run's) LangGraph checkpoints go."""
    parser.add_argument("--checkpoint-url", default=None, metavar="URL",
                        help="PostgreSQL database for the checkpoints (postgresql://user@host/db), for runs "
                             "shared between machines; default: checkpoints.sqlite in each run folder")


def add_batch_options(parser, *, units: str, out_default: str, tasks: str = "task ids") -> None:
    """The options every batch command shares: --tasks, --workers, --out, --fresh, --base-url (`units`
    names what runs in parallel, `out_default` the default results folder)."""
    parser.add_argument("--tasks", type=task_ids, default=None, metavar="ID,ID",
                        help=f"only these {tasks} (comma-separated)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help=f"{units} run in parallel (default: --max-concurrent-calls; with --ray-address: as "
                             "many as the cluster's sandbox slots)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"results folder with the resumable ledger (default: {out_default})")
    parser.add_argument("--fresh", action="store_true", help=f"forget the ledger and run every one of the {units} "
                        "again")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for every model")


def add_concurrency_option(parser: argparse.ArgumentParser, units: str) -> None:
    """`--max-concurrent-calls N`: model calls in flight per model or endpoint (`Concurrency.calls`); the
    `units` waiting on a model run at once up to --workers (default N), sandbox runs one per core."""
    from projectgen.llm.call_slots import DEFAULT_CALLS

    parser.add_argument("--max-concurrent-calls", type=positive_int, default=DEFAULT_CALLS, metavar="N",
                        help=f"model calls in flight per model or endpoint, across the {units} (default "
                             f"%(default)s); {units} waiting on a model run at once up to --workers (default: this "
                             "N), while sandbox runs stay at one per core")


def add_faults_option(parser: argparse.ArgumentParser) -> None:
    """`--inject-faults SPEC`: every model wrapped in `projectgen.llm.faults.FaultyChatModel` (testing, and
    throughput offline with a latency)."""
    parser.add_argument("--inject-faults", default=None, metavar="SPEC",
                        help="wrap the models in a fault-injecting wrapper (testing), e.g. rate_limit=0.2,prose=0.1,"
                             "seed=7, or latency=1s (or 0.5s-2s: a delay on every call, to measure throughput "
                             "offline); kinds: see projectgen.llm.faults")


def add_executor_options(parser) -> None:
    """`--executor` and `--ray-address`: where a batch command's units run (`executor_from_args`)."""
    group = parser.add_argument_group("executor (where the units run; docs/scale-out.md)")
    group.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="local: threads of this process, --workers at a time (default); ray: each unit one Ray "
                            "task, on a local Ray instance with --workers sandbox slots, or on the cluster at "
                            "--ray-address (pip install 'projectgen[ray]')")
    group.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="with --executor ray: join this running cluster (HOST:PORT of its head, or auto; run the "
                            "command on one of its nodes) instead of starting a local instance")


# --------------------------------------------------------------------------- what options build

def executor_from_args(args: argparse.Namespace, *, per_machine: dict[str, str] | None = None,
                       default_workers: int = 1):
    """The executor `--executor`, `--ray-address` and `--workers` describe, connected and checked; the local
    executor runs `default_workers` units at a time when --workers is not given.

    `per_machine` names the state the command would keep on each machine (what -> the option that
    shares it, e.g. SQLite checkpoints -> --checkpoint-url): with a Ray cluster of more than one
    node it is refused with one line, since a unit retried elsewhere would not find it.
    """
    import sys

    from projectgen.errors import ProjectGenError

    workers = getattr(args, "workers", None)
    if getattr(args, "executor", "local") != "ray":
        if getattr(args, "ray_address", None):
            raise ProjectGenError("--ray-address joins a Ray cluster: give it with --executor ray")
        from projectgen.experiments.executors import LocalExecutor

        return LocalExecutor(workers=workers or default_workers)
    from projectgen.experiments.ray_executor import RayExecutor

    executor = RayExecutor(address=args.ray_address, workers=workers).connect()
    executor.refuse_per_machine(per_machine or {})
    print(executor.describe(), file=sys.stderr, flush=True)
    return executor



def settings_from_args(args: argparse.Namespace):
    """The pipeline `Settings` the options give; options left out keep the model's defaults."""
    from projectgen.config import Settings

    names = ("profile", "threshold", "threshold_rule", "gamma", "edit_format", "feedback_suite", "max_concurrency")
    values: dict[str, Any] = {name: getattr(args, name) for name in names if given(args, name)}
    if given(args, "iterations"):
        values["architecture_iterations"], values["skeleton_iterations"], values["code_iterations"] = args.iterations
    return Settings(**values)


def attempt_settings_from_args(args: argparse.Namespace):
    """LiveCoder's `AttemptSettings` the options give; options left out keep the model's defaults."""
    from projectgen.config import AttemptSettings

    values: dict[str, Any] = {name: getattr(args, name) for name in ("attempts", "selection") if given(args, name)}
    # Only the switches the user gave are set, so a method's defaults (`projectgen.runs.methods`) hold otherwise.
    switches = {"success_knowledge": args.no_success_knowledge, "failure_knowledge": args.no_failure_knowledge,
                "historical_best": args.no_best, "measure_unit_tests": args.no_unit_tests}
    values.update({name: False for name, off in switches.items() if off})
    if args.warm_start:
        values["warm_start"] = True
    return AttemptSettings(**values)


def runner_settings_from_args(args: argparse.Namespace):
    """The `RunnerSettings` the sandbox options describe (picklable: what a batch sends to other processes)."""
    from projectgen.evaluation.runner import RunnerSettings
    from projectgen.evaluation.sandbox import Limits

    return RunnerSettings(
        timeout=args.timeout, limits=Limits(memory_bytes=args.memory_mb * 1024**2), isolation=args.isolation,
        cache_dir=args.cache_dir, keep_workspace=getattr(args, "keep_workspace", False),
    )


def runner_from_args(args: argparse.Namespace, log: Callable[[str], None]):
    """The sandbox runner the sandbox options describe."""
    from projectgen.evaluation.runner import SandboxRunner

    return SandboxRunner(runner_settings_from_args(args), log=log)


def prices_from_args(path: Path | None):
    """The price table of `--prices FILE` (over the list prices), and a phrase naming where prices came from."""
    from projectgen.llm.pricing import price_table

    return price_table(path)


def check_out_path(path: Path, *, folder: bool) -> None:
    """Refuse, before any work, an output path that cannot be made: a file where a folder is needed (or
    the reverse), or a path below a file."""
    from projectgen.errors import ProjectGenError

    if path.exists():
        if folder and not path.is_dir():
            raise ProjectGenError(f"{path} exists and is not a folder; choose another --out")
        if not folder and path.is_dir():
            raise ProjectGenError(f"{path} is a folder; --out takes the path of a file")
        return
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ProjectGenError(f"{path}: cannot write there ({parent} is not a folder); choose another --out")


def resolve_task(spec: str):
    """A task folder, or the name of a bundled example (`run` and `eval` accept both)."""
    from projectgen.datasets.loaders import load_task_or_example

    return load_task_or_example(spec)


BUNDLED_DATASET = "examples"


def bundled_script_spec(spec: str, examples: str | None = None) -> str:
    """A ``scripted:`` spec naming a bundled replay made the script's path: ``scripted:examples`` is the command's
    own bundled replay (`examples`, a name in the bundled ``scripts/``), ``scripted:NAME`` a bundled script when
    no file NAME exists; any other spec as it is. The one way `scripted:` names a bundled script."""
    from projectgen.datasets.examples import example_script_path
    from projectgen.llm.specs import SCRIPTED_PREFIX

    name = spec[len(SCRIPTED_PREFIX):] if spec.startswith(SCRIPTED_PREFIX) else ""
    if name == BUNDLED_DATASET and examples is not None:
        return f"{SCRIPTED_PREFIX}{example_script_path(examples)}"
    if name and not Path(name).exists() and "/" not in name and not name.endswith(".json"):
        return f"{SCRIPTED_PREFIX}{example_script_path(name)}"
    return spec


def resolve_dataset(given: str | Path, bundled: Path) -> Path:
    """A dataset folder, the bundled one when given as the bare name ``examples`` (write ``./examples`` for a
    folder of that name: the repository's own ``examples/`` holds scripts), or a fetched benchmark by name
    (``devbench``; an existing folder of that name wins)."""
    from projectgen.errors import ProjectGenError

    from projectgen.datasets.catalog import published_datasets, published_folder

    if str(given) == BUNDLED_DATASET:
        return bundled
    published = published_folder(str(given))
    if published is not None:
        return published
    path = Path(given)
    if not path.is_dir():
        raise ProjectGenError(f"{path}: dataset folder not found (or `{BUNDLED_DATASET}` for the bundled one, or a "
                              f"fetched benchmark: {', '.join(published_datasets())}; `projectgen datasets list`)")
    return path
