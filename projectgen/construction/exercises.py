"""LiveRepoReflection's exercise construction, seed by seed, durable and resumable.

For each seed (`exercise_package.load_seeds`):

1. design: a "creative" model drawn at random (a `random.Random` seeded with the run's seed and the seed's
   id, so a resume draws the same; recorded) turns the seed code into a topic and a definition;
2. decontamination: the definition against the reference set (`decontamination`), dropped when it is a
   near-duplicate, with the match in ``decontamination.json``;
3. drafts: every "reasoning" drafter writes a test suite and a solution, each from the definition alone;
4. cross-execution: every suite x solution pair in the sandbox (`execution.execute`), the pair kept by
   `cross_execution.select_pair`; 0%-pass programs, and seeds with no usable pair, to ``human-review.json``;
5. packaging: the exercise in the Exercism layout (`exercise_package.write_exercise`), staged;
6. difficulty: each judge plays `reflect`'s protocol on it (`runs.reflection`), `difficulty.select_by_difficulty`
   keeps or drops it; a kept exercise is copied to ``OUT/<project>``.

``OUT/.construct/`` is the run's folder: usage.jsonl, calls.jsonl (the call cache: a killed run makes no
finished call again), prompts.jsonl, events.jsonl (one event per decision, with its figures), ledger.jsonl
(one line per finished seed: a rerun skips it), work/<seed>/ (drafts and staged exercises) and judges/ (each
judge's reflect run folder). ``OUT/construction.json`` is the report, rebuilt from the ledger on every run.
"""
from __future__ import annotations

import asyncio
import json
import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.config import Settings
from projectgen.construction.cross_execution import PairSelection, pair_key, select_pair
from projectgen.construction.decontamination import NGRAM, THRESHOLD, ReferenceIndex
from projectgen.construction.difficulty import DifficultyDecision, judge_outcome, select_by_difficulty
from projectgen.construction.exercise_agents import (ExerciseDefinition, ExerciseDesigner, FilesDraft, Seed,
                                                     SolutionWriter, TestWriter)
from projectgen.construction.exercise_package import write_exercise
from projectgen.construction.execution import WORK, Execution, execute
from projectgen.datasets.exercism import exercise_task, load_exercise, load_exercises
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError, first_line
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm.errors import ScriptExhaustedError
from projectgen.llm.parsing import StructuredOutputError
from projectgen.experiments.ledger import Ledger
from projectgen.runs import layout
from projectgen.runs.folder import RunFolder

REPORT = "construction.json"
DECONTAMINATION = "decontamination.json"
HUMAN_REVIEW = "human-review.json"
KEPT, DROPPED, REVIEW = "kept", "dropped", "human-review"
UNREADABLE = (StructuredOutputError, ScriptExhaustedError)
"""A reply that is no draft: that draft fails. A model failing for good or a budget spent stops the run instead
(resumable), so an outage never drops seeds for good."""


@dataclass(frozen=True)
class Drafter:
    """One entry of a model list: its spec (what the report names) and the agent that asks it."""

    spec: str
    agent: Any


@dataclass(frozen=True)
class Judge:
    """A difficulty judge: a chat model that plays `reflect`'s protocol."""

    spec: str
    model: Any
    label: str


@dataclass(frozen=True)
class ExerciseConstruction:
    """What a construction run is given: the models of each role, the reference set, and its settings."""

    designers: Sequence[Drafter]  # ExerciseDesigner agents ("creative" models)
    test_writers: Sequence[Drafter]  # TestWriter agents ("reasoning" models)
    solution_writers: Sequence[Drafter]  # SolutionWriter agents ("reasoning" models)
    judges: Sequence[Judge]
    references: Mapping[str, str] = field(default_factory=dict)  # reference id -> text, for decontamination
    rng_seed: int = 0
    judge_tries: int = 2
    threshold: float = THRESHOLD
    settings: Settings = field(default_factory=Settings)


@dataclass(frozen=True)
class ConstructionReport:
    """The run's outcome: per seed, what happened to it; and where the report files are."""

    out: Path
    seeds: dict[str, dict[str, Any]]

    def ids(self, status: str) -> list[str]:
        return [seed for seed, record in self.seeds.items() if record.get("status") == status]


def construct_exercises(seeds: Sequence[Seed], out: Path, construction: ExerciseConstruction, *,
                        runner: SandboxRunner, progress: Callable[[str], None] | None = None) -> ConstructionReport:
    """Build exercises from `seeds` into `out` (see the module docstring); a rerun on the same `out` resumes."""
    return asyncio.run(aconstruct_exercises(seeds, out, construction, runner=runner, progress=progress))


