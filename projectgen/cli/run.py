"""`projectgen run` (and `--resume`) and `projectgen demo`: a LiveCoder run around ProjectGen, in a run folder."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_AWAITING_REVIEW, EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (SettingDefault, add_attempt_options, add_faults_option, add_pipeline_options,
                                    add_prices_option, add_profile_option, add_runner_options, add_sampling_options,
                                    attempt_settings_from_args, given, positive_float, resolve_task,
                                    runner_from_args, sampling_from_args, settings_from_args)
from projectgen.cli.tables import make_console, print_attempts
from projectgen.llm.roles import ROLES
from projectgen.llm.specs import SCRIPTED_PREFIX, absolute_script
from projectgen.oracles.role_specs import models_from_specs
from projectgen.runs.methods import DEFAULT_METHOD, METHODS


# What `run --resume` may be given besides the folder: the sandbox's options, which run.json does not keep.
# The endpoint (--base-url; keys come from the environment) may change too: a server back on another port
# serves the same model, so the run means what it meant.
RESUME_MAY_CHANGE = frozenset({"resume", "timeout", "memory_mb", "isolation", "cache_dir", "handler", "command",
                               "base_url"})


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a run: the run is saved, and `advice` says how to continue it."""

    def __init__(self, out: Path) -> None:
        super().__init__(str(out))
        self.advice = f"the run is saved in {out}; continue it with `projectgen run --resume {out}`"


def add_run_command(commands) -> None:
    """Add `run` to the CLI's sub-parsers."""
    run = commands.add_parser("run", help="generate a repository for a task (ProjectGen inside LiveCoder's attempts)",
                              description="Attempts (LiveCoder) of architecture -> skeleton -> code (each stage "
                                          "with its judge loop); keeps knowledge and the best repository across "
                                          "attempts, checkpoints to DIR/checkpoints.sqlite, traces to "
                                          "DIR/events.jsonl, and ends with the hidden unit tests.")
    run.add_argument("task", nargs="?", default=None,
                     help="task folder (CodeProjectEval, DevBench or task.toml), a bundled example name, "
                          "or NAME/TASK of a fetched benchmark (devbench/lice)")
    run.add_argument("--resume", type=Path, default=None, metavar="DIR",
                     help="continue the run in DIR where it stopped (no completed model call is repeated)")
    # default None, so that a --method given with --resume is told apart from the default
    run.add_argument("--method", choices=METHODS, default=None, metavar="METHOD",
                     help=f"what generates the repository (default {DEFAULT_METHOD}): direct (one call), "
                          "self-reflection (direct + up to 4 rounds on the feedback tests' errors), projectgen-no-iter "
                          "(no judges), projectgen (one pass), livecoder (attempts around projectgen) and its "
                          "ablations livecoder-no-success, livecoder-no-failure, livecoder-no-best; the baselines "
                          "make one attempt unless --attempts says otherwise")
    run.add_argument("--model", default=None,
                     help="chat model for every role: PROVIDER:MODEL (openai:gpt-4o-mini), a served model name "
                          "with --base-url, scripted:PATH to replay a script, or 'reference': the reference replay "
                          "(oracle, not a model), every agent answered from the task's reference code, to check "
                          "that the harness gives a perfect generator full marks (default $PROJECTGEN_MODEL)")
    run.add_argument("--role-model", action="append", default=[], metavar="ROLE=SPEC",
                     help=f"a different model for one role ({', '.join(ROLES)}); repeatable")
    run.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default $PROJECTGEN_BASE_URL)")
    run.add_argument("--out", type=Path, default=None, help="output folder (default runs/TASK-TIMESTAMP)")
    run.add_argument("--force", action="store_true", help="replace the outputs of an earlier run in --out")
    run.add_argument("--review", default=None, metavar="STAGES",
                     help="pause for your decision once these stages have their output (architecture, skeleton, "
                          "or both: architecture,skeleton): the run stops awaiting review (exit code 3) and "
                          "`projectgen review DIR` shows the tree and takes --approve, --edit FILE.json or "
                          "--reject FEEDBACK")
    add_faults_option(run)
    add_sampling_options(run)
    add_pipeline_options(run)
    add_attempt_options(run)
    run.add_argument("--no-unit-tests", action="store_true",
                     help="do not run the hidden unit tests (neither per attempt nor at the end)")
    durable = run.add_argument_group("budget and checkpoints")
    durable.add_argument("--max-cost", type=positive_float, default=None, metavar="USD",
                         help="stop the run (keeping the best so far) once its priced calls cost more than this")
    add_prices_option(durable)
    durable.add_argument("--checkpoint-url", default=None, metavar="URL",
                         help="PostgreSQL database for the checkpoints (postgresql://user@host/db), for runs "
                              "shared between machines; default: DIR/checkpoints.sqlite")
    add_runner_options(run)
    run.set_defaults(handler=cmd_run)


