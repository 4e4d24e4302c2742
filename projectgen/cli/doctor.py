"""`projectgen doctor`: which languages this machine can test, and how to install the rest.

Probes each language's toolchain (`evaluation.languages.toolchains`), never assumes it: an exercise in a
language listed as missing is skipped by `reflect` with the same line."""
from __future__ import annotations

import argparse

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED


def add_commands(subparsers) -> None:
    """Add `doctor` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "doctor", help="list the languages whose tests this machine can run, and how to install the others",
        description="Probes the toolchain of each language projectgen tests (Python: pytest; Go: go test; Rust: "
                    "cargo; C++: CMake, make, g++; JavaScript: node, npm for jest; Java: javac, JUnit 5, AssertJ) "
                    "and says what is missing and how to install it. Exit 0 when every language is ready, 1 if not.")
    parser.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from projectgen.evaluation.languages.toolchains import DISPLAY, LANGUAGES, probe_toolchain

    missing = 0
    for language in LANGUAGES:
        toolchain = probe_toolchain(language)
        name = DISPLAY[language]
        if toolchain.ready:
            print(f"{name:<11} ready    {toolchain.version}".rstrip())
        else:
            missing += 1
            print(f"{name:<11} missing  {', '.join(toolchain.missing)}: install {toolchain.install_hint}")
    return EXIT_OK if not missing else EXIT_TESTS_FAILED
