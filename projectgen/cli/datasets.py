"""`projectgen datasets list | fetch NAME | verify NAME`: the published benchmarks, fetched by name into the
user's cache and checked against checksums, so that `--dataset devbench` and `run devbench/lice` work."""
from __future__ import annotations

import argparse

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED


def add_commands(subparsers) -> None:
    """Add `datasets` and its sub-commands to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "datasets", help="list, fetch and verify the published benchmarks (CodeProjectEval, DevBench)",
        description="The benchmarks the ProjectGen paper published, fetched from their git repository at a pinned "
                    "commit into $PROJECTGEN_CACHE_DIR/datasets (default ~/.cache/projectgen/datasets) and checked "
                    "file by file against the commit's git blob ids. Fetched, a benchmark is named like a folder: "
                    "`--dataset devbench`, `run devbench/lice`.")
    parser.set_defaults(handler=cmd_without_subcommand)
    commands = parser.add_subparsers(dest="datasets_command", metavar="list|fetch|verify")
    listing = commands.add_parser("list", help="the published benchmarks, their pinned commit and what is fetched")
    listing.set_defaults(handler=cmd_list)
    fetch = commands.add_parser(
        "fetch", help="fetch a benchmark into the cache (from its repository, or --from a mirror or folder)",
        description="Fetches the pinned commit of the benchmark's repository (a local mirror without that commit: "
                    "its HEAD), checks every file against the published checksums and installs the copy only "
                    "when no file differs and none was added. Files the source lacks are named as incomplete "
                    "tasks. Fetching again replaces the copy.")
    fetch.add_argument("name", metavar="NAME", help="codeprojecteval or devbench (`projectgen datasets list`)")
    fetch.add_argument("--from", dest="source", default=None, metavar="DIR",
                       help="offline: a local git repository or mirror of the upstream, or a folder holding the "
                            "data (a checkout, its datasets/ folder, or the benchmark folder itself)")
    fetch.set_defaults(handler=cmd_fetch)
    verify = commands.add_parser("verify", help="check a fetched benchmark's files against the published checksums")
    verify.add_argument("name", metavar="NAME", help="codeprojecteval or devbench")
    verify.set_defaults(handler=cmd_verify)


def cmd_without_subcommand(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError

    raise ProjectGenError("datasets needs a sub-command: list, fetch NAME or verify NAME")


def cmd_list(args: argparse.Namespace) -> int:
    """Exit 0: one line per benchmark."""
    from projectgen.datasets.catalog import datasets_cache_dir, fetched_record, install_root, published_datasets
    from projectgen.datasets.integrity import manifest

    print(f"cache: {datasets_cache_dir()}")
    for dataset in published_datasets().values():
        tasks = len({path.split("/", 1)[0] for path in manifest(dataset) if "/" in path})
        record = fetched_record(dataset)
        where = (f"fetched: {install_root(dataset) / dataset.folder_name}" if record is not None
                 else f"not fetched (`projectgen datasets fetch {dataset.name}`)")
        print(f"{dataset.name:<16} {tasks:>3} tasks  {dataset.repository} @ {dataset.commit[:12]} "
              f"({dataset.folder})  {where}")
    return EXIT_OK


def cmd_fetch(args: argparse.Namespace) -> int:
    """Exit 0 when the copy was installed, 2 (one line) when it was refused or could not be had."""
    import sys

    from projectgen.datasets.catalog import published_dataset
    from projectgen.datasets.fetching import fetch_dataset

    dataset = published_dataset(args.name)
    fetched = fetch_dataset(dataset, source=args.source, log=lambda message: print(message, file=sys.stderr))
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
    """Exit 0 when every installed file is the published one, 1 when some differ, 2 when not fetched."""
    import sys

    from projectgen.datasets.catalog import installed_folder, published_dataset
    from projectgen.datasets.integrity import check_folder, manifest

    dataset = published_dataset(args.name)
    folder = installed_folder(dataset)
    check = check_folder(folder, manifest(dataset))
    for line in check.incomplete_lines():
        print(line, file=sys.stderr)
    if not check.sound:
        print(f"{dataset.name}: {folder} differs from the published data: {check.problems()} (fetch it again with "
              f"`projectgen datasets fetch {dataset.name}`)", file=sys.stderr)
        return EXIT_TESTS_FAILED
    print(f"{dataset.name}: {check.matching} file(s) in {folder} match the published checksums"
          + (f"; {len(check.incomplete)} task(s) incomplete" if check.incomplete else ""))
    return EXIT_OK
