"""Import graph and dependency layers: resolution rules, cycles, determinism."""
from __future__ import annotations

import random

from projectgen.repository.dependencies import dependency_layers, import_cycles, import_graph, topological_order


def test_chain():
    repo = {"a.py": "import b\n", "b.py": "from c import f\n", "c.py": "def f(): pass\n"}
    graph = import_graph(repo)
    assert graph == {"a.py": {"b.py"}, "b.py": {"c.py"}, "c.py": set()}
    assert dependency_layers(graph) == [["c.py"], ["b.py"], ["a.py"]]
    assert topological_order(graph) == ["c.py", "b.py", "a.py"]


def test_diamond():
    repo = {
        "app.py": "import left\nimport right\n",
        "left.py": "import base\n",
        "right.py": "from base import X\n",
        "base.py": "X = 1\n",
    }
    assert dependency_layers(import_graph(repo)) == [["base.py"], ["left.py", "right.py"], ["app.py"]]


def test_layer_is_one_more_than_the_deepest_dependency():
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": set()}
    assert dependency_layers(graph) == [["c", "d"], ["b"], ["a"]]


def test_stdlib_and_third_party_imports_are_ignored():
    repo = {"m.py": "import os, sys\nimport numpy as np\nfrom collections import deque\nfrom requests.auth import X\n"}
    assert import_graph(repo) == {"m.py": set()}


def test_two_cycle_members_share_a_layer_and_dependents_follow():
    graph = {"a.py": {"b.py"}, "b.py": {"a.py", "base.py"}, "base.py": set(), "user.py": {"a.py"}}
    assert dependency_layers(graph) == [["base.py"], ["a.py", "b.py"], ["user.py"]]
    assert import_cycles(graph) == [["a.py", "b.py"]]


def test_three_cycle_plus_dependents_from_source():
    repo = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import B\n",
        "pkg/b.py": "from pkg import c\n",
        "pkg/c.py": "import pkg.a\nfrom pkg.util import helper\n",
        "pkg/util.py": "def helper(): pass\n",
        "pkg/cli.py": "from pkg.a import A\n",
        "main.py": "from pkg.cli import run\n",
    }
    graph = import_graph(repo)
    assert graph["pkg/c.py"] == {"pkg/a.py", "pkg/util.py"}
    assert dependency_layers(graph) == [
        ["pkg/__init__.py", "pkg/util.py"],
        ["pkg/a.py", "pkg/b.py", "pkg/c.py"],
        ["pkg/cli.py"],
        ["main.py"],
    ]
    assert import_cycles(graph) == [["pkg/a.py", "pkg/b.py", "pkg/c.py"]]


def test_two_separate_cycles():
    graph = {"x": {"y"}, "y": {"x"}, "p": {"q"}, "q": {"p", "x"}}
    assert dependency_layers(graph) == [["x", "y"], ["p", "q"]]
    assert import_cycles(graph) == [["p", "q"], ["x", "y"]]


def test_relative_imports():
    repo = {
        "pkg/__init__.py": "from .core import run\n",
        "pkg/core.py": "from . import util\nfrom .models import Model\n",
        "pkg/util.py": "",
        "pkg/models.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from ..core import run\nfrom .. import util\nfrom ... import too_far\n",
        "pkg/sub/peer.py": "from . import deep\nfrom .deep import thing\nfrom . import missing_name\n",
    }
    graph = import_graph(repo)
    assert graph["pkg/__init__.py"] == {"pkg/core.py"}
    assert graph["pkg/core.py"] == {"pkg/util.py", "pkg/models.py"}
    assert graph["pkg/sub/deep.py"] == {"pkg/core.py", "pkg/util.py"}
    # `missing_name` is not a module, so it is a name defined in the package's __init__.py.
    assert graph["pkg/sub/peer.py"] == {"pkg/sub/deep.py", "pkg/sub/__init__.py"}