async def aconstruct_exercises(seeds: Sequence[Seed], out: Path, construction: ExerciseConstruction, *,
                               runner: SandboxRunner,
                               progress: Callable[[str], None] | None = None) -> ConstructionReport:
    """`construct_exercises` for callers inside an event loop; one seed at a time, its drafts asked at once."""
    if not construction.designers or not construction.test_writers or not construction.solution_writers:
        raise ProjectGenError("construct exercises needs at least one creative and one reasoning model")
    out = Path(out)
    folder = RunFolder(out / WORK)
    say = progress or (lambda message: None)
    with folder.hold("construct exercises"):
        ledger = Ledger(folder.root / layout.LEDGER)
        done = ledger.done()
        index = ReferenceIndex(construction.references, construction.threshold) if construction.references else None
        gateway = folder.gateway(construction.settings, scope="construct-exercises")
        trace = folder.trace()
        trace.write("construct_start", seeds=[seed.id for seed in seeds], resumed=sorted(done),
                    references=len(construction.references), rng_seed=construction.rng_seed)
        for seed in seeds:
            if seed.id in done:
                say(f"{seed.id}: {done[seed.id]['status']} (finished earlier)")
                continue
            step = _SeedRun(seed, out, folder, construction, runner, gateway, index, trace, say)
            record = await step.run()
            ledger.append(seed.id, **record)
            trace.write("seed_done", seed=seed.id, **{k: record.get(k) for k in ("status", "stage", "reason")})
            say(f"{seed.id}: {record['status']}" + (f" ({record['reason']})" if record.get("reason") else ""))
        records = {seed.id: ledger.done().get(seed.id, {}) for seed in seeds}
        _write_reports(out, folder, construction, records)
    return ConstructionReport(out=out, seeds=records)


