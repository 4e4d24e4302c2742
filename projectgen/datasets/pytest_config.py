"""A task's pytest configuration (`[env] pytest_config`): the ini options of the benchmark's own pytest.ini,
tox.ini, setup.cfg or pyproject.toml, which its harness ran the tests with (`filterwarnings = error`,
`addopts`, `xfail_strict`, doctest flags). The task's file, never the candidate's: a candidate's
configuration must not change how its tests run (docs/sandbox.md)."""
from __future__ import annotations

import configparser
import tomllib

REFUSED_OPTIONS = {
    "python_files": "it decides which files are tests, which the sandbox's protected paths rely on",
    "testpaths": "the suite's paths are what runs ([tests])",
    "pythonpath": "use [env] source_root (a path in the ini would be read from the wrong folder)",
    "cache_dir": "the sandbox runs without pytest's cache",
}


def pytest_options(file_name: str, text: str) -> dict[str, str]:
    """The ini options of a pytest configuration file as pytest.ini lines would give them; raises ValueError
    with one line for a file without pytest's section or with an option the runner cannot honour."""
    if file_name.endswith(".toml"):
        try:
            table = tomllib.loads(text).get("tool", {}).get("pytest", {}).get("ini_options")
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"invalid TOML: {error}") from None
        if not isinstance(table, dict):
            raise ValueError("no [tool.pytest.ini_options] table")
        options = {str(key): _ini_value(value) for key, value in table.items()}
    else:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error as error:
            raise ValueError(f"not an ini file: {str(error).splitlines()[0]}") from None
        section = "tool:pytest" if file_name.endswith("setup.cfg") else "pytest"
        if not parser.has_section(section):
            raise ValueError(f"no [{section}] section")
        options = {key: value.strip() for key, value in parser.items(section)}
    for key in options:
        if key in REFUSED_OPTIONS:
            raise ValueError(f"option {key!r} cannot apply: {REFUSED_OPTIONS[key]}")
    return options


def _ini_value(value: object) -> str:
    """A TOML value as the ini line pytest reads: lists one item a line, booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "\n".join(_ini_value(item) for item in value)
    return str(value)


def pytest_ini_text(options: dict[str, str]) -> str:
    """The pytest.ini the runner passes with `-c`: `[pytest]` and the options, continuation lines indented."""
    lines = ["[pytest]"]
    for key, value in options.items():
        first, *rest = value.splitlines() or [""]
        lines.append(f"{key} = {first}")
        lines.extend(f"    {line}" for line in rest if line.strip())
    return "\n".join(lines) + "\n"
