"""The scripts in examples/: they run offline and end green; their building blocks work alone."""
from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from projectgen import load_task
from projectgen.datasets.examples import example_task_path
from projectgen.oracles.reference_replay import reference_python_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CUSTOM_GRAPH = EXAMPLES / "custom_graph.py"


@pytest.fixture(scope="module")
def custom_graph() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("examples_custom_graph", CUSTOM_GRAPH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def review(module: ModuleType, repository: dict[str, str]):
    return asyncio.run(module.LintJudge().review(None, None, repository, runner=None, iteration=1))


def test_custom_graph_script_runs_offline_and_ends_green(custom_graph: ModuleType, tmp_path: Path, capsys):
    """The script's `main` (what running it calls), in this process: a new interpreter would only import
    projectgen and LangGraph again."""
    out = tmp_path / "out"
    code = custom_graph.main(["--out", str(out)])
    printed = capsys.readouterr()
    output = printed.out
    assert code == 0, output + printed.err
    assert "scripted replay" in output and "NOT a real model" in output
    assert re.search(r"^\s*architecture: 1 iteration\(s\), accepted", output, re.M), output
    # The lint judge rejects round 1 (an unused import in kvstore/cli.py) and the repair is accepted.
    assert re.search(r"^\s*code: 2 iteration\(s\), accepted", output, re.M), output
    assert re.search(r"fix kvstore/cli\.py: line \d+: `os` is imported but never used", output), output
    assert re.search(r"code round 2: code_judge 10, lint 10 -> accepted", output), output
    assert "skeleton" not in re.search(r"stages:\n(.*?)\n\n", output, re.S).group(1)
    unit = re.search(r"hidden unit tests: (\d+)/(\d+) passed", output)
    assert unit and unit.group(1) == unit.group(2) and int(unit.group(2)) > 0, output
    assert (out / "summary.json").is_file() and (out / "repository" / "kvstore" / "cli.py").is_file()


def test_lint_judge_flags_bad_code_and_names_the_file(custom_graph: ModuleType):
    bad = (
        "import os\n"
        "import json as j\n"
        "from typing import *\n"
        "from collections import OrderedDict, deque\n"
        "\n"
        "def load(path):\n"
        "    try:\n"
        "        return deque(open(path))\n"
        "    except:\n"
        "        return None\n"
    )
    verdict = review(custom_graph, {"pkg/bad.py": bad, "pkg/__init__.py": "from .bad import load\n",
                                    "pkg/good.py": "import os\n\nHOME = os.environ.get('HOME')\n",
                                    "README.md": "except:\n"})
    assert not verdict.accepted and verdict.stage == "code" and verdict.judge == "lint"
    assert list(verdict.files) == ["pkg/bad.py"]  # re-exports in __init__.py are not "unused"
    problems = verdict.files["pkg/bad.py"]
    assert "line 9: bare `except:`" in problems
    assert "line 3: wildcard import `from typing import *`" in problems
    for name in ("os", "j", "OrderedDict"):
        assert f"`{name}` is imported but never used; remove the import" in problems
    assert "`deque`" not in problems
    assert verdict.score == 10 - 5 and "pkg/bad.py" in verdict.feedback


def test_lint_judge_accepts_clean_code(custom_graph: ModuleType):
    clean = (
        "from __future__ import annotations\n"
        "import os.path\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from collections.abc import Sequence\n"
        "__all__ = ['exported']\n"
        "from json import dumps as exported\n"
        "def f(items: 'Sequence[str]') -> str:\n"
        "    try:\n"
        "        return os.path.join(*items)\n"
        "    except TypeError:\n"
        "        return ''\n"
    )
    verdict = review(custom_graph, {"pkg/clean.py": clean})
    assert verdict.accepted and verdict.score == 10 and not verdict.files


def test_lint_judge_accepts_the_kvstore_reference(custom_graph: ModuleType):
    task = load_task(example_task_path("kvstore"))
    verdict = review(custom_graph, reference_python_files(task))
    assert verdict.accepted, verdict.files