@dataclass
class _SeedRun:
    """One seed through the steps; `record` (what the ledger keeps of it) grows as it goes."""

    seed: Seed
    out: Path
    folder: RunFolder
    construction: ExerciseConstruction
    runner: SandboxRunner
    gateway: ModelGateway
    index: ReferenceIndex | None
    trace: Any
    say: Callable[[str], None]
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def work(self) -> Path:
        return self.folder.root / "work" / self.seed.id

    def end(self, status: str, stage: str, reason: str | None = None) -> dict[str, Any]:
        self.record.update(status=status, stage=stage, reason=reason)
        return self.record

    async def run(self) -> dict[str, Any]:
        definition = await self.design()
        if definition is None:
            return self.end(DROPPED, "design", self.record["design_error"])
        if self.index is not None:
            match = self.index.match(self.seed.id, definition.instructions)
            if match is not None:
                self.record["decontamination"] = match.to_dict()
                self.trace.write("decontaminated", seed=self.seed.id, **match.to_dict())
                return self.end(DROPPED, "decontamination", match.to_dict()["why"])
        tests, solutions = await self.drafts(definition)
        selection = await asyncio.to_thread(self.cross_execute, definition, tests, solutions)
        self.record["cross_execution"] = selection.to_dict()
        self.trace.write("cross_execution", seed=self.seed.id, **selection.to_dict())
        if selection.human_review:
            self.record["human_review"] = selection.human_review
        if selection.test is None or selection.solution is None:
            return self.end(REVIEW, "cross-execution", selection.reason)
        provenance = {"seed_id": self.seed.id, "seed": self.seed.path, "creative": self.record["creative"],
                      "test_suite": selection.test, "solution": selection.solution}
        staged = write_exercise(self.work / "final", definition, tests[selection.test],
                                solutions[selection.solution], provenance)
        decision = await self.judge(staged)
        self.record["difficulty"] = decision.to_dict()
        self.trace.write("difficulty", seed=self.seed.id, **decision.to_dict())
        if not decision.keep:
            return self.end(DROPPED, "difficulty", decision.reason)
        target = self.out / definition.project
        owner = _owner(target)
        if owner is not None and owner != self.seed.id:
            return self.end(DROPPED, "packaging", f"exercise {definition.project} was already made from seed {owner}")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(staged, target)
        self.record["exercise"] = definition.project
        return self.end(KEPT, "packaging")

    async def design(self) -> ExerciseDefinition | None:
        designers = self.construction.designers
        pick = random.Random(f"{self.construction.rng_seed}:{self.seed.id}").randrange(len(designers))
        drafter = designers[pick]
        self.record.update(seed_path=self.seed.path, creative=drafter.spec, creative_index=pick)
        self.trace.write("creative_model", seed=self.seed.id, model=drafter.spec, index=pick)
        agent: ExerciseDesigner = drafter.agent
        try:
            definition = await agent.design(self.seed, self.gateway, target=f"{self.seed.id}/{pick + 1}")
        except UNREADABLE as error:
            self.record["design_error"] = first_line(error)
            return None
        self.record.update(topic=definition.topic, project=definition.project, language=definition.language)
        self.work.mkdir(parents=True, exist_ok=True)
        write_atomic(self.work / "definition.json", definition.model_dump_json(indent=1) + "\n")
        return definition

    async def drafts(self, definition: ExerciseDefinition) -> tuple[dict[str, dict[str, str]],
                                                                    dict[str, dict[str, str]]]:
        """Every drafter's test suite and solution, asked at once; a draft that fails to parse is left out."""
        async def tests(number: int, drafter: Drafter) -> FilesDraft:
            agent: TestWriter = drafter.agent
            return await agent.write_tests(definition, self.gateway, target=f"{self.seed.id}/{number}")

        async def solution(number: int, drafter: Drafter) -> FilesDraft:
            agent: SolutionWriter = drafter.agent
            return await agent.write_solution(definition, self.gateway, target=f"{self.seed.id}/{number}")

        test_drafters = list(enumerate(self.construction.test_writers, 1))
        solution_drafters = list(enumerate(self.construction.solution_writers, 1))
        replies = await asyncio.gather(*(tests(n, d) for n, d in test_drafters),
                                       *(solution(n, d) for n, d in solution_drafters), return_exceptions=True)
        found: dict[str, dict[str, dict[str, str]]] = {"test": {}, "solution": {}}
        failed: dict[str, str] = {}
        kinds = [("test", n, d) for n, d in test_drafters] + [("solution", n, d) for n, d in solution_drafters]
        for (kind, number, drafter), reply in zip(kinds, replies):
            name = f"{kind[0]}{number}"
            if isinstance(reply, UNREADABLE):
                failed[name] = f"{drafter.spec}: {first_line(reply)}"
            elif isinstance(reply, BaseException):
                raise reply
            else:
                files = in_project(reply.files, definition.project)
                if kind == "solution":
                    files = {p: t for p, t in files.items() if p in definition.solution_files}
                elif set(files) & set(definition.solution_files):
                    failed[name] = f"{drafter.spec}: a test file has the name of a solution file"
                    continue
                if files:
                    found[kind][name] = files
                else:
                    failed[name] = f"{drafter.spec}: none of the solution files {definition.solution_files}"
        self.record["drafts"] = {"tests": sorted(found["test"]), "solutions": sorted(found["solution"]),
                                 "failed": failed,
                                 "models": {f"{k[0]}{n}": d.spec for k, n, d in kinds}}
        write_atomic(self.work / "drafts.json", json.dumps(found, indent=1) + "\n")
        return found["test"], found["solution"]

    def cross_execute(self, definition: ExerciseDefinition, tests: dict[str, dict[str, str]],
                      solutions: dict[str, dict[str, str]]) -> PairSelection:
        """Every suite x solution pair in the sandbox (in a worker thread: the event loop stays free)."""
        matrix: dict[tuple[str, str], Execution] = {}
        for test_id, test_files in tests.items():
            try:
                stage = write_exercise(self.work / "stage" / test_id, definition, test_files, None)
                exercise = load_exercise(stage, definition.project)
                task = exercise_task(exercise)
            except ProjectGenError as error:  # the draft's files make no exercise: no pair of it can run
                matrix.update({(test_id, s): Execution(anomaly=f"layout: {first_line(error)}") for s in solutions})
                continue
            suite = {exercise.workspace_path(path): text for path, text in test_files.items()}
            for solution_id, solution_files in solutions.items():
                run = execute(self.runner, task, exercise.candidate(solution_files), suite)
                matrix[(test_id, solution_id)] = run
                self.say(f"{self.seed.id}: {pair_key(test_id, solution_id)}: "
                         + (run.anomaly or f"{run.passed}/{run.total} passed"))
        self.record["matrix"] = {pair_key(t, s): run.to_dict() for (t, s), run in matrix.items()}
        return select_pair(list(tests), list(solutions), matrix)

    async def judge(self, staged: Path) -> DifficultyDecision:
        from projectgen.runs.reflection import arun_reflection, reflection_request

        exercise = load_exercise(staged)
        outcomes: dict[str, str] = {}
        runs: dict[str, Any] = {}
        for number, judge in enumerate(self.construction.judges, 1):
            name = f"{number}-{judge.label}"
            request = reflection_request(exercise, spec=judge.spec, model_label=judge.label, edit_format="whole",
                                         tries=self.construction.judge_tries)
            result = await arun_reflection(exercise, self.folder.root / "judges" / self.seed.id / name, request,
                                           model=judge.model, runner=self.runner, model_slug=judge.label,
                                           scope=f"construct-judge/{self.seed.id}/{name}")
            outcomes[name] = judge_outcome(result.tries, result.passed_at)
            runs[name] = {"spec": judge.spec, "passed_at": result.passed_at, "calls": result.calls,
                          "input_tokens": result.input_tokens, "output_tokens": result.output_tokens}
        self.record["judges"] = runs
        return select_by_difficulty(outcomes)


