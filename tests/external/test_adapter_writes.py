"""Every adapter that writes the system's files into OUT refuses a path that would leave OUT, whatever the
system named: an absolute path, `..`, a link the system left inside OUT (as a parent folder or as the file
itself), a NUL byte, a name too long for the file system. Nothing outside OUT may change, and no link is
carried into OUT.

Two kinds of writer: from a mapping of names the system's reply gave (gpt-engineer, openevolve; the fake
system's loop too, through `contract.copy_into`, tested here directly), and from a folder the system wrote
(chatdev, codes, metagpt), where the names come from the file system but OUT may already hold a link the
system planted there, and a link in the folder is not a file the system wrote. Every writer goes through
`contract.copy_into`; the attacks run against each adapter's own writer so that one writing past it fails.
"""
from __future__ import annotations

import os
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from test_support import load_external_adapter

MAPPING_WRITERS = (("gpt_engineer_adapter.py", "write_files"), ("openevolve_adapter.py", "write_files"))
FOLDER_WRITERS = (("chatdev_adapter.py", "collect"), ("codes_adapter.py", "collect"),
                  ("metagpt_adapter.py", "copy_repository"))


def snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple[str, str]]:
    """Every entry under ROOT but the SKIP folders: its kind and its content or link target."""
    seen: dict[str, tuple[str, str]] = {}
    for folder, directories, files in os.walk(root):
        directories[:] = [name for name in directories if Path(folder, name) not in skip]
        for name in [*directories, *files]:
            path = Path(folder, name)
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[str(path)] = ("dir", "")
            else:
                seen[str(path)] = ("file", path.read_bytes().decode("latin-1"))
    return seen


def links_in(out: Path) -> list[str]:
    return [str(path) for path in out.rglob("*") if path.is_symlink()] if out.is_dir() else []


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside OUT holding a file a writer must never touch."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.py").write_text("original\n")
    return folder


def plant(out: Path, outside: Path, attack: str) -> int | None:
    """What a system may leave in OUT before the adapter writes into it; for a FIFO, its reading end (open, so
    that a writer that opens the FIFO gets through instead of waiting for a reader, and is seen)."""
    out.mkdir(exist_ok=True)
    if attack == "symlinked parent":
        (out / "pkg").symlink_to(outside, target_is_directory=True)
    elif attack == "symlinked ancestor":
        (out / "a").symlink_to(outside, target_is_directory=True)
    elif attack == "symlinked file":
        (out / "victim.py").symlink_to(outside / "victim.py")
    elif attack == "dangling symlinked file":
        (out / "new.py").symlink_to(outside / "new.py")
    elif attack == "hard-linked file":
        os.link(outside / "victim.py", out / "linked.py")
    elif attack == "fifo":  # with no reader, opening it to write would wait: the adapter would hang
        os.mkfifo(out / "pipe.py")
        return os.open(out / "pipe.py", os.O_RDONLY | os.O_NONBLOCK)
    return None


def written_through(reader: int | None) -> bytes:
    """What a writer sent through the planted FIFO (nothing, for another attack); its reading end closed."""
    if reader is None:
        return b""
    try:
        return os.read(reader, 1 << 16)
    except BlockingIOError:  # a writer opened it and wrote nothing
        return b""
    finally:
        os.close(reader)


PLANTED = {"symlinked parent": "pkg/evil.py", "symlinked ancestor": "a/b/c.py", "symlinked file": "victim.py",
           "dangling symlinked file": "new.py", "hard-linked file": "linked.py", "fifo": "pipe.py"}


def mapping_attacks(outside: Path) -> dict[str, str]:
    return {"absolute": str(outside / "absolute.py"), "dotdot": "../escape.py", "inner dotdot": "pkg/../../escape.py",
            "nul byte": "a\x00b.py", "long name": "a" * 300 + ".py", "long path": "/".join(["d" * 200] * 30) + "/x.py",
            "backslash": "pkg\\..\\..\\escape.py", **PLANTED}


MAPPING_ATTACKS = ("absolute", "dotdot", "inner dotdot", "nul byte", "long name", "long path", "backslash", *PLANTED)


@pytest.mark.parametrize(("adapter", "function"), MAPPING_WRITERS)
@pytest.mark.parametrize("attack", MAPPING_ATTACKS)
def test_a_name_from_the_systems_reply_that_leaves_out_is_refused(
        adapter: str, function: str, attack: str, tmp_path: Path, outside: Path) -> None:
    write = getattr(load_external_adapter(adapter), function)
    out = tmp_path / "out"
    reader = plant(out, outside, attack)
    before = snapshot(tmp_path, (out,))
    with pytest.raises(Exception):
        write({"fine.py": "x = 1\n", mapping_attacks(outside)[attack]: "x = 2\n"}, out)
    assert written_through(reader) == b""
    assert snapshot(tmp_path, (out,)) == before


FOLDER_ATTACKS = tuple(PLANTED)
SOURCE_LINKS = ("file symlink in the source", "folder symlink in the source")


def make_source(source: Path, outside: Path, attack: str) -> None:
    """The folder the system wrote, with one file (or link) the attack names."""
    source.mkdir()
    (source / "fine.py").write_text("x = 1\n")
    if attack in PLANTED:
        (source / PLANTED[attack]).parent.mkdir(parents=True, exist_ok=True)
        (source / PLANTED[attack]).write_text("x = 2\n")
    elif attack == "file symlink in the source":
        (source / "link.py").symlink_to(outside / "victim.py")
    elif attack == "folder symlink in the source":
        (source / "lib").symlink_to(outside, target_is_directory=True)


