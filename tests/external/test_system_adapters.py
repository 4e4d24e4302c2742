"""The PyPI systems' adapters (projectgen/external/adapters/) and their systems.toml entries, without installing
any system: what each adapter does with the contract's environment and the task's documents, the
openevolve adapter's repository <-> one file packing and its check-test fitness, and the entries' pins.

These run under projectgen's own Python. Where a test drives an adapter's `main`, the system's package is a
stub written here (named as such in the test): it checks the adapter's glue (what it writes, where, in which
order, with which exit code), never the system. The systems themselves were run against a real tiny model
out of tree (docs/external-systems.md, "Checked for real").
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_support import load_external_adapter
import yaml

EXTERNAL = Path(__file__).resolve().parents[2] / "projectgen" / "external"
ADAPTERS = EXTERNAL / "adapters"
ADAPTER_FILES = ("metagpt_adapter.py", "gpt_engineer_adapter.py", "openevolve_adapter.py",
                 "mini_swe_agent_adapter.py", "aider_adapter.py")
# Each entry of ours -> the top-level package its system installs (an adapter named like it would import itself).
PACKAGES = {"metagpt": "metagpt", "gpt-engineer": "gpt_engineer", "openevolve": "openevolve",
            "mini-swe-agent": "minisweagent", "live-swe-agent": "minisweagent", "aider": "aider"}
DOCUMENTS = ("PRD.md", "UML_class.md", "UML_sequence.md", "architecture_design.md")
CONTRACT = {"OPENAI_BASE_URL": "http://127.0.0.1:8765/v1", "OPENAI_API_KEY": "placeholder",
            "PROJECTGEN_MODEL": "served-model", "PROJECTGEN_TEMPERATURE": "0", "PROJECTGEN_TOP_P": "1.0",
            "PROJECTGEN_MAX_TOKENS": "8192", "PROJECTGEN_MAX_ITERATIONS": "4"}




@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A DOCS folder as the runner writes it, listed in no particular order."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("architecture_design.md", "UML_sequence.md", "PRD.md", "UML_class.md"):
        (folder / name).write_text(f"text of {name}\n")
    return folder


@pytest.fixture
def contract(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """The contract's environment, HOME and TMPDIR writable folders of the test."""
    for name, value in {**CONTRACT, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp")}.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    return dict(CONTRACT)


@pytest.fixture
def stub_packages(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, types.ModuleType]]:
    """Register stub modules by dotted name (parents made as needed); every name is removed afterwards."""
    made: dict[str, types.ModuleType] = {}

    def add(name: str, **attributes: object) -> types.ModuleType:
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            dotted = ".".join(parts[:depth])
            if dotted not in made:
                made[dotted] = types.ModuleType(dotted)
                monkeypatch.setitem(sys.modules, dotted, made[dotted])
        for key, value in attributes.items():
            setattr(made[name], key, value)
        return made[name]

    yield add  # type: ignore[misc]


# --------------------------------------------------------------------------- the contract, in every adapter


@pytest.mark.parametrize("name", ADAPTER_FILES)
def test_every_adapter_reads_the_contract_and_leaves_unsent_sampling_to_the_system(name: str) -> None:
    adapter = load_external_adapter(name)
    settings = adapter.read_settings(CONTRACT)
    assert (settings.base_url, settings.model, settings.temperature, settings.top_p, settings.max_tokens,
            settings.max_iterations) == ("http://127.0.0.1:8765/v1", "served-model", 0.0, 1.0, 8192, 4)
    replay = adapter.read_settings({**CONTRACT, "PROJECTGEN_TEMPERATURE": "", "PROJECTGEN_TOP_P": "",
                                    "PROJECTGEN_MAX_TOKENS": ""})
    assert (replay.temperature, replay.top_p, replay.max_tokens) == (None, None, None)