def add_demo_command(commands) -> None:
    """Add `demo` to the CLI's sub-parsers."""
    demo = commands.add_parser("demo", help="run the whole pipeline offline on the bundled example (scripted replay)")
    demo.add_argument("--out", type=Path, default=Path("demo-output"),
                      help="output folder (an earlier demo's output there is replaced; anything else is refused)")
    demo.add_argument("--force", action="store_true", help="replace the run folder at --out even when it is not "
                      "an earlier demo's output")
    add_profile_option(demo)
    add_runner_options(demo)
    demo.set_defaults(handler=cmd_demo)


def model_specs_from_args(args: argparse.Namespace) -> dict[str, str]:
    """``{"default": SPEC, ROLE: SPEC, ..., "base_url": URL}`` from the options: what run.json records."""
    import os

    from projectgen.errors import ProjectGenError

    if args.model is not None and not args.model.strip():
        raise ProjectGenError("--model is empty: give PROVIDER:MODEL (e.g. openai:gpt-4o-mini) or scripted:PATH")
    default = args.model or os.environ.get("PROJECTGEN_MODEL")
    if not default:
        raise ProjectGenError("no model given: pass --model PROVIDER:MODEL (or scripted:PATH), or set "
                              "PROJECTGEN_MODEL (--model reference replays the task's reference code)")
    specs = {"default": absolute_script(default)}
    for item in args.role_model:
        role, sep, spec = item.partition("=")
        if not sep or not role.strip() or not spec.strip():
            raise ProjectGenError(f"--role-model expects ROLE=SPEC (e.g. coder=openai:gpt-4o), got {item!r}")
        specs[role.strip()] = absolute_script(spec.strip())
    if args.base_url is not None:
        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        specs["base_url"] = args.base_url
    if getattr(args, "inject_faults", None):
        specs["faults"] = args.inject_faults
    specs.update(sampling_from_args(args))
    return specs


