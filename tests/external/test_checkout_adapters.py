"""The checkout systems' adapters (chatdev, codes) and the version of a checkout, without any real checkout.

Each adapter is driven through its `main` against a fake checkout written here with the real one's layout
(the files the adapter runs or checks for): the fake's scripts record what they were given and write what
the real ones write, where they write it. This checks the adapters' glue (the documents given, the endpoint
named, what is collected from where, the exit status), never ChatDev or CodeS, which were run against the
tiny real model out of tree (docs/external-systems.md, "Checked for real").
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from projectgen.external.checkout import checkout_version
from projectgen.external.environment import SystemEnvironment
from projectgen.external.runner import system_record
from projectgen.external.systems import SYSTEMS_FILE, load_systems
from test_support import load_external_adapter

CONTRACT = {"OPENAI_BASE_URL": "http://127.0.0.1:8765/v1", "OPENAI_API_KEY": "placeholder",
            "PROJECTGEN_MODEL": "served-model", "PROJECTGEN_TEMPERATURE": "0", "PROJECTGEN_TOP_P": "1.0",
            "PROJECTGEN_MAX_TOKENS": "8192", "PROJECTGEN_MAX_ITERATIONS": "0"}
DOCUMENTS = ("architecture_design.md", "UML_sequence.md", "PRD.md", "UML_class.md")  # as listed, in no order
IN_ORDER = ("PRD.md", "UML_class.md", "UML_sequence.md", "architecture_design.md")




def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    write(folder, {name: f"text of {name}\n" for name in DOCUMENTS})
    return folder


@pytest.fixture
def contract(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The contract's environment with a writable TMPDIR; the checkout (a fake) is the test's to name."""
    for name, value in {**CONTRACT, "TMPDIR": str(tmp_path / "tmp")}.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp"


def read_only(root: Path) -> None:
    """The sandbox binds a checkout read-only: a write into it fails as it would there."""
    for path in [root, *root.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)


# --------------------------------------------------------------------------- CodeS

# CodeS's two scripts as its checkout has them, reduced to what they read and write: the first writes its
# jsonl files under OUTPUT_DIR/<model>/<project>/ from REPO_DIR/<project>/README.md, the second a repository.
CODES_GENERATE = """\
    import argparse, json, os, sys
    parser = argparse.ArgumentParser()
    for name in ("--project", "--repo_dir", "--output_dir", "--model"):
        parser.add_argument(name)
    args = parser.parse_args()
    readme = open(os.path.join(args.repo_dir, args.project, "README.md")).read()
    out = os.path.join(args.output_dir, args.model.split("/")[-1], args.project)
    os.makedirs(out, exist_ok=True)
    json.dump({"readme": readme, "base_url": os.environ.get("OPENAI_API_BASE_URL"), "argv": sys.argv[1:]},
              open(os.path.join(out, "seen.json"), "w"))
    sys.exit(int(os.environ.get("FAKE_CODES_STATUS", "0")))
"""
CODES_TRANSFER = """\
    import argparse, json, os
    parser = argparse.ArgumentParser()
    for name in ("--project", "--input_dir", "--output_dir"):
        parser.add_argument(name)
    args = parser.parse_args()
    seen = json.load(open(os.path.join(args.input_dir, args.project, "seen.json")))
    repo = os.path.join(args.output_dir, args.project)
    os.makedirs(os.path.join(repo, "pkg"), exist_ok=True)
    open(os.path.join(repo, "pkg", "core.py"), "w").write("def main():\\n    return 1\\n")
    open(os.path.join(repo, "seen.json"), "w").write(json.dumps(seen))
"""


@pytest.fixture
def codes_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "CodeS"
    write(root, {"validation/evaluation_scripts/baselines/from_scratch_gpt35_eval.py": CODES_GENERATE,
                 "validation/evaluation_scripts/transfer_output_to_repo.py": CODES_TRANSFER,
                 "requirements.txt": "astor\n"})
    read_only(root)
    return root


def test_codes_runs_its_two_scripts_on_the_documents_as_its_readme_and_copies_the_repository(
        codes_checkout: Path, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(codes_checkout))
    out = tmp_path / "out"
    assert load_external_adapter("codes_adapter.py").main(["--docs", str(docs), "--out", str(out)]) == 0
    assert (out / "pkg" / "core.py").read_text() == "def main():\n    return 1\n"
    seen = json.loads((out / "seen.json").read_text())
    assert seen["base_url"] == CONTRACT["OPENAI_BASE_URL"]  # CodeS's own variable for its endpoint
    assert seen["argv"][seen["argv"].index("--model") + 1] == "served-model"
    headings = [line[3:] for line in seen["readme"].splitlines() if line.startswith("## ")]
    assert headings == list(IN_ORDER)
    assert "text of UML_class.md" in seen["readme"]


def test_codes_that_failed_to_generate_fails_the_run_and_fills_nothing(
        codes_checkout: Path, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(codes_checkout))
    monkeypatch.setenv("FAKE_CODES_STATUS", "1")
    out = tmp_path / "out"
    assert load_external_adapter("codes_adapter.py").main(["--docs", str(docs), "--out", str(out)]) == 1
    assert "from_scratch_gpt35_eval.py exited with status 1" in capsys.readouterr().err
    assert not (contract / "codes" / "repos").exists()  # the transfer script never ran


@pytest.mark.parametrize("adapter", ["codes_adapter.py", "chatdev_adapter.py"])
def test_a_folder_that_is_not_the_systems_checkout_is_refused_in_one_line_with_status_2(
        adapter: str, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(tmp_path))
    assert load_external_adapter(adapter).main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "is not a checkout of" in error


