"""Bad input as a user meets it: one line on stderr, exit code 2, no traceback, and nothing written.

Each case runs the CLI's entry point (`main([...])`) from an empty working folder inside
the test's temporary folder, and compares that whole tree before and after: a refused
command creates no output folder (nor a default one under the working folder) and leaves
an existing folder exactly as it was. A few cases run `python -m projectgen.cli` as a
subprocess, where the exit code and stderr are the process's own. No case reaches the
sandbox or a model: everything is refused up front.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_BUG, EXIT_USAGE
from projectgen.datasets.examples import example_script_path, example_task_path

DEMO = example_script_path("kvstore.demo")
KVSTORE = example_task_path("kvstore")
PRD = "# PRD\nA key-value store.\n"


# --------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _no_model_settings_from_the_environment(monkeypatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PROJECTGEN_MODEL", "PROJECTGEN_BASE_URL",
                 "PROJECTGEN_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch) -> Path:
    """The test's folder; the working folder is its empty `cwd/`, where default outputs would land."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return tmp_path


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under `root` with its kind, mode and (for files) content."""
    seen: dict[str, tuple] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        rel = path.relative_to(root).as_posix()
        if stat.S_ISLNK(info.st_mode):
            seen[rel] = ("link", os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            seen[rel] = ("dir", info.st_mode)
        else:
            seen[rel] = ("file", info.st_mode, path.read_bytes())
    return seen


def refused(capsys, root: Path, argv: list[str], *fragments: str) -> str:
    """`projectgen ARGV` exits 2 with one line on stderr holding every fragment, shows no progress bar (an empty
    one on stdout before the line reads as if work had started), and writes nothing under root."""
    capsys.readouterr()
    before = snapshot(root)
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == EXIT_USAGE, err
    assert "━" not in out and "0/?" not in out, out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("projectgen: error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert len(lines[0]) < 400, lines[0]  # short enough to read
    assert snapshot(root) == before, f"{argv} changed files under {root}"
    return lines[0]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def toml_task(root: Path, toml: str, files: dict[str, str | bytes] | None = None) -> Path:
    """A task.toml folder; by default with a PRD and a check-test folder."""
    write(root / "task.toml", toml)
    for rel, text in ({"docs/PRD.md": PRD, "check_tests/test_x.py": "def test_x():\n    pass\n"}
                      if files is None else files).items():
        write(root / rel, text)
    return root


GOOD_TOML = '[docs]\nprd = "docs/PRD.md"\n[tests]\ncheck = "check_tests"\n'


def run_argv(ws: Path, task: str | Path = "kvstore", *extra: str) -> list[str]:
    return ["run", str(task), "--model", f"scripted:{DEMO}", "--out", str(ws / "out"), *extra]


# --------------------------------------------------------------------------- task folders

TaskMaker = Callable[[Path], "str | Path"]

TASKS: list[tuple[str, TaskMaker, tuple[str, ...]]] = [
    ("missing-path", lambda ws: ws / "no-such-task", ("no-such-task: task folder not found",)),
    ("a-file", lambda ws: write(ws / "task.txt", "hello"), ("task.txt: not a task folder",)),
    ("empty-folder", lambda ws: (ws / "empty").mkdir() or ws / "empty", ("no task.toml or config.json found",)),
    ("toml-syntax", lambda ws: toml_task(ws / "t", 'id = "x\n[docs\n'), ("task.toml: invalid TOML", "line 1")),
    ("toml-no-docs", lambda ws: toml_task(ws / "t", 'id = "t"\n'), ("[docs].prd: missing: every task needs a PRD",)),
    ("toml-no-prd", lambda ws: toml_task(ws / "t", '[docs]\numl_class = "docs/PRD.md"\n'), ("[docs].prd: missing",)),
    ("toml-docs-not-a-table", lambda ws: toml_task(ws / "t", 'docs = "docs/PRD.md"\n'),
     ("[docs]: expected a table, got a string",)),
    ("toml-prd-a-number", lambda ws: toml_task(ws / "t", "[docs]\nprd = 5\n"),
     ("[docs].prd: expected a path or a list of paths, got a number",)),
    ("toml-python-a-number", lambda ws: toml_task(ws / "t", GOOD_TOML + "[env]\npython = 3.11\n"),
     ("[env].python: expected a non-empty string",)),
    ("toml-reference-a-number", lambda ws: toml_task(ws / "t", "reference = 5\n" + GOOD_TOML),
     ("reference: expected a list of strings, got a number",)),
    ("toml-unknown-key", lambda ws: toml_task(ws / "t", '[docs]\nprdd = "docs/PRD.md"\n'),
     ("[docs]: unknown key 'prdd'; did you mean 'prd'?",)),
    ("toml-prd-file-missing", lambda ws: toml_task(ws / "t", '[docs]\nprd = "docs/NOPE.md"\n'),
     ("[docs].prd: file 'docs/NOPE.md' not found",)),
    ("toml-uml-missing", lambda ws: toml_task(ws / "t", GOOD_TOML.replace("[tests]", 'uml_class = "docs/UML.md"\n[tests]')),
     ("[docs].uml_class: file 'docs/UML.md' not found",)),
    ("toml-prd-escapes", lambda ws: toml_task(ws / "t", '[docs]\nprd = "../PRD.md"\n'), ("escapes the task folder",)),
    ("toml-tests-missing", lambda ws: toml_task(ws / "t", '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n'),
     ("[tests].unit: 'unit_tests' not found",)),
    ("prd-not-utf8", lambda ws: toml_task(ws / "t", GOOD_TOML, {"docs/PRD.md": "caf\u00e9\n".encode("latin-1"),
                                                               "check_tests/test_x.py": "def test_x(): pass\n"}),
     ("[docs].prd: 'docs/PRD.md' is not valid UTF-8 (byte 3); save it as UTF-8",)),
    ("toml-not-utf8", lambda ws: toml_task(ws / "t", '[docs]\nprd = "caf\u00e9.md"\n'.encode("latin-1")),
     ("task.toml: not valid UTF-8",)),
    ("devbench-broken-json", lambda ws: write(ws / "db" / "config.json", '{"PRD": "PRD.md",\n "UML_class": ,}\n').parent,
     ("config.json: invalid JSON at line 2",)),
    ("devbench-dag-a-list", lambda ws: write(ws / "db" / "config.json", json.dumps(
        {"PRD": "PRD.md", "UML_class": "UML.md", "code_file_DAG": ["a.py"]})).parent,
     ("code_file_DAG: expected a mapping",)),
    ("config-json-unknown-format", lambda ws: write(ws / "x" / "config.json", '{"PRD": "PRD.md"}').parent,
     ("cannot tell the task format",)),
    ("config-json-not-an-object", lambda ws: write(ws / "x" / "config.json", "[1, 2]").parent,
     ("expected a JSON object at the top level, got a list",)),
]


@pytest.mark.parametrize("make, fragments", [pytest.param(m, f, id=i) for i, m, f in TASKS])
def test_run_refuses_a_malformed_task(make: TaskMaker, fragments: tuple[str, ...], ws: Path, capsys) -> None:
    refused(capsys, ws, run_argv(ws, make(ws)), *fragments)


@pytest.mark.parametrize("make, fragments", [pytest.param(m, f, id=i) for i, m, f in TASKS])
def test_eval_refuses_a_malformed_task(make: TaskMaker, fragments: tuple[str, ...], ws: Path, capsys) -> None:
    refused(capsys, ws, ["eval", "--task", make(ws), "--repo", ws], *fragments)


def cpe_without_tests(ws: Path) -> Path:
    """A CodeProjectEval-like folder whose config names test folders that are not there."""
    root = ws / "mypkg-task"
    write(root / "config.json", json.dumps({
        "PRD": "docs/PRD.md", "UML": ["docs/UML.md"], "source_code": "mypkg", "check_tests": "check_tests",
        "unit_tests": "unit_tests", "dependencies": ""}))
    write(root / "docs" / "PRD.md", PRD)
    write(root / "mypkg" / "__init__.py", "")
    return root


def test_a_task_without_the_tests_that_score_attempts_is_refused(ws: Path, capsys) -> None:
    task = cpe_without_tests(ws)
    # a CodeProjectEval task runs the paper profile, whose attempts are scored by the unit tests
    refused(capsys, ws, run_argv(ws, task), "task 'mypkg-task' has no unit tests", "it has: no tests")
    refused(capsys, ws, run_argv(ws, task, "--profile", "projectgen"), "task 'mypkg-task' has no check tests",
            "it has: no tests")
    refused(capsys, ws, ["eval", "--task", task, "--repo", ws], "task 'mypkg-task' has no unit tests")
    only_check = toml_task(ws / "t", GOOD_TOML)
    refused(capsys, ws, run_argv(ws, only_check, "--selection", "unit"), "has no unit tests", "--selection unit",
            "it has: check")


def test_an_unknown_example_name_lists_the_examples(ws: Path, capsys) -> None:
    refused(capsys, ws, run_argv(ws, "kvstor"), "kvstor: no such task folder or bundled example",
            "kvstore", "wordfreq")


# --------------------------------------------------------------------------- models


def bad_scripts(ws: Path) -> dict[str, Path]:
    return {
        "json": write(ws / "scripts" / "broken.json", '{"responses": [\n'),
        "schema": write(ws / "scripts" / "schema.json", json.dumps({"responses": [{"role": 5, "content": "x"}]})),
        "extra": write(ws / "scripts" / "extra.json", json.dumps({"responses": [], "temperature": 1})),
        "duplicate": write(ws / "scripts" / "dup.json", json.dumps(
            {"responses": [{"role": "coder", "content": "a"}, {"role": "coder", "content": "b"}]})),
        "binary": write(ws / "scripts" / "binary.json", b"\xff\xfe\x00{"),
    }


@pytest.mark.parametrize("extra, fragments", [
    pytest.param(["--model", "foo:bar"], ("unknown model provider 'foo' in 'foo:bar'",), id="unknown-provider"),
    pytest.param(["--model", ""], ("--model is empty",), id="empty-spec"),
    pytest.param(["--model", "  "], ("--model is empty",), id="blank-spec"),
    pytest.param(["--model", "openai:"], ("malformed model spec 'openai:'",), id="no-model-name"),
    pytest.param(["--model", ":gpt-4o"], ("malformed model spec",), id="no-provider"),
    pytest.param(["--model", "qwen2.5-coder"], ("cannot tell the provider of model 'qwen2.5-coder'",),
                 id="bare-name-without-base-url"),
    pytest.param(["--model", "scripted:"], ("malformed model spec 'scripted:'",), id="scripted-no-path"),
    pytest.param(["--model", "scripted:{ws}/missing.json"], ("missing.json: script file not found",),
                 id="scripted-missing"),
    pytest.param(["--model", "scripted:{ws}/scripts"], ("scripts: not a readable JSON script",),
                 id="scripted-a-folder"),
    pytest.param(["--model", "scripted:{json}"], ("broken.json: not a readable JSON script",),
                 id="scripted-invalid-json"),
    pytest.param(["--model", "scripted:{binary}"], ("binary.json: not a readable JSON script",),
                 id="scripted-not-utf8"),
    pytest.param(["--model", "scripted:{schema}"], ("schema.json: invalid script at responses.0.role",),
                 id="scripted-wrong-schema"),
    pytest.param(["--model", "scripted:{extra}"], ("extra.json: invalid script at temperature",),
                 id="scripted-unknown-key"),
    pytest.param(["--model", "scripted:{duplicate}"], ("two responses for role='coder'",),
                 id="scripted-duplicate-keys"),
    pytest.param(["--role-model", "poet=scripted:{demo}"], ("unknown model role(s) poet", "roles: architect"),
                 id="role-unknown"),
    pytest.param(["--role-model", "coder"], ("--role-model expects ROLE=SPEC", "'coder'"), id="role-no-equals"),
    pytest.param(["--role-model", "=scripted:{demo}"], ("--role-model expects ROLE=SPEC",), id="role-empty-role"),
    pytest.param(["--role-model", "coder="], ("--role-model expects ROLE=SPEC",), id="role-empty-spec"),
    pytest.param(["--role-model", "coder=foo:bar"], ("unknown model provider 'foo'",), id="role-unknown-provider"),
    pytest.param(["--model", "openai:gpt-4o-mini"], ("cannot create 'openai:gpt-4o-mini': OPENAI_API_KEY is not set",),
                 id="openai-without-key"),
    pytest.param(["--model", "openai:gpt-4o-mini", "--role-model", "coder=scripted:{demo}"],
                 ("OPENAI_API_KEY",), id="openai-without-key-for-some-roles"),
    pytest.param(["--model", "qwen", "--base-url", "localhost:8000/v1"],
                 ("base URL 'localhost:8000/v1' is not an http(s) URL",), id="base-url-no-scheme"),
    pytest.param(["--model", "qwen", "--base-url", "ftp://models.example/v1"], ("is not an http(s) URL",),
                 id="base-url-ftp"),
    pytest.param(["--model", "qwen", "--base-url", "http://"], ("is not an http(s) URL",), id="base-url-no-host"),
    pytest.param(["--model", "qwen", "--base-url", "http://localhost:port/v1"], ("is not an http(s) URL",),
                 id="base-url-bad-port"),
    pytest.param(["--model", "qwen", "--base-url", ""], ("--base-url is empty",), id="base-url-empty"),
])
def test_run_refuses_a_bad_model(extra: list[str], fragments: tuple[str, ...], ws: Path, capsys) -> None:
    names = {name: str(path) for name, path in bad_scripts(ws).items()}
    extra = [a.format(ws=ws, demo=DEMO, **names) for a in extra]
    argv = ["run", "kvstore", "--out", str(ws / "out")]
    if "--model" not in extra:
        argv += ["--model", f"scripted:{DEMO}"]
    refused(capsys, ws, argv + extra, *fragments)


def test_no_model_at_all_and_a_bad_base_url_from_the_environment(ws: Path, capsys, monkeypatch) -> None:
    refused(capsys, ws, ["run", "kvstore", "--out", ws / "out"], "no model given", "--model", "PROJECTGEN_MODEL")
    monkeypatch.setenv("PROJECTGEN_MODEL", "foo:bar")
    refused(capsys, ws, ["run", "kvstore", "--out", ws / "out"], "unknown model provider 'foo'")
    monkeypatch.setenv("PROJECTGEN_BASE_URL", "localhost:8000")
    refused(capsys, ws, ["run", "kvstore", "--model", "qwen", "--out", ws / "out"], "is not an http(s) URL")


# --------------------------------------------------------------------------- settings


def price_files(ws: Path) -> dict[str, Path]:
    return {
        "toml": write(ws / "prices" / "broken.toml", "[gpt-4o\ninput = 1\n"),
        "json": write(ws / "prices" / "broken.json", '{"gpt-4o": {"input": 1,}}'),
        "negative": write(ws / "prices" / "negative.toml", '"gpt-4o" = { input = -1, output = 2 }\n'),
        "nan": write(ws / "prices" / "nan.toml", '"gpt-4o" = { input = nan, output = 2 }\n'),
        "shape": write(ws / "prices" / "shape.json", '{"gpt-4o": 3}'),
        "keys": write(ws / "prices" / "keys.toml", '"gpt-4o" = { input = 1, outptu = 2 }\n'),
        "list": write(ws / "prices" / "list.json", "[1, 2]"),
        "binary": write(ws / "prices" / "binary.toml", b"\xff\xfe"),
    }


@pytest.mark.parametrize("extra, fragments", [
    pytest.param(["--threshold", "11"], ("argument --threshold: scores go from 0 to 10: '11'",
                                         "see `projectgen run --help`"), id="threshold-11"),
    pytest.param(["--threshold", "abc"], ("argument --threshold: not a number: 'abc'",), id="threshold-abc"),
    pytest.param(["--threshold", "nan"], ("argument --threshold",), id="threshold-nan"),
    pytest.param(["--iterations", "0,1,2"], ("argument --iterations: must be at least 1: '0'",), id="iterations-0"),
    pytest.param(["--iterations", "3,3"], ("argument --iterations: give three numbers",), id="iterations-two"),
    pytest.param(["--iterations", "3,3,x"], ("argument --iterations: not a whole number: 'x'",),
                 id="iterations-x"),
    pytest.param(["--attempts", "0"], ("argument --attempts: must be at least 1: '0'",), id="attempts-0"),
    pytest.param(["--gamma", "-1"], ("argument --gamma: must be 0 or more: '-1'",), id="gamma-negative"),
    pytest.param(["--gamma", "two"], ("argument --gamma: not a whole number",), id="gamma-word"),
    pytest.param(["--max-concurrency", "0"], ("argument --max-concurrency: must be at least 1",),
                 id="max-concurrency-0"),
    pytest.param(["--max-tokens", "abc"], ("argument --max-tokens: not a whole number: 'abc'",),
                 id="max-tokens-abc"),
    pytest.param(["--max-tokens", "-5"], ("argument --max-tokens: must be at least 1",), id="max-tokens-negative"),
    pytest.param(["--max-cost", "0"], ("argument --max-cost: must be greater than 0: '0'",), id="max-cost-0"),
    pytest.param(["--max-cost", "-1"], ("argument --max-cost: must be greater than 0",), id="max-cost-negative"),
    pytest.param(["--max-cost", "nan"], ("argument --max-cost: not a finite number: 'nan'",), id="max-cost-nan"),
    pytest.param(["--max-cost", "inf"], ("argument --max-cost: not a finite number",), id="max-cost-inf"),
    pytest.param(["--prices", "{ws}/nope.toml"], ("nope.toml: price file not found",), id="prices-missing"),
    pytest.param(["--prices", "{ws}/prices"], ("prices: cannot read the price file",), id="prices-a-folder"),
    pytest.param(["--prices", "{toml}"], ("broken.toml: not valid TOML",), id="prices-bad-toml"),
    pytest.param(["--prices", "{json}"], ("broken.json: not valid JSON",), id="prices-bad-json"),
    pytest.param(["--prices", "{negative}"], ("prices must be non-negative numbers",), id="prices-negative"),
    pytest.param(["--prices", "{nan}"], ("prices must be non-negative numbers",), id="prices-nan"),
    pytest.param(["--prices", "{shape}"], ("shape.json: gpt-4o: expected {input = ..., output = ...}",),
                 id="prices-wrong-shape"),
    pytest.param(["--prices", "{keys}"], ("a price needs exactly 'input' and 'output'",), id="prices-typo"),
    pytest.param(["--prices", "{list}"], ("list.json: expected a table of model prices",), id="prices-a-list"),
    pytest.param(["--prices", "{binary}"], ("binary.toml: the price file is not valid UTF-8",),
                 id="prices-not-utf8"),
    pytest.param(["--max-cost", "1", "--prices", "{toml}"], ("not valid TOML",), id="prices-bad-with-budget"),
    pytest.param(["--selection", "foo"], ("argument --selection: invalid choice: 'foo'",), id="selection-foo"),
    pytest.param(["--edit-format", "diff"], ("argument --edit-format: invalid choice",), id="edit-format"),
    pytest.param(["--checkpoint-url", "mysql://host/db"], ("--checkpoint-url must be a PostgreSQL URL",),
                 id="checkpoint-url-mysql"),
    pytest.param(["--checkpoint-url", "checkpoints.sqlite"], ("--checkpoint-url must be a PostgreSQL URL",),
                 id="checkpoint-url-a-file"),
    pytest.param(["--knowledge-store", "localhost:8000"], ("Chroma server URL 'localhost:8000'",),
                 id="knowledge-store-no-scheme"),
    pytest.param(["--knowledge-store", "http://chroma:8000/api"], ("a path, query or fragment is not supported",),
                 id="knowledge-store-path"),
    # a well-formed URL where no server answers: refused before the run folder is made
    pytest.param(["--knowledge-store", "http://127.0.0.1:9"], ("knowledge store http://127.0.0.1:9: cannot connect",),
                 id="knowledge-store-unreachable"),
    pytest.param(["--embedding", "bert"], ("unknown embedding 'bert': expected one of wordllama, e5, hashing",),
                 id="embedding-unknown"),
    pytest.param(["--timeout", "0"], ("argument --timeout: must be greater than 0",), id="timeout-0"),
    pytest.param(["--memory-mb", "lots"], ("argument --memory-mb: not a whole number",), id="memory-mb"),
    pytest.param(["--isolation", "vm"], ("argument --isolation: invalid choice",), id="isolation"),
    pytest.param(["--frobnicate"], ("unknown option --frobnicate (see `projectgen run --help`)",),
                 id="unknown-option"),
    pytest.param(["--modle", "x"], ("unknown option --modle; did you mean --model? (see `projectgen run --help`)",),
                 id="mistyped-option"),
])
def test_run_refuses_a_bad_setting(extra: list[str], fragments: tuple[str, ...], ws: Path, capsys) -> None:
    names = {name: str(path) for name, path in price_files(ws).items()}
    refused(capsys, ws, run_argv(ws, "kvstore", *[a.format(ws=ws, **names) for a in extra]), *fragments)


# --------------------------------------------------------------------------- output folders


def test_run_refuses_an_out_that_is_a_file_or_holds_an_earlier_run(ws: Path, capsys) -> None:
    out_file = write(ws / "out.txt", "not a folder")
    refused(capsys, ws, run_argv(ws) + ["--out", out_file], "out.txt exists and is not a folder")
    refused(capsys, ws, run_argv(ws) + ["--out", out_file, "--force"], "exists and is not a folder")
    earlier = ws / "earlier"
    write(earlier / "summary.json", "{}")
    write(earlier / "notes.txt", "mine")
    refused(capsys, ws, run_argv(ws) + ["--out", earlier], "earlier is not empty", "--force")


def test_run_refuses_an_out_it_cannot_create(ws: Path, capsys) -> None:
    parent_file = write(ws / "a-file", "x")
    refused(capsys, ws, run_argv(ws) + ["--out", parent_file / "run"], "a-file/run: cannot write there",
            "Not a directory")
    refused(capsys, ws, run_argv(ws) + ["--out", parent_file / "deeper" / "run"], "cannot write there")
    refused(capsys, ws, run_argv(ws) + ["--out", "/proc/projectgen-no-such-run"], "cannot write there")
    if Path("/sys/kernel").is_dir():
        refused(capsys, ws, run_argv(ws) + ["--out", "/sys/kernel/projectgen-run/x"], "cannot write there")


def test_run_refuses_an_existing_folder_it_cannot_write(ws: Path, capsys) -> None:
    """An empty folder without write permission (as root, permission bits do not bind: see the
    read-only mount test below)."""
    if os.geteuid() == 0:
        pytest.skip("root ignores permission bits; test_run_refuses_a_read_only_folder covers this case")
    locked = ws / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        refused(capsys, ws, run_argv(ws) + ["--out", locked], "locked: cannot write there", "Permission denied")
        refused(capsys, ws, run_argv(ws) + ["--out", locked / "run"], "cannot write there")
    finally:
        locked.chmod(0o700)


def test_run_refuses_a_read_only_folder(ws: Path) -> None:
    """An existing empty folder on a read-only mount: refused before anything is written, exit 2, one line.

    Runs in a private mount namespace (`unshare -m`) with the folder bind-mounted read-only;
    skipped where that is not allowed.
    """
    folder = ws / "readonly"
    folder.mkdir()
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a private mount namespace here (unshare -m)")
    script = (f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
              f'exec "$@"')
    done = subprocess.run(
        [unshare, "-m", "sh", "-c", script, "sh", sys.executable, "-m", "projectgen.cli", *run_argv(ws),
         "--out", str(folder), "--force"],
        capture_output=True, text=True, timeout=120)
    if "mount:" in done.stderr:
        pytest.skip(f"cannot bind-mount read-only here: {done.stderr.strip()}")
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr.strip() == f"projectgen: error: {folder}: cannot write there (Read-only file system); " \
                                  "choose another --out"
    assert list(folder.iterdir()) == []


# --------------------------------------------------------------------------- resume


def manifest(**fields) -> str:
    return json.dumps({"run_id": "r1", "task_path": str(KVSTORE), "task_id": "kvstore",
                       "models": {"default": f"scripted:{DEMO}"}, **fields})


@pytest.mark.parametrize("setup, fragments", [
    pytest.param(lambda d: None, ("run folder not found",), id="missing"),
    pytest.param(lambda d: write(d / "notes.txt", "x"), ("not a run folder (no run.json)",), id="not-a-run"),
    pytest.param(lambda d: write(d / "run.json", '{"run_id": "r1", '), ("run.json: not a readable run manifest",
                                                                       "Invalid JSON"), id="torn-manifest"),
    pytest.param(lambda d: write(d / "run.json", "{}"), ("run.json: not a readable run manifest (task_path: Field "
                                                         "required)",), id="empty-manifest"),
    pytest.param(lambda d: write(d / "run.json", manifest(models="gpt")),
                 ("not a readable run manifest (models: Input should be an object)",),
                 id="manifest-wrong-type"),
    pytest.param(lambda d: write(d / "run.json", b"\xff{}"), ("not a readable run manifest (not valid UTF-8",),
                 id="manifest-not-utf8"),
    pytest.param(lambda d: write(d / "run.json", manifest(task_path="/no/such/task")),
                 ("the run's task folder /no/such/task is gone",), id="task-vanished"),
    pytest.param(lambda d: write(d / "run.json", manifest(models={"default": "scripted:/no/such.json"})),
                 ("/no/such.json: script file not found",), id="script-vanished"),
    pytest.param(lambda d: write(d / "run.json", manifest(models={})), ("started from Python with model objects",),
                 id="no-model-specs"),
    pytest.param(lambda d: (write(d / "attempts" / "1" / "attempt.json", "{}"), write(d / "run.json", manifest())),
                 ("no checkpoint to resume from",), id="attempts-but-no-checkpoints"),
])
def test_resume_refuses_what_is_not_a_resumable_run(setup, fragments: tuple[str, ...], ws: Path, capsys) -> None:
    run_dir = ws / "run"
    if setup(run_dir) is None and fragments != ("run folder not found",):
        run_dir.mkdir()
    refused(capsys, ws, ["run", "--resume", run_dir], *fragments)


def test_resume_refuses_a_file_and_options_it_would_ignore(ws: Path, capsys) -> None:
    refused(capsys, ws, ["run", "--resume", write(ws / "f.txt", "x")], "f.txt: not a folder")
    run_dir = ws / "run"
    write(run_dir / "run.json", manifest())
    refused(capsys, ws, ["run", "kvstore", "--resume", run_dir], "leave out TASK")
    refused(capsys, ws, ["run", "--resume", run_dir, "--model", "openai:gpt-4o", "--out", ws / "x"],
            "leave out --model, --out")
    # Settings and budgets live in run.json too: a resume would run without them, so they are refused.
    refused(capsys, ws, ["run", "--resume", run_dir, "--attempts", "8", "--max-tokens", "5", "--no-best",
                         "--max-cost", "1", "--timeout", "9"],
            "leave out --max-tokens, --attempts, --no-best, --max-cost")
    # the knowledge store's embedding too: a resume reopens the store with run.json's
    refused(capsys, ws, ["run", "--resume", run_dir, "--embedding", "e5"], "leave out --embedding")


def test_resume_may_change_the_sandbox_options_that_run_json_does_not_keep() -> None:
    from projectgen.cli import build_parser
    from projectgen.cli.run import options_fixed_by_run_json

    args = build_parser().parse_args(["run", "--resume", "r", "--timeout", "9", "--memory-mb", "512",
                                      "--isolation", "none", "--cache-dir", "c"])
    assert options_fixed_by_run_json(args) == []


# --------------------------------------------------------------------------- trace and report


EVENT = {"t": "2026-01-01T00:00:00+00:00", "elapsed_s": 0.0, "event": "run_start", "run_id": "r1", "task_id": "kvstore"}


def run_folder(root: Path, events: list[str]) -> Path:
    write(root / "run.json", manifest())
    write(root / "events.jsonl", "".join(line + "\n" for line in events))
    return root


@pytest.mark.parametrize("command", ["trace", "report"])
@pytest.mark.parametrize("setup, fragments", [
    pytest.param(lambda ws: ws / "nope", ("nope: run folder not found",), id="missing"),
    pytest.param(lambda ws: write(ws / "f.txt", "x"), ("f.txt: not a folder",), id="a-file"),
    pytest.param(lambda ws: (ws / "empty").mkdir() or ws / "empty", ("empty: not a run folder",), id="empty"),
    pytest.param(lambda ws: run_folder(ws / "run", [json.dumps(EVENT), "%%% garbage %%%", json.dumps(EVENT)]),
                 ("events.jsonl: line 2 is not a trace event", "delete that line"), id="garbage-in-the-middle"),
    pytest.param(lambda ws: run_folder(ws / "run", [json.dumps(EVENT), "[1, 2]", json.dumps(EVENT)]),
                 ("events.jsonl: line 2 is not a trace event",), id="not-an-object-in-the-middle"),
    pytest.param(lambda ws: run_folder(ws / "run", ["garbage"]), ("line 1 is not a trace event",),
                 id="garbage-alone"),
    pytest.param(lambda ws: write(run_folder(ws / "run", [json.dumps(EVENT)]) / "summary.json", "{torn").parent,
                 ("summary.json: not valid JSON",), id="broken-summary"),
    pytest.param(lambda ws: write(ws / "run" / "run.json", "[]").parent, ("run.json: expected a JSON object",),
                 id="manifest-a-list"),
    pytest.param(lambda ws: write(run_folder(ws / "run", [json.dumps(EVENT)]) / "log.json",
                                  json.dumps({"log_version": 99})).parent,
                 ("log.json: a run log of version 99", "upgrade projectgen"), id="log-of-a-later-version"),
    pytest.param(lambda ws: write(ws / "run" / "summary.json", json.dumps({"score": 1})).parent,
                 ("summary.json: not a run summary this projectgen knows",), id="summary-of-no-known-kind"),
])
def test_trace_and_report_refuse_what_is_not_a_readable_run(command: str, setup, fragments, ws: Path,
                                                            capsys) -> None:
    refused(capsys, ws, [command, setup(ws)], *fragments)


def test_trace_and_report_read_a_trace_torn_by_a_kill(ws: Path, capsys) -> None:
    """A line cut short at the end (a killed run), or before the marker of the run that resumed it, is skipped."""
    resumed = {**EVENT, "event": "run_resumed"}
    run = run_folder(ws / "run", [json.dumps(EVENT), json.dumps(EVENT)[:25], json.dumps(resumed),
                                  json.dumps({**EVENT, "event": "run_end"}), json.dumps(EVENT)[:30]])
    assert main(["trace", str(run)]) == 0
    assert main(["report", str(run)]) == 0
    assert (run / "report.html").is_file()
    capsys.readouterr()


def test_a_resumed_trace_starts_a_new_line_after_a_torn_one(tmp_path: Path) -> None:
    from projectgen.runs.trace import TraceWriter, read_trace

    path = write(tmp_path / "events.jsonl", json.dumps(EVENT) + "\n" + json.dumps(EVENT)[:20])
    TraceWriter(path).write("run_resumed", run_id="r1")
    events = read_trace(path, strict=True)
    assert [e["event"] for e in events] == ["run_start", "run_resumed"]


def test_trace_and_report_refuse_bad_options(ws: Path, capsys) -> None:
    run = run_folder(ws / "run", [json.dumps(EVENT)])
    refused(capsys, ws, ["trace", run, "--attempt", "0"], "argument --attempt: must be at least 1")
    refused(capsys, ws, ["trace", run, "--attempt", "3"], "no attempt 3 in this run")
    refused(capsys, ws, ["trace", run, "--stage", "testing"], "argument --stage: invalid choice")
    refused(capsys, ws, ["trace", run, "--prices", ws / "nope.toml"], "nope.toml: price file not found")
    refused(capsys, ws, ["report", run, "--out", write(ws / "r.txt", "x")], "r.txt: not a folder")
    refused(capsys, ws, ["report", run, "--prices", write(ws / "p.json", "{")], "p.json: not valid JSON")


# --------------------------------------------------------------------------- experiment, bench, eval


def dataset_with(ws: Path, *names: str) -> Path:
    dataset = ws / "dataset"
    dataset.mkdir()
    for name in names:
        shutil.copytree(example_task_path(name), dataset / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dataset


@pytest.mark.parametrize("extra, fragments", [
    pytest.param(["--dataset", "{ws}/nope"], ("nope: dataset folder not found",), id="dataset-missing"),
    pytest.param(["--dataset", "{empty}"], ("no tasks found",), id="dataset-empty"),
    pytest.param(["--dataset", "{task}"], ("no tasks found", "it is itself a task folder"),
                 id="dataset-is-a-task"),
    pytest.param(["--workers", "0"], ("argument --workers: must be at least 1: '0'",), id="workers-0"),
    pytest.param(["--model", "foo:bar"], ("unknown model provider 'foo'",), id="unknown-model"),
    pytest.param(["--model", "refrence"], ("unknown model 'refrence': did you mean 'reference'?",),
                 id="misspelt-reference"),
    pytest.param(["--model", "scriptd:x.json"], ("unknown model provider 'scriptd'", "did you mean 'scripted'?"),
                 id="misspelt-scripted"),
    pytest.param(["--model", "opnai:gpt-4o"], ("did you mean 'openai'?",), id="misspelt-provider"),
    pytest.param(["--model", ""], ("empty model spec",), id="empty-model"),
    pytest.param(["--model", "scripted:{ws}/none.json"], ("no such script file or folder",), id="script-missing"),
    pytest.param(["--model", "scripted:{empty}"], ("no replay scripts (<task-id>.json) in the folder",),
                 id="script-folder-empty"),
    pytest.param(["--model", "openai:gpt-4o-mini"], ("OPENAI_API_KEY",), id="openai-without-key"),
    pytest.param(["--tasks", "nosuch"], ("unknown task(s) nosuch",), id="unknown-task"),
    pytest.param(["--out", "{file}"], ("exists and is not a folder",), id="out-a-file"),
    pytest.param(["--out", "{file}/x"], ("f.txt/x: cannot write there", "f.txt is not a folder"),
                 id="out-under-a-file"),
    pytest.param(["--threshold", "11"], ("argument --threshold",), id="threshold"),
    pytest.param(["--iterations", "3,3"], ("argument --iterations",), id="iterations"),
    pytest.param(["--prices", "{ws}/nope.toml"], ("price file not found",), id="prices-missing"),
    pytest.param(["--knowledge-store", "chroma"], ("Chroma server URL 'chroma'",), id="knowledge-store"),
    pytest.param(["--embedding", "bert"], ("unknown embedding 'bert'",), id="embedding"),
    pytest.param(["--base-url", "localhost"], ("is not an http(s) URL",), id="base-url"),
])
def test_experiment_refuses_bad_input(extra: list[str], fragments: tuple[str, ...], ws: Path, capsys) -> None:
    dataset = dataset_with(ws, "kvstore")
    (ws / "empty").mkdir()
    values = dict(ws=ws, empty=ws / "empty", task=dataset / "kvstore", file=write(ws / "f.txt", "x"))
    extra = [a.format(**values) for a in extra]
    argv = ["experiment", "--out", str(ws / "exp")]
    if "--dataset" not in extra:
        argv += ["--dataset", str(dataset)]
    if "--model" not in extra:
        argv += ["--model", f"scripted:{DEMO}"]
    refused(capsys, ws, argv + extra, *fragments)


@pytest.mark.parametrize("extra, fragments", [
    pytest.param(["--dataset", "{ws}/nope"], ("dataset folder not found",), id="dataset-missing"),
    pytest.param(["--dataset", "{empty}"], ("no exercises found",), id="dataset-without-exercises"),
    pytest.param(["--edit-format", "diff"], ("unknown edit format diff",), id="edit-format"),
    pytest.param(["--edit-format", ","], ("unknown edit format",), id="edit-format-empty"),
    pytest.param(["--tries", "0"], ("argument --tries: must be at least 1: '0'",), id="tries-0"),
    pytest.param(["--tries", "11"], ("--tries must be from 1 to 10",), id="tries-11"),
    pytest.param(["--workers", "0"], ("argument --workers: must be at least 1: '0'",), id="workers-0"),
    pytest.param(["--model", "foo:bar"], ("unknown model provider 'foo'",), id="unknown-model"),
    pytest.param(["--model", "scripted:{ws}/none.json"], ("no such script file or folder",), id="script-missing"),
    pytest.param(["--model", "scripted:nosuchscript"], ("unknown example script 'nosuchscript'",),
                 id="bundled-script-missing"),
    pytest.param(["--model", "openai:gpt-4o-mini"], ("OPENAI_API_KEY",), id="openai-without-key"),
    pytest.param(["--tasks", "nosuch"], ("unknown task(s) nosuch",), id="unknown-task"),
    pytest.param(["--out", "{file}"], ("exists and is not a folder",), id="out-a-file"),
    pytest.param(["--base-url", "localhost"], ("is not an http(s) URL",), id="base-url"),
])
def test_reflect_refuses_bad_input(extra: list[str], fragments: tuple[str, ...], ws: Path, capsys,
                                   monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (ws / "empty").mkdir()
    values = dict(ws=ws, empty=ws / "empty", file=write(ws / "f.txt", "x"))
    extra = [a.format(**values) for a in extra]
    argv = ["reflect", "--out", str(ws / "out")]
    if "--dataset" not in extra:
        argv += ["--dataset", "examples"]
    if "--model" not in extra:
        argv += ["--model", "reference"]
    refused(capsys, ws, argv + extra, *fragments)


def test_bench_and_eval_refuse_bad_input(ws: Path, capsys) -> None:
    dataset = dataset_with(ws, "kvstore")
    file = write(ws / "f.txt", "x")
    refused(capsys, ws, ["bench-reference", dataset, "--workers", "0"], "argument --workers")
    refused(capsys, ws, ["bench-reference", dataset, "--out", file], "exists and is not a folder")
    refused(capsys, ws, ["bench-reference", ws / "nope"], "dataset folder not found")
    refused(capsys, ws, ["bench-reference", dataset, "--out", file / "bench"], "cannot write there")
    refused(capsys, ws, ["eval", "--task", KVSTORE, "--repo", KVSTORE, "--out", ws], "is a folder; --out takes")
    refused(capsys, ws, ["eval", "--task", KVSTORE, "--repo", KVSTORE, "--out", file / "r.json"],
            "f.txt/r.json: cannot write there")
    refused(capsys, ws, ["eval", "--task", KVSTORE, "--repo", ws / "nope"], "repository folder not found")
    refused(capsys, ws, ["eval", "--task", KVSTORE, "--repo", KVSTORE, "--tests", "acceptance"],
            "has no acceptance tests")
    refused(capsys, ws, ["eval", "--task", KVSTORE], "the following arguments are required: --repo")


def test_demo_refuses_to_replace_a_folder_that_is_not_a_run(ws: Path, capsys) -> None:
    mine = ws / "mine"
    write(mine / "repository" / "notes.md", "my own files")
    refused(capsys, ws, ["demo", "--out", mine], "holds files that are not from a run")
    refused(capsys, ws, ["demo", "--out", write(ws / "f.txt", "x")], "exists and is not a folder")


def test_demo_refuses_to_replace_a_run_that_is_not_a_demo(ws: Path, capsys) -> None:
    """A real run's folder (its calls were paid for) is not the demo's to replace without --force."""
    from projectgen.runs.folder import RunFolder
    from projectgen.runs.manifest import RunManifest

    paid = ws / "paid"
    RunFolder(paid).lifecycle(RunManifest(run_id="r1", task_path=str(ws), task_id="kvstore",
                                     models={"default": "openai:gpt-4o"})).start()
    write(paid / "repository" / "kvstore" / "store.py", "# generated at a price")
    refused(capsys, ws, ["demo", "--out", paid], "paid holds a run that is not an earlier demo's output",
            "--force")


def test_an_unknown_command_or_a_mistyped_option_is_one_line(ws: Path, capsys) -> None:
    refused(capsys, ws, ["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'")
    # a mistyped option before a value: argparse took the value for the `merge` sub-command
    refused(capsys, ws, ["experiment", "--datset", "devbench"],
            "unknown option --datset; did you mean --dataset? (see `projectgen experiment --help`)")


# --------------------------------------------------------------------------- the entry point itself


def test_a_bug_shows_its_traceback_and_says_it_is_a_bug(ws: Path, capsys, monkeypatch) -> None:
    def broken(args):
        raise KeyError("oops")

    monkeypatch.setattr("projectgen.cli.evaluate.cmd_eval", broken)
    assert main(["eval", "--task", str(KVSTORE), "--repo", str(KVSTORE)]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "KeyError: 'oops'" in err
    assert err.strip().splitlines()[-1].startswith("projectgen: internal error: this is a bug in projectgen")


def test_a_multi_line_error_message_is_printed_on_one_line(ws: Path, capsys, monkeypatch) -> None:
    from projectgen.errors import ProjectGenError

    def wordy(args):
        raise ProjectGenError("first line\n  second line\n")

    monkeypatch.setattr("projectgen.cli.evaluate.cmd_eval", wordy)
    refused(capsys, ws, ["eval", "--task", KVSTORE, "--repo", KVSTORE], "first line second line")


def test_help_and_version_exit_0(capsys) -> None:
    assert main(["--version"]) == 0
    assert main(["run", "--help"]) == 0
    assert "--max-cost" in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["run", "kvstore", "--model", "foo:bar"], "unknown model provider 'foo'"),
    (["run", "kvstore", "--threshold", "11"], "scores go from 0 to 10"),
    (["trace", "."], "not a run folder"),
])
def test_the_installed_command_exits_2_with_one_line(argv: list[str], fragment: str, ws: Path) -> None:
    before = snapshot(ws)
    done = subprocess.run([sys.executable, "-m", "projectgen.cli", *argv], capture_output=True, text=True,
                          cwd=ws / "cwd", timeout=120)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and fragment in done.stderr and "Traceback" not in done.stderr
    assert snapshot(ws) == before