def _execute_run(args: argparse.Namespace, request, *, models, out: Path, resume: bool = False,
                 decision=None) -> int:
    """Run the `request` in `out` (or with `resume` continue the run there, with a review `decision` if one is
    given) and print its attempts, or
    how to review it when it paused for review; `--force` and the sandbox options come from `args`."""
    from projectgen.errors import ProjectGenError
    from projectgen.llm import MODEL_FAILURES, model_failure_reason
    from projectgen.runs import Run, RunParts

    console = make_console()

    def progress(message: str) -> None:
        console.print(f"[dim]{message}[/dim]", highlight=False)

    parts = RunParts(models=models, runner=runner_from_args(args, log=progress), progress=progress)
    run = (Run.resume(out, parts, decision=decision) if resume
           else Run.open(request, out, parts, force=getattr(args, "force", False)))
    folder = run.folder
    try:
        outcome = run.run()
    except KeyboardInterrupt:  # run.json says "interrupted"; say how to go on (the same command would be refused)
        raise RunInterrupted(out) from None
    except MODEL_FAILURES as exc:  # the run recorded its end; say what happened and where the best so far is
        reason = folder.read_manifest().reason or model_failure_reason(exc)
        if not _reached_its_model(folder):  # an empty "best so far" would mislead: say nothing was made
            shutil.rmtree(folder.repository, ignore_errors=True)
            raise ProjectGenError(f"the run failed before its model produced anything ({reason}): nothing was "
                                  f"generated; once the model is reachable, continue with `projectgen run --resume "
                                  f"{out}` (add --base-url URL if the server moved)") from None
        raise ProjectGenError(f"the run failed ({reason}); the best so far is in {folder.repository}; "
                              f"continue with `projectgen run --resume {out}`") from None
    if outcome.review is not None:
        print_pause(console, out, outcome.review)
        return EXIT_AWAITING_REVIEW
    print_attempts(console, outcome)
    console.print(f"outputs: {out} (repository/, summary.json, events.jsonl, usage.jsonl, attempts/; "
                  f"inspect with `projectgen trace {out}` and `projectgen report {out}`)", highlight=False)
    environment = outcome.unit_report.environment if outcome.unit_report is not None else None
    for line in environment.incomplete if environment is not None else []:  # the score above is not all the model's
        console.print(f"{line}: the hidden tests' score counts tests no output could pass here", style="bold",
                      highlight=False, markup=False)
    if outcome.unit_report is not None:
        return EXIT_OK if outcome.unit_report.status == "passed" else EXIT_TESTS_FAILED
    final = outcome.summary.get("final") or {}
    return EXIT_OK if final.get("score") == 1.0 else EXIT_TESTS_FAILED


def _reached_its_model(folder) -> bool:
    """Whether any model call of the run (this invocation's or an earlier one's) got a reply."""
    return any(record.error is None for record in folder.usage_records())


def print_pause(console, out: Path, record, *, header: bool = True) -> None:
    """What a run paused for review says: what waits for a decision, and the exact commands that decide."""
    from projectgen.runs.pending_review import describe_pending, review_commands

    if header:
        console.print(f"paused for review: {describe_pending(record)} awaits your decision; the run is saved in "
                      f"{out}", highlight=False, markup=False, soft_wrap=True)
    for what, command in review_commands(out, record.get("stage")):
        console.print(f"  {what + ':':10} {command}", highlight=False, markup=False, soft_wrap=True)


def cmd_run(args: argparse.Namespace) -> int:
    from datetime import datetime

    from projectgen.errors import ProjectGenError
    from projectgen.runs.request import RunRequest

    if args.resume is not None:
        given = options_fixed_by_run_json(args)
        if given:
            raise ProjectGenError(f"--resume DIR continues a run with the task, models, settings, budgets and folder "
                                  f"in its run.json: leave out {', '.join(given)}")
        return continue_run(args)
    if not args.task:
        raise ProjectGenError("give a task (a folder or a bundled example name), or --resume DIR")
    if args.review is not None and not args.review.replace(",", "").strip():
        raise ProjectGenError("--review is empty: name the stages to review (architecture, skeleton)")
    # Everything the user gave is checked here, before the run folder is made or any model is called.
    task = resolve_task(args.task)
    specs = model_specs_from_args(args)
    models = models_from_specs(specs, task)
    request = RunRequest.for_task(task, method=args.method or DEFAULT_METHOD, models=specs,
                                  settings=settings_from_args(args), attempt_settings=attempt_settings_from_args(args),
                                  knowledge_store=args.knowledge_store, embedding=args.embedding,
                                  max_tokens=args.max_tokens, max_cost_usd=args.max_cost, prices_file=args.prices,
                                  checkpoint_url=args.checkpoint_url, review=args.review or ())
    out = args.out or Path("runs") / f"{task.id}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    return _execute_run(args, request, models=models, out=out)


def options_fixed_by_run_json(args: argparse.Namespace) -> list[str]:
    """The `run` options given along with --resume that the run's run.json fixes, as the user spelled them.

    Silently running with run.json's value instead would surprise whoever typed, say, --attempts 8.
    """
    parser = argparse.ArgumentParser()
    add_run_command(parser.add_subparsers(dest="command"))
    defaults = vars(parser.parse_args(["run"]))
    return ["TASK" if dest == "task" else "--" + dest.replace("_", "-")
            for dest, default in defaults.items()
            if dest not in RESUME_MAY_CHANGE and resolved(getattr(args, dest, default)) != resolved(default)]