def in_project(files: Mapping[str, str], project: str) -> dict[str, str]:
    """A draft's files by path in the project folder: a path written from outside it (``<project>/x.py``) loses
    the project folder."""
    prefix = f"{project}/"
    return {path.removeprefix(prefix): text for path, text in files.items()}


def _owner(exercise: Path) -> str | None:
    """The seed an exercise folder in the output was made from (None: not ours, or not there)."""
    try:
        config = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))
        return str(config["construction"]["seed_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_reports(out: Path, folder: RunFolder, construction: ExerciseConstruction,
                   records: Mapping[str, Mapping[str, Any]]) -> None:
    """construction.json (everything), decontamination.json (what was removed, why) and human-review.json."""
    judge_folders = sorted(path for path in (folder.root / "judges").glob("*/*") if path.is_dir())
    usage = [record for run in (folder, *(RunFolder(path) for path in judge_folders))
             for record in run.usage_records() if record.error is None]
    counts: dict[str, int] = {}
    for record in records.values():
        for name, value in ((record.get("difficulty") or {}).get("counts") or {}).items():
            counts[name] = counts.get(name, 0) + value
    report = {
        "schema_version": 1,
        "settings": {"rng_seed": construction.rng_seed, "judge_tries": construction.judge_tries,
                     "decontamination": {"ngram": NGRAM, "jaccard_threshold": construction.threshold,
                                         "references": len(construction.references)},
                     "reject_sampling_score": "not computed: LiveRepoReflection defines no formula for it",
                     "models": {"creative": [d.spec for d in construction.designers],
                                "test_writers": [d.spec for d in construction.test_writers],
                                "solution_writers": [d.spec for d in construction.solution_writers],
                                "judges": [j.spec for j in construction.judges]}},
        "summary": {status: sorted(s for s, r in records.items() if r.get("status") == status)
                    for status in (KEPT, DROPPED, REVIEW)},
        "difficulty_counts": counts,
        "cost": _cost(usage),
        "seeds": records,
    }
    write_atomic(out / REPORT, json.dumps(report, indent=1, default=str) + "\n")
    removed = [{"seed": seed, **record["decontamination"]} for seed, record in records.items()
               if record.get("decontamination")]
    write_atomic(out / DECONTAMINATION, json.dumps({"ngram": NGRAM, "threshold": construction.threshold,
                                                    "references": sorted(construction.references),
                                                    "removed": removed}, indent=1) + "\n")
    review = [{"seed": seed, "status": record.get("status"), "items": record["human_review"]}
              for seed, record in records.items() if record.get("human_review")]
    write_atomic(out / HUMAN_REVIEW, json.dumps({"review": review}, indent=1) + "\n")


def _cost(usage: Sequence[Any]) -> dict[str, Any]:
    """Calls, tokens and dollars (list prices; a replay costs 0, a model without a price is n/a) of every call
    the run made, the judges' reflect runs included, in all and per role."""
    from projectgen.llm.pricing import PriceTable

    total = PriceTable.default().total(usage)
    return {"calls": len(usage), "input_tokens": sum(r.input_tokens for r in usage),
            "output_tokens": sum(r.output_tokens for r in usage), "usd": total.value, "usd_label": total.label(),
            "by_role": _by_role(usage)}


def _by_role(usage: Sequence[Any]) -> dict[str, dict[str, int]]:
    roles: dict[str, dict[str, int]] = {}
    for record in usage:
        row = roles.setdefault(record.role, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
        row["calls"] += 1
        row["input_tokens"] += record.input_tokens
        row["output_tokens"] += record.output_tokens
    return roles


def reference_texts(path: Path) -> dict[str, str]:
    """A reference set for decontamination: the instructions of every exercise at or below `path`."""
    found = load_exercises(path)
    return {exercise.id: exercise.instructions for exercise in found.exercises}