@pytest.mark.parametrize("name", ADAPTER_FILES)
@pytest.mark.parametrize(("variable", "value", "said"), [
    ("PROJECTGEN_MAX_TOKENS", "lots", "PROJECTGEN_MAX_TOKENS is not a int"),
    ("PROJECTGEN_TEMPERATURE", "warm", "PROJECTGEN_TEMPERATURE is not a float"),
    ("PROJECTGEN_MAX_ITERATIONS", "", "PROJECTGEN_MAX_ITERATIONS is not set"),
    ("OPENAI_BASE_URL", "http://127.0.0.1:8765", "must end in /v1"),
    ("PROJECTGEN_MODEL", "", "PROJECTGEN_MODEL is not set"),
])
def test_every_adapter_refuses_a_bad_contract_in_one_line_with_status_2(
        name: str, variable: str, value: str, said: str, docs: Path, tmp_path: Path, contract: dict[str, str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before the system is imported (none is installed here): a wrong number would change the run silently."""
    monkeypatch.setenv(variable, value)
    adapter = load_external_adapter(name)
    assert adapter.main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and said in error


@pytest.mark.parametrize("name", ADAPTER_FILES)
def test_every_adapter_gives_the_documents_prd_first_then_uml_then_the_design(name: str, docs: Path) -> None:
    adapter = load_external_adapter(name)
    (docs / "UML.md").write_text("CodeProjectEval's one UML file\n")
    read = adapter.document_paths(docs) if hasattr(adapter, "document_paths") else adapter.read_documents(docs)
    names = [entry.name if isinstance(entry, Path) else entry[0] for entry in read]
    assert names == ["PRD.md", "UML.md", "UML_class.md", "UML_sequence.md", "architecture_design.md"]


@pytest.mark.parametrize("name", (*ADAPTER_FILES, "contract.py"))
def test_no_adapter_imports_projectgen_and_none_is_named_like_a_package_it_imports(name: str) -> None:
    """It runs in the system's environment, where projectgen is not installed; `python metagpt.py` would put
    the adapters' folder first on sys.path and import itself as `metagpt`."""
    tree = ast.parse((ADAPTERS / name).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert "projectgen" not in imported
    assert Path(name).stem not in imported


# --------------------------------------------------------------------------- systems.toml


def our_entries() -> dict[str, dict]:
    entries = tomllib.loads((EXTERNAL / "systems.toml").read_text())
    return {name: entry for name, entry in entries.items() if name in PACKAGES}


def test_every_pypi_system_has_an_entry_with_exact_pins_its_adapter_and_the_papers_documents() -> None:
    entries = our_entries()
    assert sorted(entries) == sorted(PACKAGES)
    for name, entry in entries.items():
        assert entry["source"] == "pypi" and entry["python"] == "3.11"
        assert all(re.fullmatch(r"[A-Za-z0-9_.\[\],-]+==[A-Za-z0-9_.+!-]+", line) for line in entry["requirements"]), name
        assert (EXTERNAL / entry["adapter"]).is_file()
        # the papers' documents; OpenEvolve also the check tests it scores its programs on while it evolves
        assert tuple(entry["documents"]) == (*DOCUMENTS, *(("check_tests",) if name == "openevolve" else ())), name
    assert entries["openevolve"]["max_iterations"] == 4  # LiveCoder: at most 4 iterations
    assert any(line.startswith("pytest==") for line in entries["openevolve"]["requirements"])  # its evaluator
    assert entries["live-swe-agent"]["env"]["PROJECTGEN_MSWEA_CONFIG"] == "live-swe-agent"
    assert entries["mini-swe-agent"]["env"]["PROJECTGEN_MSWEA_CONFIG"] == "mini"


def test_metagpt_is_installed_without_the_lancedb_pin_the_index_no_longer_serves() -> None:
    """metagpt 0.8.2 requires lancedb==0.4.0 (not served): its dependencies are pinned without it and metagpt
    itself is installed without dependencies, at exactly 0.8.2, by the first prepare step."""
    entry = our_entries()["metagpt"]
    names = {line.split("==")[0].lower() for line in entry["requirements"]}
    assert "lancedb" not in names and "metagpt" not in names and "pip" in names
    assert {"openai", "tiktoken", "pydantic"} <= names
    assert entry["prepare"][0] == ["-m", "pip", "install", "--no-deps", "metagpt==0.8.2"]


# --------------------------------------------------------------------------- openevolve: one file <-> a repository


@pytest.fixture(scope="module")
def openevolve_adapter() -> types.ModuleType:
    return load_external_adapter("openevolve_adapter.py")


def test_packing_a_reference_repository_round_trips(openevolve_adapter: types.ModuleType) -> None:
    """Every text file of a repository (a DevBench reference when present, else projectgen's own package
    files) comes back byte for byte, in OpenEvolve's evolve block."""
    shared = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "DevBench" / "geotext" / "geotext"
    source = shared if shared.is_dir() else EXTERNAL
    files = {path.relative_to(source.parent).as_posix(): path.read_text(encoding="utf-8")
             for path in sorted(source.rglob("*")) if path.is_file() and path.suffix in (".py", ".toml", ".md")}
    files["empty.txt"] = ""
    packed = openevolve_adapter.pack(files)
    assert packed.startswith("# EVOLVE-BLOCK-START\n") and packed.rstrip().endswith("# EVOLVE-BLOCK-END")
    assert openevolve_adapter.unpack(packed) == files


def test_unpacking_a_models_reply_keeps_files_only(openevolve_adapter: types.ModuleType) -> None:
    reply = ("Here is the improved program.\n# EVOLVE-BLOCK-START\n# ==== file: pkg/a.py ====\nA = 1\n"
             "# ==== file: pkg/a.py ====\nA = 2\n# ==== file: README ====\nno final newline"
             "\n# EVOLVE-BLOCK-END\n")
    assert openevolve_adapter.unpack(reply) == {"pkg/a.py": "A = 2\n", "README": "no final newline\n"}
    assert openevolve_adapter.unpack("no markers at all") == {}


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", "a/../../b.py"])
def test_a_packed_path_outside_the_repository_is_refused(openevolve_adapter: types.ModuleType, path: str) -> None:
    with pytest.raises(ValueError, match="not a path inside the repository"):
        openevolve_adapter.unpack(f"# ==== file: {path} ====\nx = 1\n")


def test_a_file_with_a_marker_line_cannot_be_packed(openevolve_adapter: types.ModuleType) -> None:
    """It would be cut in two on unpacking: refused instead of silently changing the repository."""
    with pytest.raises(ValueError, match="pack marker"):
        openevolve_adapter.pack({"a.py": "x = 1\n# ==== file: b.py ====\n"})


def test_openevolve_refuses_zero_iterations(openevolve_adapter: types.ModuleType, tmp_path: Path) -> None:
    """OpenEvolve reads 0 iterations as its default of 10,000."""
    settings = openevolve_adapter.read_settings({**CONTRACT, "PROJECTGEN_MAX_ITERATIONS": "0"})
    with pytest.raises(openevolve_adapter.AdapterError, match="at least 1"):
        openevolve_adapter.openevolve_config(settings, "message", tmp_path)
    config = openevolve_adapter.openevolve_config(
        openevolve_adapter.read_settings({**CONTRACT, "PROJECTGEN_TEMPERATURE": ""}), "message", tmp_path)
    assert config["max_iterations"] == 4 and "temperature" not in config["llm"]
    assert config["llm"]["models"] == [{"name": "served-model", "weight": 1.0}]
    assert config["llm"]["timeout"] >= 600  # OpenEvolve's 60 s made a 62 s call twice (the tiny model's first)


def test_the_evaluator_scores_the_share_of_check_tests_that_pass(openevolve_adapter: types.ModuleType,
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluator file the adapter writes, run here as OpenEvolve's worker would call it: it unpacks the
    program, adds the check tests and runs pytest (under this Python, not OpenEvolve's environment, whose
    pytest has no plugins: this one's are not loaded, which only saves their start-up)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setattr(sys, "path", list(sys.path))  # the evaluator puts the adapters' folder on it
    check_tests = tmp_path / "check_tests"
    check_tests.mkdir()
    (check_tests / "test_calc.py").write_text(
        "from calc.ops import add, sub\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_sub():\n    assert sub(3, 1) == 2\n")
    evaluator_file = tmp_path / "evaluator.py"
    evaluator_file.write_text(openevolve_adapter.evaluator_source(ADAPTERS / "openevolve_adapter.py", check_tests))
    spec = importlib.util.spec_from_file_location("written_evaluator", evaluator_file)
    evaluator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluator)

    def score(files: dict[str, str]) -> dict:
        program = tmp_path / "program.py"
        program.write_text(openevolve_adapter.pack(files))
        return evaluator.evaluate(str(program))

    half = score({"calc/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a + b\n\n"
                                                          "def sub(a, b):\n    return a + b\n"})
    assert (half["combined_score"], half["passed"], half["tests"]) == (0.5, 1, 2)
    assert score(openevolve_adapter.PLACEHOLDER)["combined_score"] == 0.0


def test_an_empty_or_broken_report_scores_nothing(openevolve_adapter: types.ModuleType) -> None:
    assert openevolve_adapter.junit_score("")["combined_score"] == 0.0
    assert openevolve_adapter.junit_score('<testsuites><testsuite tests="0"/></testsuites>')["combined_score"] == 0.0


# --------------------------------------------------------------------------- mini-swe-agent and Live-SWE-Agent


@pytest.fixture(scope="module")
def mini_adapter() -> types.ModuleType:
    return load_external_adapter("mini_swe_agent_adapter.py")


def test_the_live_swe_agent_port_puts_1x_keys_where_2x_reads_them(mini_adapter: types.ModuleType) -> None:
    config = mini_adapter.choose_config("live-swe-agent", yaml.safe_load, None)
    moved = {"action_observation_template", "format_error_template", "timeout_template", "action_regex"}
    assert not moved & set(config["agent"]) and "mode" not in config["agent"]
    model = config["model"]
    assert model["model_class"] == "litellm_textbased"
    assert "Reflect on the previous trajectories" in model["observation_template"]
    assert "output.exception_info" in model["observation_template"]  # 2.x's way of saying a command timed out
    assert "Creating your own tools" in config["agent"]["instance_template"]
    reply = "THOUGHT: look first.\n\n```bash\nls -la\n```\n"
    assert re.findall(model["action_regex"], reply, re.DOTALL) == ["ls -la"]  # as 2.x's text parser applies it
    assert re.findall(model["action_regex"], "```mswea_bash_command\nls\n```", re.DOTALL) == []


def test_mini_runs_its_text_based_config_without_the_interactive_mode(mini_adapter: types.ModuleType,
                                                                      tmp_path: Path) -> None:
    (tmp_path / "mini_textbased.yaml").write_text(yaml.safe_dump(
        {"agent": {"system_template": "s", "instance_template": "{{task}}", "mode": "confirm", "step_limit": 0},
         "model": {"model_kwargs": {"drop_params": True}}}))
    config = mini_adapter.choose_config("mini", yaml.safe_load, tmp_path)
    assert "mode" not in config["agent"] and config["model"]["model_class"] == "litellm_textbased"
    with pytest.raises(mini_adapter.AdapterError, match="'mini' or 'live-swe-agent'"):
        mini_adapter.choose_config("maxi", yaml.safe_load, tmp_path)


def test_the_run_points_either_config_at_the_bridge_and_keeps_its_prompts(mini_adapter: types.ModuleType,
                                                                           tmp_path: Path) -> None:
    live = mini_adapter.choose_config("live-swe-agent", yaml.safe_load, None)
    settings = mini_adapter.read_settings({**CONTRACT, "PROJECTGEN_TOP_P": ""})
    merged = mini_adapter.merge(live, mini_adapter.run_overrides(settings, tmp_path / "out", tmp_path / "t.json"))
    kwargs = merged["model"]["model_kwargs"]
    assert merged["model"]["model_name"] == "openai/served-model"
    assert kwargs == {"temperature": 0.0, "drop_params": True, "api_base": "http://127.0.0.1:8765/v1",
                      "api_key": "placeholder", "max_tokens": 8192}
    assert merged["environment"]["cwd"] == str(tmp_path / "out") and merged["environment"]["env"]["PAGER"] == "cat"
    assert merged["agent"]["system_template"] == live["agent"]["system_template"]


# --------------------------------------------------------------------------- aider


def test_aider_reads_the_documents_and_keeps_its_history_and_network_out(tmp_path: Path, docs: Path) -> None:
    aider = load_external_adapter("aider_adapter.py")
    paths = aider.document_paths(docs)
    arguments = aider.aider_arguments(aider.read_settings(CONTRACT), paths, tmp_path / "history")
    reads = [arguments[index + 1] for index, value in enumerate(arguments) if value == "--read"]
    assert reads == [str(path) for path in paths]
    for switch in ("--yes-always", "--no-git", "--no-check-update", "--analytics-disable", "--no-detect-urls",
                   "--disable-playwright"):
        assert switch in arguments
    for option in ("--input-history-file", "--chat-history-file", "--llm-history-file"):
        assert Path(arguments[arguments.index(option) + 1]).parent == tmp_path / "history"
    assert arguments[arguments.index("--model") + 1] == "openai/served-model"


def test_aider_state_is_removed_from_the_repository_and_the_rest_kept(tmp_path: Path) -> None:
    aider = load_external_adapter("aider_adapter.py")
    (tmp_path / ".aider.tags.cache.v4").mkdir()
    (tmp_path / ".aider.tags.cache.v4" / "cache.db").write_bytes(b"\0")
    (tmp_path / ".aider.chat.history.md").write_text("chat")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    assert aider.remove_aider_state(tmp_path) == [".aider.chat.history.md", ".aider.tags.cache.v4"]
    assert [path.name for path in tmp_path.rglob("*")] == ["pkg", "mod.py"]


# --------------------------------------------------------------------------- gpt-engineer (its package stubbed)


def test_gpt_engineer_writes_what_simple_agent_made_and_keeps_its_memory_out(
        docs: Path, tmp_path: Path, contract: dict[str, str], stub_packages, monkeypatch: pytest.MonkeyPatch) -> None:
    """A STUB of gpt_engineer's AI, SimpleAgent and Prompt: the test checks the adapter's glue only."""
    seen: dict[str, object] = {}

    class AI:
        def __init__(self, model_name: str, temperature: float = 0.1) -> None:
            seen.update(model=model_name, temperature=temperature)

    class SimpleAgent:
        @classmethod
        def with_default_config(cls, path: str, ai: AI) -> SimpleAgent:
            seen["memory"] = path
            return cls()

        def init(self, prompt: object) -> dict[str, str]:
            seen["prompt"] = prompt.text
            return {"geo/geotext.py": "class GeoText: ...\n", "run.sh": "python -m geo\n"}

    class Prompt:
        def __init__(self, text: str) -> None:
            self.text = text

    stub_packages("gpt_engineer.core.ai", AI=AI)
    stub_packages("gpt_engineer.core.default.simple_agent", SimpleAgent=SimpleAgent)
    stub_packages("gpt_engineer.core.prompt", Prompt=Prompt)
    adapter = load_external_adapter("gpt_engineer_adapter.py")
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    out = tmp_path / "out"
    assert adapter.main(["--docs", str(docs), "--out", str(out)]) == 0
    assert sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()) == \
        ["geo/geotext.py", "run.sh"]
    assert seen["model"] == "served-model" and seen["temperature"] == 0.0
    assert not Path(str(seen["memory"])).is_relative_to(out)
    prompt = str(seen["prompt"])
    assert prompt.index("text of PRD.md") < prompt.index("text of UML_class.md") < \
        prompt.index("text of architecture_design.md")
    assert os.environ["OPENAI_API_BASE"] == "http://127.0.0.1:8765/v1"


def test_gpt_engineer_output_naming_a_file_outside_the_repository_fails_the_run(
        docs: Path, tmp_path: Path, contract: dict[str, str], stub_packages,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same STUB, now naming ../outside.py: nothing is written outside OUT and the run fails (status 1),
    saying why in the one line the runner quotes."""

    class SimpleAgent:
        @classmethod
        def with_default_config(cls, path: str, ai: object) -> SimpleAgent:
            return cls()

        def init(self, prompt: object) -> dict[str, str]:
            return {"../outside.py": "x = 1\n"}

    stub_packages("gpt_engineer.core.ai", AI=lambda **_: None)
    stub_packages("gpt_engineer.core.default.simple_agent", SimpleAgent=SimpleAgent)
    stub_packages("gpt_engineer.core.prompt", Prompt=lambda text: types.SimpleNamespace(text=text))
    adapter = load_external_adapter("gpt_engineer_adapter.py")
    assert adapter.main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "outside.py").exists()
    assert capsys.readouterr().err.splitlines() == \
        ["gpt-engineer adapter: not a path inside the repository: '../outside.py'"]


# --------------------------------------------------------------------------- MetaGPT (its package stubbed)


def test_metagpt_reads_the_bridge_from_config2_written_before_it_is_imported(
        docs: Path, tmp_path: Path, contract: dict[str, str], stub_packages) -> None:
    """A STUB of metagpt.software_company whose generate_repo reads $HOME/.metagpt/config2.yaml, as MetaGPT's
    config does when first imported, and writes a repository with a .git folder and MetaGPT's docs/ (the idea,
    given back as docs/requirement.txt: not part of the output)."""
    seen: dict[str, object] = {}

    def generate_repo(idea: str, **options: object) -> types.SimpleNamespace:
        config = yaml.safe_load((Path.home() / ".metagpt" / "config2.yaml").read_text())
        seen.update(llm=config["llm"], idea=idea, options=options)
        workdir = Path(os.environ["METAGPT_PROJECT_ROOT"]) / "workspace" / "generated"
        (workdir / ".git").mkdir(parents=True)
        (workdir / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (workdir / "generated").mkdir()
        (workdir / "generated" / "main.py").write_text("print('hi')\n")
        (workdir / "docs").mkdir()
        (workdir / "docs" / "requirement.txt").write_text(idea)
        return types.SimpleNamespace(workdir=workdir)

    stub_packages("metagpt.software_company", generate_repo=generate_repo)
    adapter = load_external_adapter("metagpt_adapter.py")
    out = tmp_path / "out"
    assert adapter.main(["--docs", str(docs), "--out", str(out)]) == 0
    assert seen["llm"] == {"api_type": "openai", "base_url": "http://127.0.0.1:8765/v1", "api_key": "placeholder",
                           "model": "served-model", "max_token": 8192, "temperature": 0.0, "top_p": 1.0}
    assert seen["options"] == {"investment": 3.0, "n_round": 5, "code_review": True, "run_tests": False,
                               "implement": True, "project_name": "generated"}
    assert str(seen["idea"]).index("text of PRD.md") < str(seen["idea"]).index("text of architecture_design.md")
    assert [path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()] == ["generated/main.py"]


def test_metagpt_config_leaves_out_what_a_replay_does_not_send(tmp_path: Path) -> None:
    adapter = load_external_adapter("metagpt_adapter.py")
    settings = adapter.read_settings({**CONTRACT, "PROJECTGEN_TEMPERATURE": "", "PROJECTGEN_MAX_TOKENS": "",
                                      "OPENAI_API_KEY": "sk: with a colon"})
    llm = yaml.safe_load(adapter.config2_yaml(settings))["llm"]
    assert "temperature" not in llm and "max_token" not in llm and llm["api_key"] == "sk: with a colon"


def test_the_seeding_of_tiktoken_is_valid_python_for_both_entries_that_need_it() -> None:
    """The prepare step's script runs in the system's environment at build time; a syntax error there would
    only show when an environment is built."""
    entries = our_entries()
    for name in ("metagpt", "gpt-engineer"):
        script = entries[name]["prepare"][-1]
        assert script[0] == "-c" and script[-1] == "{env}"
        compile(script[1], f"{name} prepare", "exec")
        assert entries[name]["env"]["TIKTOKEN_CACHE_DIR"] == "{env}/tiktoken"


def test_metagpt_that_wrote_no_code_failed(docs: Path, tmp_path: Path, contract: dict[str, str],
                                           stub_packages) -> None:
    """The STUB writes only what MetaGPT writes when its product manager's reply does not parse (seen with
    a scripted endpoint): its docs and a .gitignore. That is a failed run (status 1), not a finished one."""

    def generate_repo(idea: str, **options: object) -> types.SimpleNamespace:
        workdir = Path(os.environ["METAGPT_PROJECT_ROOT"]) / "workspace" / "generated"
        (workdir / "docs").mkdir(parents=True)
        (workdir / "docs" / "requirement.txt").write_text(idea)
        (workdir / ".gitignore").write_text("*.pyc\n")
        return types.SimpleNamespace(workdir=workdir)

    stub_packages("metagpt.software_company", generate_repo=generate_repo)
    adapter = load_external_adapter("metagpt_adapter.py")
    assert adapter.main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 1


@pytest.mark.parametrize(("writes", "status"), [(False, 1), (True, 0)])
def test_a_mini_swe_agent_run_that_wrote_nothing_failed(
        docs: Path, tmp_path: Path, contract: dict[str, str], stub_packages, monkeypatch: pytest.MonkeyPatch,
        writes: bool, status: int) -> None:
    """mini-swe-agent's agent STUBBED (`run_agent` replaced, its config folder a stub module): an agent that
    stopped on its own rules (three format errors in a row, as the tiny model's did) without writing a file
    is a failed run, not a finished one with an empty repository."""
    (tmp_path / "mini_textbased.yaml").write_text(yaml.safe_dump(
        {"agent": {"system_template": "s", "instance_template": "{{task}}"}, "model": {}}))
    stub_packages("minisweagent.config", builtin_config_dir=tmp_path)
    adapter = load_external_adapter("mini_swe_agent_adapter.py")

    def run_agent(config: dict, task: str) -> dict:
        if writes:
            (Path(config["environment"]["cwd"]) / "main.py").write_text("print('hi')\n")
        return {"exit_status": "RepeatedFormatError" if not writes else "Submitted"}

    monkeypatch.setattr(adapter, "run_agent", run_agent)
    assert adapter.main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == status


@pytest.mark.parametrize(("writes", "status"), [(False, 1), (True, 0)])
def test_an_aider_run_that_applied_no_edit_failed(docs: Path, tmp_path: Path, contract: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch, writes: bool, status: int) -> None:
    """aider itself STUBBED (the `python -m aider` call replaced; litellm's price list a file of the test): aider
    exits 0 when no edit of its reply applied, as it did with the tiny model; the adapter says so and fails."""
    adapter = load_external_adapter("aider_adapter.py")
    prices = tmp_path / "prices.json"
    prices.write_text("{}")
    monkeypatch.setattr(adapter, "bundled_prices", lambda: prices)

    def call(command: list[str], cwd: Path, stdin: int) -> int:
        assert command[1:3] == ["-m", "aider"]
        if writes:
            (Path(cwd) / "main.py").write_text("print('hi')\n")
        (Path(cwd) / ".aider.tags.cache.v4").mkdir()
        return 0

    monkeypatch.setattr(adapter.subprocess, "call", call)
    assert adapter.main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == status
    assert (tmp_path / "home" / ".aider" / "caches" / "model_prices_and_context_window.json").is_file()