def resolved(value):
    """An option's value, with a settings default replaced by the value it stands for."""
    return value.value() if isinstance(value, SettingDefault) else value


def continue_run(args: argparse.Namespace, decision=None) -> int:
    """`run --resume DIR`, and `review DIR` with a `decision`: the run in ``args.resume`` continued with its
    run.json's request (task, models, settings)."""
    from projectgen.errors import ProjectGenError
    from projectgen.runs.resume import resumable_run

    manifest, task = resumable_run(args.resume)
    if not manifest.models.get("default"):
        raise ProjectGenError(f"{args.resume}: the run was started from Python with model objects; resume it "
                              "with projectgen.runs.Run.resume(DIR, RunParts(models=...)).run()")
    specs = dict(manifest.models)
    if getattr(args, "base_url", None) is not None:
        specs = moved_endpoint(args.resume, manifest, args.base_url)
    return _execute_run(args, None, models=models_from_specs(specs, task), out=args.resume, resume=True,
                        decision=decision)


def moved_endpoint(out: Path, manifest, base_url: str) -> dict[str, str]:
    """run.json's model specs with the endpoint `base_url`, recorded in run.json so later resumes use it too."""
    from projectgen.errors import ProjectGenError
    from projectgen.llm import check_base_url
    from projectgen.runs.folder import RunFolder
    from projectgen.runs.locking import folder_lock

    if not base_url.strip():
        raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
    check_base_url(base_url)
    specs = {**manifest.models, "base_url": base_url}
    with folder_lock(out):  # not while another process runs it: that one would be refused anyway
        RunFolder(out).lifecycle(manifest).amend(manifest.model_copy(update={"models": specs}))
    return specs


def cmd_demo(args: argparse.Namespace) -> int:
    from projectgen.datasets.examples import example_script_path, example_task_path
    from projectgen.datasets.loaders import load_task
    from projectgen.errors import ProjectGenError
    from projectgen.llm import ModelRoles, ScriptedChatModel
    from projectgen.runs.layout import RunLayout
    from projectgen.runs.request import RunRequest

    console = make_console()
    task = load_task(example_task_path("kvstore"))
    script = example_script_path("kvstore.demo")
    console.print(f"[bold]demo[/bold]: the full pipeline (LiveCoder attempts around ProjectGen) on the bundled "
                  f"example task {task.id!r}, offline.\n"
                  f"The model is a [bold]scripted replay[/bold] of {script.name}, not a real model: it answers "
                  "each agent from the script. Run a real model with `projectgen run kvstore --model "
                  "openai:gpt-4o-mini`.", highlight=False)
    model = ScriptedChatModel.from_file(script)
    specs = {"default": f"{SCRIPTED_PREFIX}{script}"}
    if args.out.is_dir() and any(args.out.iterdir()):
        if not RunLayout(args.out).manifest.is_file():
            raise ProjectGenError(f"{args.out} holds files that are not from a run (the demo replaces its outputs); "
                                  "choose another --out")
        if not args.force and not _is_demo_output(args.out, specs):
            raise ProjectGenError(f"{args.out} holds a run that is not an earlier demo's output; choose another "
                                  "--out, or add --force to replace it")
    args.force = True  # the demo replaces its own outputs
    from projectgen.config import Settings

    settings = Settings(profile=args.profile) if given(args, "profile") else None  # else the task's (projectgen)
    request = RunRequest.for_task(task, models=specs, settings=settings)
    return _execute_run(args, request, models=ModelRoles(model), out=args.out)


def _is_demo_output(out: Path, demo_specs: dict[str, str]) -> bool:
    """Whether the run folder `out` is what a demo wrote (the demo's task and replay script)."""
    from projectgen.errors import ProjectGenError
    from projectgen.runs import read_manifest

    try:
        manifest = read_manifest(out)
    except ProjectGenError:
        return False
    return manifest.task_id == "kvstore" and manifest.models == demo_specs
