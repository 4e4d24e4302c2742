"""Check tests for a task that has none, so ProjectGen's code judge (which runs them) works on any task.

A model writes a small visible suite from the task's documents alone (`CheckTestWriter`, prompt
``check_tests.md``). The suite is kept only when, run in the sandbox (`execution.execute`), every test passes
on the task's reference and at least one fails on an empty stub of it (the reference's Python files reduced to
signatures and ``pass`` bodies: `drafts.python_stubs`): a suite that the reference fails is wrong,
one an empty stub passes checks nothing. A refused draft goes back to the writer as feedback, up to `tries`
drafts. The kept suite is written as ``check_tests/`` of the task folder (or of a copy of it) and named in its
task.toml as ``[tests].check``. Python task.toml tasks only.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import tomli_w

from projectgen.agents.base import ModelGateway
from projectgen.config import Settings
from projectgen.construction.drafts import FilesDraft, python_stubs
from projectgen.construction.execution import WORK, Execution, execute
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError, first_line
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm.errors import ScriptExhaustedError
from projectgen.llm.parsing import StructuredOutputError, parse_model
from projectgen.prompts import Prompt, load_prompt
from projectgen.runs.folder import RunFolder
from projectgen.runs.run_log import write_run_log

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

ROLE = "check_test_writer"
STAGE = "construct_check_tests"
FOLDER = "check_tests"
SUITE = "check"


class CheckTestWriter(Protocol):
    """Writes check tests from a task's documents; `feedback` says why the previous draft was refused."""

    async def write_check_tests(self, task: Task, gateway: ModelGateway, *, feedback: str,
                                iteration: int) -> FilesDraft: ...