@pytest.mark.parametrize("adapter", ["codes_adapter.py", "chatdev_adapter.py"])
def test_a_bad_contract_is_refused_before_the_checkout_is_read(
        adapter: str, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROJECTGEN_MAX_TOKENS", "lots")
    assert load_external_adapter(adapter).main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 2
    assert "PROJECTGEN_MAX_TOKENS is not a int" in capsys.readouterr().err


# --------------------------------------------------------------------------- ChatDev 1.0

# ChatDev's run.py reduced to what it reads and writes: the task and BASE_URL in, a software folder with
# ChatDev's records beside the code under WareHouse/NAME_ORG_TIMESTAMP next to itself.
CHATDEV_RUN = """\
    import argparse, json, os, sys
    parser = argparse.ArgumentParser()
    for name in ("--config", "--org", "--task", "--name", "--model", "--path"):
        parser.add_argument(name, default="")
    args = parser.parse_args()
    root = os.path.dirname(os.path.abspath(__file__))
    software = os.path.join(root, "WareHouse", f"{args.name}_{args.org}_20250101000000")
    os.makedirs(os.path.join(software, "game"))
    open(os.path.join(software, "main.py"), "w").write("print('hi')\\n")
    open(os.path.join(software, "game", "board.py"), "w").write("SIZE = 15\\n")
    open(os.path.join(software, "manual.md"), "w").write("# manual\\n")
    for record in ("ChatChainConfig.json", "PhaseConfig.json", "RoleConfig.json", "meta.txt",
                   f"{args.name}.prompt", f"{args.name}_{args.org}_20250101000000.log"):
        open(os.path.join(software, record), "w").write("chatdev's own record\\n")
    json.dump({"task": args.task, "base_url": os.environ.get("BASE_URL"), "model": args.model,
               "config": args.config}, open(os.path.join(software, "seen.json"), "w"))
    sys.exit(int(os.environ.get("FAKE_CHATDEV_STATUS", "0")))
"""


@pytest.fixture
def chatdev_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "ChatDev"
    write(root, {"run.py": CHATDEV_RUN, "chatdev/chat_chain.py": "", "requirements.txt": "openai==1.47.1\n",
                 "CompanyConfig/Default/ChatChainConfig.json": "{}",
                 "WareHouse/Gomoku_THUNLP_20230101/main.py": "an example software of the checkout\n"})
    read_only(root)
    return root


def test_chatdev_runs_from_a_copy_of_its_read_only_checkout_and_only_the_software_is_collected(
        chatdev_checkout: Path, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(chatdev_checkout))
    out = tmp_path / "out"
    assert load_external_adapter("chatdev_adapter.py").main(["--docs", str(docs), "--out", str(out)]) == 0
    collected = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert collected == ["game/board.py", "main.py", "manual.md", "seen.json"]  # none of ChatDev's records
    seen = json.loads((out / "seen.json").read_text())
    assert (seen["base_url"], seen["model"], seen["config"]) == (CONTRACT["OPENAI_BASE_URL"], "GPT_3_5_TURBO", "Default")
    assert [line[3:] for line in seen["task"].splitlines() if line.startswith("## ")] == list(IN_ORDER)
    assert not (contract / "chatdev" / "WareHouse" / "Gomoku_THUNLP_20230101").exists()  # the checkout's examples


def test_a_chatdev_run_that_stopped_fails_and_keeps_what_it_wrote(
        chatdev_checkout: Path, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(chatdev_checkout))
    monkeypatch.setenv("FAKE_CHATDEV_STATUS", "1")
    out = tmp_path / "out"
    assert load_external_adapter("chatdev_adapter.py").main(["--docs", str(docs), "--out", str(out)]) == 1
    assert (out / "main.py").is_file()  # scored as what it left


def test_documents_too_long_for_chatdevs_task_argument_are_refused(
        chatdev_checkout: Path, docs: Path, contract: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROJECTGEN_SYSTEM_PATH", str(chatdev_checkout))
    (docs / "PRD.md").write_text("x" * 130_000)
    assert load_external_adapter("chatdev_adapter.py").main(["--docs", str(docs), "--out", str(tmp_path / "out")]) == 2
    assert "ChatDev's --task takes at most" in capsys.readouterr().err


# --------------------------------------------------------------------------- the version of a checkout


def git(root: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


def test_a_checkouts_version_is_its_commit_dirty_when_a_tracked_file_changed(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    write(root, {"run.py": "print(1)\n"})
    git(root, "init", "-q")
    git(root, "add", "run.py")
    git(root, "commit", "-qm", "one")
    commit = git(root, "rev-parse", "HEAD")
    assert checkout_version(root) == commit
    (root / "untracked.txt").write_text("not the system's code\n")
    assert checkout_version(root) == commit
    (root / "run.py").write_text("print(2)\n")
    assert checkout_version(root) == commit + "+dirty"
    assert checkout_version(tmp_path / "docs-only") is None  # no git checkout: no version, not a guess


def test_run_json_records_a_checkout_systems_commit_as_its_version(tmp_path: Path) -> None:
    root = tmp_path / "ChatDev"
    write(root, {"run.py": "print(1)\n"})
    git(root, "init", "-q")
    git(root, "add", "run.py")
    git(root, "commit", "-qm", "one")
    entry = load_systems(SYSTEMS_FILE)["chatdev"]
    env = SystemEnvironment(system="chatdev", key="chatdev-0", path=tmp_path / "env", python_version="3.11.2",
                            requirements=[], version=None)
    record = system_record(entry, env, root, {"PRD.md": "text"})
    assert (record["source"], record["version"]) == ("checkout", git(root, "rev-parse", "HEAD"))
    assert record["system_path"] == str(root.resolve())