@pytest.mark.parametrize(("adapter", "function"), FOLDER_WRITERS)
@pytest.mark.parametrize("attack", FOLDER_ATTACKS)
def test_a_folder_the_system_wrote_is_not_copied_through_a_link_it_left_in_out(
        adapter: str, function: str, attack: str, tmp_path: Path, outside: Path) -> None:
    collect: Callable[[Path, Path], list[str]] = getattr(load_external_adapter(adapter), function)
    out, source = tmp_path / "out", tmp_path / "source"
    make_source(source, outside, attack)
    reader = plant(out, outside, attack)
    planted_links = links_in(out)
    before = snapshot(tmp_path, (out, source))
    with pytest.raises(Exception):
        collect(source, out)
    assert written_through(reader) == b""
    assert snapshot(tmp_path, (out, source)) == before
    assert links_in(out) == planted_links


@pytest.mark.parametrize(("adapter", "function"), FOLDER_WRITERS)
@pytest.mark.parametrize("attack", SOURCE_LINKS)
def test_a_link_in_the_folder_the_system_wrote_is_not_copied(
        adapter: str, function: str, attack: str, tmp_path: Path, outside: Path) -> None:
    """A link is no file the system wrote: it could name anything the system can read (copied, a file outside
    its output would be scored as its own)."""
    collect: Callable[[Path, Path], list[str]] = getattr(load_external_adapter(adapter), function)
    out, source = tmp_path / "out", tmp_path / "source"
    make_source(source, outside, attack)
    out.mkdir()
    assert collect(source, out) == ["fine.py"]
    assert sorted(path.name for path in out.rglob("*")) == ["fine.py"]


# --------------------------------------------------------------------------- contract.copy_into itself


@pytest.fixture
def contract() -> types.ModuleType:
    return load_external_adapter("contract.py")


@pytest.mark.parametrize("attack", MAPPING_ATTACKS)
def test_copy_into_refuses_each_attack_in_one_line_as_a_failed_run(
        contract: types.ModuleType, attack: str, tmp_path: Path, outside: Path) -> None:
    """RefusedPathError: one line, status 1 (the system ran and named a bad file), a ValueError as the
    openevolve evaluator expects of a bad packed path."""
    out = tmp_path / "out"
    reader = plant(out, outside, attack)
    before = snapshot(tmp_path, (out,))
    with pytest.raises(contract.RefusedPathError) as refused:
        contract.copy_into(out, mapping_attacks(outside)[attack], b"x = 2\n")
    assert written_through(reader) == b""
    assert len(str(refused.value).splitlines()) == 1 and refused.value.status == 1
    assert isinstance(refused.value, ValueError)
    assert snapshot(tmp_path, (out,)) == before


def test_copy_into_writes_the_file_making_its_folders_and_gives_the_path(
        contract: types.ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert contract.copy_into(out, "./pkg//module.py", b"A = 1\n") == "pkg/module.py"
    (out / "pkg" / "old.py").write_text("a longer old content\n")
    assert contract.copy_into(out, "pkg/old.py", b"B = 2\n") == "pkg/old.py"
    assert (out / "pkg" / "module.py").read_bytes() == b"A = 1\n"
    assert (out / "pkg" / "old.py").read_bytes() == b"B = 2\n"


@pytest.mark.parametrize("name", ["", ".", "pkg/.."])
def test_a_name_that_is_no_file_is_refused(contract: types.ModuleType, name: str, tmp_path: Path) -> None:
    with pytest.raises(contract.RefusedPathError):
        contract.copy_into(tmp_path, name, b"x")


# --------------------------------------------------------------------------- the fake system's whole-file blocks

CONTRACT = {"OPENAI_BASE_URL": "http://127.0.0.1:8765/v1", "OPENAI_API_KEY": "placeholder",
            "PROJECTGEN_MODEL": "served-model", "PROJECTGEN_MAX_ITERATIONS": "1"}


@pytest.mark.parametrize("attack", ["absolute", "dotdot", "symlinked parent", "symlinked file"])
def test_the_fake_systems_reply_naming_a_file_outside_out_fails_its_run_in_one_line(
        attack: str, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The fake's calls to the bridge STUBBED (`ask`): its second reply's blocks name the attack's file."""
    for name, value in CONTRACT.items():
        monkeypatch.setenv(name, value)
    fake = load_external_adapter("fake.py")
    named = mapping_attacks(outside)[attack]
    reply = f"fine.py\n```\nx = 1\n```\n{named}\n```\nx = 2\n```\n"
    monkeypatch.setattr(fake, "ask", lambda settings, prompt, documents: reply)
    docs, out = tmp_path / "docs", tmp_path / "out"
    docs.mkdir()
    (docs / "PRD.md").write_text("the PRD\n")
    plant(out, outside, attack)
    before = snapshot(tmp_path, (out,))
    assert fake.main(["--docs", str(docs), "--out", str(out)]) == 1
    assert snapshot(tmp_path, (out,)) == before
    assert (out / "fine.py").read_text() == "x = 1\n"  # what it wrote before the refused name stays: it is scored
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith(f"fake adapter: {named!r} is not written" if "symlinked" in attack
                                                   else "fake adapter: not a path inside the repository"), error
