"""`projectgen datasets list | fetch NAME | verify NAME | stats DATASET`: the published benchmarks, fetched by name
into the user's cache and checked against checksums, so that `--dataset devbench` and `run devbench/lice` work; and
any dataset's statistics as ProjectGen's Table 2 prints them."""
from __future__ import annotations

import argparse

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import add_runner_options, task_ids


def add_commands(subparsers) -> None:
    """Add `datasets` and its sub-commands to the CLI's sub-parsers."""
    from projectgen.datasets.installing import KEEP_REPLACED

    parser = subparsers.add_parser(
        "datasets", help="list, fetch and verify the published benchmarks (CodeProjectEval, DevBench)",
        description="The benchmarks the ProjectGen paper published, fetched from their git repository at a pinned "
                    "commit into $PROJECTGEN_CACHE_DIR/datasets (default ~/.cache/projectgen/datasets) and checked "
                    "file by file against the commit's git blob ids. Fetched, a benchmark is named like a folder: "
                    "`--dataset devbench`, `run devbench/lice`.")
    parser.set_defaults(handler=cmd_without_subcommand)
    commands = parser.add_subparsers(dest="datasets_command", metavar="list|fetch|verify|stats")
    listing = commands.add_parser("list", help="the published benchmarks, their pinned commit and what is fetched")
    listing.set_defaults(handler=cmd_list)
    fetch = commands.add_parser(
        "fetch", help="fetch a benchmark into the cache (from its repository, or --from a mirror or folder)",
        description="Fetches the pinned commit of the benchmark's repository (a local mirror without that commit: "
                    "its HEAD), checks every file against the published checksums and installs the copy only "
                    "when no file differs and none was added. Files the source lacks are named as incomplete "
                    "tasks. Fetching again replaces the copy, unless the installed one has more of the published "
                    f"files (--force). A fetch installs a new version and switches to it in one step: runs that "
                    f"started on the old version keep it (kept {KEEP_REPLACED.days} days after it was "
                    "replaced).")
    fetch.add_argument("name", metavar="NAME", help="codeprojecteval or devbench (`projectgen datasets list`)")
    fetch.add_argument("--from", dest="source", default=None, metavar="DIR",
                       help="offline: a local git repository or mirror of the upstream, or a folder holding the "
                            "data (a checkout, its datasets/ folder, or the benchmark folder itself)")
    fetch.add_argument("--force", action="store_true",
                       help="replace the installed copy even when it has more of the published files than this one")
    fetch.set_defaults(handler=cmd_fetch)
    verify = commands.add_parser("verify", help="check a fetched benchmark's files against the published checksums "
                                                "(exit 1: some changed, added or removed since the fetch; files "
                                                "the source lacked and incomplete environments are named, exit 0)")
    verify.add_argument("name", metavar="NAME", help="codeprojecteval or devbench")
    verify.set_defaults(handler=cmd_verify)
    stats = commands.add_parser(
        "stats", help="a dataset's statistics as ProjectGen's Table 2: files, #LOC, complexity, tests, PRD tokens",
        description="Per task: the reference's *.py files and their physical lines, radon's mean cyclomatic "
                    "complexity (`cc -a`), the check and unit tests its reference collects and their line coverage "
                    "of it (run in the sandbox: the counts cached with the expected tests, coverage by "
                    "coverage.py from the task's environment) and the PRD's DeepSeek-V3 tokens; then the AVG "
                    "and MEDIAN rows. Exit 1 when a figure asked for could not be had (its row says why).")
    stats.add_argument("dataset", help="folder of task folders, `examples` (the bundled tasks) or a fetched "
                                       "benchmark (codeprojecteval, devbench)")
    stats.add_argument("--tasks", type=task_ids, default=None, metavar="ID,ID", help="only these task ids")
    stats.add_argument("--static", action="store_true",
                       help="only what the files tell (no test run): the test and coverage columns stay empty")
    stats.add_argument("--no-coverage", action="store_true",
                       help="count the tests (cached) but do not run each suite again for its line coverage")
    stats.add_argument("--json", action="store_true", help="print the table as JSON (rows, AVG, MEDIAN, measures)")
    add_runner_options(stats)
    stats.set_defaults(handler=cmd_stats)


