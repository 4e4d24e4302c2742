"""`projectgen review DIR`: show what a run paused for review waits for, or continue it with a decision.

Without a decision it prints the stage's output (the architecture tree, or the skeleton files), the
judge's verdict and the diff from the previous iteration, and the commands that decide; ``--json``
prints the output as the JSON that ``--edit`` takes. With ``--approve``, ``--edit FILE.json`` or
``--reject FEEDBACK`` it continues the run in DIR (any process, any time later), as ``run --resume``
does, and exits as `run` does (3 when it pauses for review again).

DIR may also be a seed's run folder of `construct multiturn` (OUT/runs/SEED) paused for a person: then it
shows the requirements or the turn under review (requirement, code, tests, the Evaluator's reason) and a
decision continues that seed (`protocols.multiturn_construction.batch.continue_seed`): exit 0 once its task is written,
3 when it pauses again.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK
from projectgen.cli.options import add_runner_options
from projectgen.cli.tables import make_console


def add_commands(commands) -> None:
    """Add `review` to the CLI's sub-parsers."""
    review = commands.add_parser(
        "review", help="show a run paused for review (run --review), or continue it with your decision",
        description="A run started with --review STAGES pauses once those stages have their output. Without a "
                    "decision this shows the output, its judge's verdict and its diff from the previous iteration; "
                    "with one it continues the run in DIR from its checkpoint (nothing before the pause runs "
                    "again). DIR may be a seed of `construct multiturn` (OUT/runs/SEED) paused for a person: "
                    "its requirements or turn are shown and decided on the same way.")
    review.add_argument("dir", type=Path, metavar="DIR", help="the run folder")
    decision = review.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="go on with the output as it is")
    decision.add_argument("--edit", type=Path, default=None, metavar="FILE.json",
                          help="go on with your version: the whole tree (architecture) or path -> text of the files "
                               "to replace (skeleton; a constructed task's turns/K/... files), as --json prints them; "
                               "checked like generated output")
    decision.add_argument("--reject", default=None, metavar="FEEDBACK",
                          help="send the stage's generator (a seed's Decomposer or Coder) back with this feedback (it "
                               "counts as an iteration)")
    decision.add_argument("--json", action="store_true",
                          help="print the output under review as the JSON --edit takes, and nothing else")
    add_runner_options(review)
    review.set_defaults(handler=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError
    from projectgen.runs.folder import RunFolder
    from projectgen.runs.pending_review import not_awaiting, read_pending_review
    from projectgen.runs.review import check_decision, make_decision

    if not args.dir.is_dir():
        raise ProjectGenError(f"{args.dir}: run folder not found" if not args.dir.exists()
                              else f"{args.dir}: not a folder (review takes a run folder)")
    record = read_pending_review(RunFolder(args.dir))
    if record is None:
        raise ProjectGenError(not_awaiting(args.dir))
    if args.json:
        from projectgen.runs.pending_review import editable_json

        print(editable_json(record), end="")
        return EXIT_OK
    from projectgen.protocols.multiturn_construction.review import is_construction_request

    construction = is_construction_request(record["request"])
    if not (args.approve or args.edit is not None or args.reject is not None):
        (show_construction_review if construction else show_review)(args.dir, record)
        return EXIT_OK
    decision = make_decision(approve=args.approve, edit=args.edit, reject=args.reject, stage=record.get("stage"))
    if construction:
        return continue_construction(args, record, decision)
    # checked against the request before the run folder is touched: a bad edit changes nothing
    decision = check_decision(record, decision)
    from projectgen.cli.run import continue_run

    args.resume = args.dir
    return continue_run(args, decision=decision)


def plain_printer(console) -> Callable[..., None]:
    """say(text, style): `text` printed as it is (no markup, no highlighting: it is the model's or a person's)."""

    def say(text: str = "", style: str = "") -> None:
        console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)

    return say