@dataclass(frozen=True)
class ModelCheckTestWriter:
    """The default writer: one call to a chat model with ``check_tests.md`` per draft."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("check_tests"))

    async def write_check_tests(self, task: Task, gateway: ModelGateway, *, feedback: str,
                                iteration: int) -> FilesDraft:
        documents = "\n\n".join(f"## {name}\n{text}" for name, text in task.docs.model_dump().items()
                                if isinstance(text, str) and text.strip())
        messages = self.prompt.messages(package=task.package or task.id, documents=documents,
                                        feedback=f"\n# Your previous draft was refused\n{feedback}" if feedback else "")
        reply = await gateway.ask(self.model, messages, role=ROLE, stage=STAGE, target=task.id, iteration=iteration)
        return parse_model(reply, FilesDraft)


@dataclass(frozen=True)
class CheckTestDraft:
    """One draft and what the sandbox said of it on the reference and on the empty stub."""

    files: dict[str, str]
    reference: Execution | None = None
    stub: Execution | None = None
    refused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"files": sorted(self.files), "refused": self.refused,
                "reference": self.reference.to_dict() if self.reference else None,
                "stub": self.stub.to_dict() if self.stub else None}


def check_task(task: Task) -> None:
    """Refuse, in one line, a task this command cannot give check tests to."""
    if task.format != "taskdir" or task.language != "python":
        raise ProjectGenError(f"task {task.id!r}: check tests are made for Python task.toml tasks only "
                              f"(this one is {task.format}, {task.language})")
    if SUITE in task.suites:
        raise ProjectGenError(f"task {task.id!r} already has check tests ({', '.join(task.suites[SUITE].paths)})")
    if not task.has_reference:
        raise ProjectGenError(f"task {task.id!r} has no reference: a check suite is kept only if the reference "
                              "passes it")


def empty_stub(task: Task) -> dict[str, str]:
    """The reference with every Python file reduced to signatures and `pass` bodies."""
    reference = task.reference_repository()
    return {**reference, **python_stubs(reference, task.id)}


def judge_draft(runner: SandboxRunner, task: Task, files: dict[str, str]) -> CheckTestDraft:
    """Run a draft on the reference and on the empty stub; say why it is refused (None: kept)."""
    outside = [path for path in files if not path.startswith(f"{FOLDER}/") or not path.endswith(".py")]
    if outside:
        return CheckTestDraft(files, refused=f"write Python test files under {FOLDER}/ only, not {', '.join(outside)}")
    on_reference = execute(runner, task, task.reference_repository(), files)
    if not on_reference.all_passed:
        failed = [test for test, outcome in on_reference.outcomes.items() if outcome != "passed"]
        why = on_reference.anomaly or f"{len(failed)} test(s) fail on a correct implementation: {', '.join(failed[:5])}"
        return CheckTestDraft(files, on_reference,
                              refused=f"the suite does not pass on a correct implementation ({why})")
    on_stub = execute(runner, task, empty_stub(task), files)
    if on_stub.all_passed:
        return CheckTestDraft(files, on_reference, on_stub,
                              refused="every test passes on an empty implementation: the tests check nothing")
    return CheckTestDraft(files, on_reference, on_stub)


async def generate_check_tests(task: Task, writer: CheckTestWriter, gateway: ModelGateway, runner: SandboxRunner, *,
                               tries: int = 3, trace: Any = None) -> tuple[CheckTestDraft | None, list[CheckTestDraft]]:
    """Drafts until one is kept or `tries` were made: (the kept draft or None, every draft)."""
    check_task(task)
    drafts: list[CheckTestDraft] = []
    feedback = ""
    for iteration in range(1, tries + 1):
        try:
            reply = await writer.write_check_tests(task, gateway, feedback=feedback, iteration=iteration)
        except (StructuredOutputError, ScriptExhaustedError) as error:
            draft = CheckTestDraft({}, refused=f"the reply could not be read: {first_line(error)}")
        else:
            draft = await asyncio.to_thread(judge_draft, runner, task, dict(reply.files))
        drafts.append(draft)
        if trace is not None:
            trace.write("check_test_draft", task=task.id, iteration=iteration, **draft.to_dict())
        if draft.refused is None:
            return draft, drafts
        feedback = draft.refused
    return None, drafts


def write_check_suite(task: Task, files: dict[str, str], out: Path | None) -> Path:
    """The task folder (`out`: a copy of it made first) with the suite in ``check_tests/`` and named in task.toml."""
    target = Path(out) if out is not None else task.root
    if out is not None and target.resolve() != task.root.resolve():
        if target.exists() and any(entry.name != WORK for entry in target.iterdir()):
            raise ProjectGenError(f"{target} exists and is not empty; choose another --out")
        shutil.copytree(task.root, target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", WORK))
    config_path = target / "task.toml"
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    for rel, text in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config.setdefault("tests", {})[SUITE] = FOLDER
    config_path.write_text(tomli_w.dumps(config), encoding="utf-8")
    return target


def summary(task: Task, kept: CheckTestDraft | None, drafts: list[CheckTestDraft], usage: list[Any]) -> str:
    """What summary.json of the run records: the decision, each draft, and the calls' cost."""
    return json.dumps({"task": task.id, "kept": kept is not None, "files": sorted(kept.files) if kept else [],
                       "drafts": [draft.to_dict() for draft in drafts],
                       "cost": {"calls": len(usage), "input_tokens": sum(r.input_tokens for r in usage),
                                "output_tokens": sum(r.output_tokens for r in usage)}}, indent=1) + "\n"


def construct_check_tests(task: Task, writer: CheckTestWriter, runner: SandboxRunner, *, out: Path | None,
                          tries: int = 3, settings: Settings | None = None) -> tuple[Path | None, CheckTestDraft | None,
                                                                                     list[CheckTestDraft]]:
    """The whole command: drafts judged in the sandbox, the kept suite written (see the module docstring).
    The calls go through the run folder ``<out or the task>/.construct/check-tests`` (usage, prompts, the call
    cache, so a rerun makes no finished call again; events.jsonl; summary.json). Returns (where the suite was
    written or None, the kept draft, every draft)."""
    import asyncio

    from projectgen.runs.folder import RunFolder

    check_task(task)
    folder = RunFolder((Path(out) if out is not None else task.root) / WORK / "check-tests")
    with folder.hold("construct check-tests"):
        gateway = folder.gateway(settings or Settings(), scope=f"check-tests/{task.id}")
        trace = folder.trace()
        kept, drafts = asyncio.run(generate_check_tests(task, writer, gateway, runner, tries=tries, trace=trace))
        written = write_check_suite(task, kept.files, out) if kept is not None else None
        usage = [record for record in folder.usage_records() if record.error is None]
        text = summary(task, kept, drafts, usage)
        write_run_log(folder, "check-tests", json.loads(text), manifest=None, summary=text)
        trace.write("check_tests_done", task=task.id, kept=kept is not None, written=str(written) if written else None)
    return written, kept, drafts