def cmd_without_subcommand(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError

    raise ProjectGenError("datasets needs a sub-command: list, fetch NAME or verify NAME")


def lacking(task: str, paths: list[str]) -> str:
    """``geotext lacks geotext/data_file/cities15000.txt``: what one task of a copy lacks (paths relative to the
    task folder), in a few words."""
    if len(paths) == 1:
        return f"{task} lacks {paths[0]}"
    return f"{task} lacks {len(paths)} files ({', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})"


def environment_gaps(dataset_name: str) -> dict[str, list[str]]:
    """task id -> why its environment here is not its benchmark's, as far as is known without a run: declared
    shortfalls (a Windows-only test) and models neither cache has (evaluation.assets.known_gaps)."""
    from projectgen.datasets.assets import load_assets
    from projectgen.evaluation.assets import AssetCache, known_gaps
    from projectgen.evaluation.environments import default_cache_dir

    cache = AssetCache(default_cache_dir() / "assets")
    gaps = {}
    for key, assets in load_assets().items():
        fmt, _, task_id = key.partition("/")
        if fmt == dataset_name and (lines := known_gaps(assets, cache)):
            gaps[task_id] = lines
    return gaps


def print_gaps(dataset_name: str, file=None) -> None:
    """One indented line per task whose environment is incomplete, and why."""
    for task_id, lines in sorted(environment_gaps(dataset_name).items()):
        for line in lines:
            print(f"  {task_id}: {line}", file=file)


def cmd_list(args: argparse.Namespace) -> int:
    """Exit 0: one line per benchmark (with its incomplete tasks, as the fetch recorded them), then a line per
    task whose environment here is incomplete (declared shortfalls, models not available offline)."""
    from projectgen.datasets.catalog import (datasets_cache_dir, fetched_record, incomplete_tasks, install_root,
                                             published_datasets)
    from projectgen.datasets.integrity import manifest

    print(f"cache: {datasets_cache_dir()}")
    for dataset in published_datasets().values():
        tasks = len({path.split("/", 1)[0] for path in manifest(dataset) if "/" in path})
        record = fetched_record(dataset)
        incomplete = incomplete_tasks(record) if record is not None else {}
        described = "; ".join(lacking(task, paths) for task, paths in incomplete.items())
        state = f" ({len(incomplete)} incomplete: {described})" if incomplete else ""
        where = (f"fetched: {install_root(dataset) / dataset.folder_name}" if record is not None
                 else f"not fetched (`projectgen datasets fetch {dataset.name}`)")
        gaps = environment_gaps(dataset.name)
        environment = f", {len(gaps)} with an incomplete environment (below)" if gaps else ""
        print(f"{dataset.name:<16} {tasks:>3} tasks{state}{environment}  {dataset.repository} @ "
              f"{dataset.commit[:12]} ({dataset.folder})  {where}")
        print_gaps(dataset.name)
    return EXIT_OK


def cmd_fetch(args: argparse.Namespace) -> int:
    """Exit 0 when the copy was installed, 2 (one line) when it was refused or could not be had."""
    import sys

    from projectgen.datasets.catalog import published_dataset
    from projectgen.datasets.fetching import fetch_dataset

    dataset = published_dataset(args.name)
    fetched = fetch_dataset(dataset, source=args.source, force=args.force,
                            log=lambda message: print(message, file=sys.stderr))
    for line in fetched.check.incomplete_lines():
        print(line, file=sys.stderr)
    if fetched.commit is None:
        origin = f"the folder {fetched.source}"
    elif fetched.pinned:
        origin = f"{fetched.source} at the pinned commit {fetched.commit[:12]}"
    else:
        origin = f"{fetched.source} at {fetched.commit[:12]} (not the pinned {dataset.commit[:12]}: its files are)"
    print(f"{dataset.name}: {fetched.check.matching} file(s) checked against the published checksums, from "
          f"{origin}; installed in {fetched.folder} (use it as --dataset {dataset.name})")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Exit 1 for damage: a file changed, added, or removed since the fetch. Exit 0 otherwise, naming what is
    incomplete and why: files the source it was fetched from did not have (a line per task, on stderr) and the
    tasks whose environment here is not their benchmark's (stdout): neither is fixed by fetching the same
    source again, and both are named on every row they affect. Exit 2 when not fetched."""
    import sys

    from projectgen.datasets.catalog import fetched_record, incomplete_tasks, installed_folder, published_dataset
    from projectgen.datasets.integrity import check_folder, manifest

    dataset = published_dataset(args.name)
    folder = installed_folder(dataset)
    recorded = incomplete_tasks(fetched_record(dataset) or {})
    check = check_folder(folder, manifest(dataset))
    for task, paths in sorted(check.incomplete.items()):
        since = ("not in the source it was fetched from" if set(paths) <= set(recorded.get(task, ()))
                 else "removed since the fetch")
        print(f"{dataset.name}: incomplete: {lacking(task, list(paths))} ({since})", file=sys.stderr)
    removed = {task: [path for path in paths if path not in recorded.get(task, ())]
               for task, paths in check.incomplete.items()}
    removed = {task: paths for task, paths in removed.items() if paths}
    if not check.sound or removed:
        problems = "; ".join(part for part in (check.problems(), f"{len(removed)} task(s) lost published files since "
                                               f"the fetch ({', '.join(sorted(removed))})" if removed else "") if part)
        print(f"{dataset.name}: {folder} differs from the published data: {problems} (fetch it again with "
              f"`projectgen datasets fetch {dataset.name}`)", file=sys.stderr)
        return EXIT_TESTS_FAILED
    if check.incomplete:
        print(f"{dataset.name}: {len(check.incomplete)} task(s) incomplete in {folder}, as fetched: their rows say "
              f"'environment incomplete'; the {check.matching} file(s) present match the published checksums (a "
              f"complete copy: `projectgen datasets fetch {dataset.name} --from DIR`)", file=sys.stderr)
    print(f"{dataset.name}: {check.matching} file(s) in {folder} match the published checksums")
    if gaps := environment_gaps(dataset.name):
        print(f"{dataset.name}: {len(gaps)} task(s) with an incomplete environment here (named on their rows):")
        print_gaps(dataset.name)
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    """Exit 0 with every figure asked for; 1 when some task's tests or coverage could not be had (named on its
    row and left out of AVG and MEDIAN, which say over how many tasks they are); 2 for a dataset or task not
    found."""
    import json
    import sys

    from projectgen.cli.options import resolve_dataset, runner_from_args
    from projectgen.cli.tables import make_console, statistics_table
    from projectgen.datasets.examples import example_tasks_dir
    from projectgen.datasets.loaders import load_dataset
    from projectgen.errors import ProjectGenError
    from projectgen.evaluation.dataset_statistics import (collected_tests, reference_coverage, table_json,
                                                          task_statistics)

    folder = resolve_dataset(args.dataset, example_tasks_dir())
    tasks = load_dataset(folder)
    if args.tasks is not None:
        unknown = sorted(set(args.tasks) - {task.id for task in tasks})
        if unknown:
            raise ProjectGenError(f"{folder}: no task {', '.join(unknown)}")
        tasks = [task for task in tasks if task.id in args.tasks]
    counter = cover = None
    if not args.static:
        runner = runner_from_args(args, log=lambda message: print(message, file=sys.stderr))
        counter = collected_tests(runner)
        cover = None if args.no_coverage else reference_coverage(runner)
    rows = [task_statistics(task, counter, cover) for task in tasks]
    if args.json:
        print(json.dumps(table_json(rows, str(args.dataset)), indent=2))
    else:
        make_console().print(statistics_table(rows, f"{args.dataset}: dataset statistics (ProjectGen Table 2)"))
    uncounted = [row.task_id for row in rows if row.uncounted]
    if uncounted:
        print(f"projectgen: {len(uncounted)} task(s) with a test count or coverage that could not be had: "
              f"{', '.join(uncounted)} (their rows say why; left out of that column's AVG and MEDIAN)",
              file=sys.stderr)
        return EXIT_TESTS_FAILED
    return EXIT_OK