def test_package_imports_resolve_to_init_and_names_to_their_module():
    repo = {
        "pkg/__init__.py": "VERSION = 1\n",
        "pkg/sub/__init__.py": "from pkg.sub.mod import f\n",
        "pkg/sub/mod.py": "def f(): pass\n",
        "a.py": "import pkg\n",
        "b.py": "import pkg.sub\n",
        "c.py": "import pkg.sub.mod\n",
        "d.py": "from pkg import VERSION\n",
        "e.py": "from pkg.sub import mod\n",
        "f.py": "from pkg.sub import f\n",
        "g.py": "from pkg.sub.mod import f as g\n",
        "h.py": "import pkg.sub.mod.f\n",  # longest importable prefix
    }
    graph = import_graph(repo)
    assert graph["a.py"] == {"pkg/__init__.py"}
    assert graph["b.py"] == {"pkg/sub/__init__.py"}
    assert graph["c.py"] == {"pkg/sub/mod.py"}
    assert graph["d.py"] == {"pkg/__init__.py"}
    assert graph["e.py"] == {"pkg/sub/mod.py"}
    assert graph["f.py"] == {"pkg/sub/__init__.py"}
    assert graph["g.py"] == {"pkg/sub/mod.py"}
    assert graph["h.py"] == {"pkg/sub/mod.py"}


def test_src_layout_and_test_folders():
    repo = {
        "src/lib/__init__.py": "",
        "src/lib/core.py": "from lib import helpers\n",
        "src/lib/helpers.py": "",
        "tests/conftest.py": "",
        "tests/helpers_for_tests.py": "",
        "tests/test_core.py": "from lib.core import x\nimport helpers_for_tests\nimport conftest\n",
    }
    graph = import_graph(repo)
    assert graph["src/lib/core.py"] == {"src/lib/helpers.py"}
    assert graph["tests/test_core.py"] == {"src/lib/core.py", "tests/helpers_for_tests.py", "tests/conftest.py"}


def test_imports_inside_functions_and_type_checking_blocks_count():
    repo = {
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b\ndef f():\n    import c\n",
        "b.py": "",
        "c.py": "",
    }
    assert import_graph(repo)["a.py"] == {"b.py", "c.py"}


def test_unparsable_file_is_a_node_without_edges():
    repo = {"bad.py": "def broken(:\n    import good\n", "good.py": "", "user.py": "import bad\n", "nul.py": "x = '\0'\n"}
    graph = import_graph(repo)
    assert graph["bad.py"] == set() and graph["nul.py"] == set()
    assert graph["user.py"] == {"bad.py"}
    assert dependency_layers(graph) == [["bad.py", "good.py", "nul.py"], ["user.py"]]


def test_non_python_files_and_self_imports_are_ignored():
    repo = {"README.md": "import a\n", "a.py": "import a\n", "data.json": "{}"}
    assert import_graph(repo) == {"a.py": set()}


def test_dependencies_outside_the_graph_keys_are_ignored():
    assert dependency_layers({"a": {"b", "missing"}, "b": set()}) == [["b"], ["a"]]
    assert dependency_layers({}) == []
    assert topological_order({}) == []


def test_determinism_under_shuffled_insertion_order():
    graph = {
        "a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a", "d"},
        "f": {"g"}, "g": {"f"}, "h": {"e", "g"}, "i": set(),
    }
    expected = dependency_layers(graph)
    # The f<->g cycle imports nothing else, so it sits in layer 0 as a whole.
    assert expected == [["d", "f", "g", "i"], ["a", "b", "c"], ["e"], ["h"]]
    rng = random.Random(7)
    for _ in range(50):
        keys = list(graph)
        rng.shuffle(keys)
        shuffled = {k: list(rng.sample(sorted(graph[k]), len(graph[k]))) for k in keys}
        assert dependency_layers(shuffled) == expected
        assert topological_order(shuffled) == [p for layer in expected for p in layer]


def test_repository_insertion_order_does_not_matter():
    repo = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from . import b\n",
        "pkg/b.py": "from . import a, c\n",
        "pkg/c.py": "",
    }
    expected = dependency_layers(import_graph(repo))
    reversed_repo = dict(reversed(list(repo.items())))
    assert dependency_layers(import_graph(reversed_repo)) == expected
    assert expected == [["pkg/__init__.py", "pkg/c.py"], ["pkg/a.py", "pkg/b.py"]]


def test_long_chain_does_not_hit_the_recursion_limit():
    n = 3000
    graph = {f"m{i:05d}": {f"m{i - 1:05d}"} if i else set() for i in range(n)}
    layers = dependency_layers(graph)
    assert len(layers) == n and layers[0] == ["m00000"]
    ring = {f"m{i:05d}": {f"m{(i + 1) % n:05d}"} for i in range(n)}
    assert dependency_layers(ring) == [sorted(ring)]