def show_review(out: Path, record) -> None:
    """The output under review, its judge's verdict, its diff from the previous iteration, and the commands."""
    from projectgen.cli.run import print_pause
    from projectgen.runs.pending_review import describe_pending

    console = make_console()
    request = record["request"]
    say = plain_printer(console)

    say(f"{out}: {describe_pending(record)} awaits review", style="bold")
    judge = request.get("judge") or {}
    if judge.get("feedback"):
        say(f"judge ({judge.get('judge')}) feedback: {judge['feedback']}")
    if request.get("error"):
        say(f"the last decision given could not be used: {request['error']}", style="yellow")
    if record.get("stage") == "skeleton":
        for path, text in sorted((request.get("skeleton") or {}).items()):
            say(f"── {path} ──", style="bold")
            say(text.rstrip("\n"))
    else:
        from projectgen.ssat import SSAT, render_tree

        say("── the architecture tree ──", style="bold")
        say(render_tree(SSAT.model_validate(request.get("tree") or {})) if request.get("tree") else "(no tree)")
    iteration = request.get("iteration") or 1
    say(f"── changes since iteration {iteration - 1} ──" if iteration > 1 else "── changes ──", style="bold")
    say(request.get("diff") or "(the first iteration: nothing to compare with)")
    say()
    print_pause(console, out, record, header=False)


def show_construction_review(out: Path, record) -> None:
    """A seed of `construct multiturn` paused for a person: why, what is under review, and the commands."""
    from projectgen.cli.run import print_pause

    console = make_console()
    request = record["request"]
    say = plain_printer(console)

    say(f"{out}: {request.get('what')} awaits review", style="bold")
    say(f"why: {request.get('reason')}")
    if request.get("error"):
        say(f"the last decision given could not be used: {request['error']}", style="yellow")
    if request.get("stage") == "turn":
        say(f"── the requirement of turn {request.get('turn')} ──", style="bold")
        say(request.get("requirement", ""))
        say(f"── {request.get('target')} (the last draft) ──", style="bold")
        say((request.get("code") or "(the last draft did not parse)").rstrip("\n"))
        say(f"── {request.get('test_file')} ──", style="bold")
        say((request.get("tests") or "(none)").rstrip("\n"))
    else:
        say("── the seed's requirement ──", style="bold")
        say(request.get("requirement", ""))
        say("── the last decomposition (turn order) ──", style="bold")
        for index, text in enumerate(request.get("requirements") or [], start=1):
            say(f"[{index}] {text}")
        if request.get("feedback"):
            say(f"── the Evaluator's feedback ──\n{request['feedback']}")
    if request.get("approve_refused"):
        say(f"approve is not offered: {request['approve_refused']}", style="yellow")
    say()
    print_pause(console, out, record, header=False)


def continue_construction(args: argparse.Namespace, record, decision) -> int:
    """The seed in ``args.dir`` continued with `decision`: 0 once its task is written, 3 when it pauses again."""
    from projectgen.cli.exit_codes import EXIT_AWAITING_REVIEW
    from projectgen.cli.options import runner_from_args
    from projectgen.protocols.multiturn_construction.batch import continue_seed
    from projectgen.protocols.multiturn_construction.review import parse_construction_decision
    from projectgen.runs.folder import RunFolder
    from projectgen.runs.pending_review import read_pending_review

    console = make_console()
    # checked against the request before the run folder is touched: a bad edit changes nothing (one line)
    decision = parse_construction_decision(decision, record["request"])
    outcome = continue_seed(args.dir, decision, runner=runner_from_args(args, log=lambda message: console.print(
        f"[dim]sandbox: {message}[/dim]", highlight=False)))
    if outcome.status == "review":
        show_construction_review(args.dir, read_pending_review(RunFolder(args.dir)))
        return EXIT_AWAITING_REVIEW
    console.print(f"{outcome.seed}: {outcome.status} ({outcome.turns} turns, {outcome.drafts} Coder drafts); "
                  f"the task is in {outcome.task_folder}", highlight=False, markup=False, soft_wrap=True)
    return EXIT_OK
