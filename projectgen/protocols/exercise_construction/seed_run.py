"""LiveRepoReflection's exercise construction: what one seed goes through, as a unit of the batch engine.

For each seed (`package.load_seeds`), in its own run folder ``OUT/.construct/<seed>/``:

1. design: a "creative" model drawn at random (a `random.Random` seeded with the run's seed and the seed's
   id, so a resume or another worker draws the same; recorded) turns the seed code into a topic and a definition;
2. decontamination against the reference set (`decontamination`): a near-duplicate is dropped here, before any
   draft is paid for (the decision needs only this seed and the fixed reference set, so no other seed's);
3. drafts: every "reasoning" drafter writes a test suite and a solution, each from the definition alone;
4. cross-execution: every suite x solution pair in the sandbox (`execution.execute`), the pair kept by
   `cross_execution.select_pair`; 0%-pass programs, and seeds with no usable pair, go to human review;
5. packaging: the exercise in the Exercism layout (`package.write_exercise`), staged in the folder;
6. judges: each plays `reflect`'s protocol on it (`judges`: reflection's `play`, folders ``judges/<n>-<label>/``).

The seed ends ``judged`` with its judges' outcomes; the decisions that look across seeds (difficulty, near-
duplicates among the new exercises, the exercise names in ``OUT``) are `selection`'s, made after every
unit in seed-id order. The run folder holds usage.jsonl, calls.jsonl (the call cache: a seed cut short makes no
finished call again), prompts.jsonl and events.jsonl (one event per decision, with its figures).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.config import Settings
from projectgen.construction.drafts import FilesDraft
from projectgen.construction.execution import Execution, execute
from projectgen.datasets.exercism import exercise_task, load_exercise, load_exercises
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError, first_line
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm.errors import ScriptExhaustedError
from projectgen.llm.parsing import StructuredOutputError
from projectgen.protocols.definition import Play, PlayFn
from projectgen.protocols.exercise_construction.agents import (ExerciseDefinition, ExerciseDesigner, ExerciseSeed,
                                                               SolutionWriter, TestWriter)
from projectgen.protocols.exercise_construction.cross_execution import PairSelection, pair_key, select_pair
from projectgen.protocols.exercise_construction.decontamination import THRESHOLD, ReferenceIndex
from projectgen.protocols.exercise_construction.difficulty import judge_outcome
from projectgen.protocols.exercise_construction.judges import EDIT_FORMAT, Judge, judge_run
from projectgen.protocols.exercise_construction.package import write_exercise
from projectgen.runs.folder import RunFolder
from projectgen.runs.trace import TraceWriter

KEPT, DROPPED, REVIEW = "kept", "dropped", "human-review"
JUDGED = "judged"  # a unit's end when its exercise is staged and judged: the across-seed steps decide the rest
ERROR = "error"  # a unit whose work raised (a model down for good, a spent budget): built again on the next run
STAGED = "final"  # the staged exercise's parent folder in the seed's run folder
UNREADABLE = (StructuredOutputError, ScriptExhaustedError)
"""A reply that is no draft: that draft fails. A model failing for good or a budget spent fails the unit instead
(an error row, built again by the next invocation), so an outage never drops a seed for good."""


@dataclass(frozen=True)
class Drafter:
    """One entry of a model list: its spec (what the report names) and the agent that asks it."""

    spec: str
    agent: Any


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
    play_judge: PlayFn | None = None  # how a judge plays reflection (None: `judges.judges_play`, set by the batch)

    def built_with(self) -> dict[str, Any]:
        """What a seed's outcome depends on besides the seed: a ledger line made with other settings is built
        again (the seed's run folder emptied first: its drafts and judges' runs belong to the old settings)."""
        digest = hashlib.sha256(json.dumps(sorted(self.references.items())).encode("utf-8")).hexdigest()[:16]
        return {"creative": [d.spec for d in self.designers], "test_writers": [d.spec for d in self.test_writers],
                "solution_writers": [d.spec for d in self.solution_writers],
                "judges": [j.spec for j in self.judges], "rng_seed": self.rng_seed, "judge_tries": self.judge_tries,
                "threshold": self.threshold, "references": digest}


async def build_seed(seed: ExerciseSeed, run_dir: Path, construction: ExerciseConstruction, *, runner: SandboxRunner,
                     index: ReferenceIndex | None, say: Callable[[str], None]) -> dict[str, Any]:
    """One seed through the steps (see the module docstring) in `run_dir`; its record, as the ledger keeps it."""
    folder = RunFolder(run_dir)
    folder.root.mkdir(parents=True, exist_ok=True)
    gateway = folder.gateway(construction.settings, scope="construct-exercises")
    step = SeedRun(seed, folder, construction, runner, gateway, index, folder.trace(), say)
    step.trace.write("seed_start", seed=seed.id)
    record = await step.run()
    step.trace.write("seed_done", seed=seed.id, **{k: record.get(k) for k in ("status", "stage", "reason")})
    return record


@dataclass
class SeedRun:
    """One seed through the steps; `record` (what the ledger keeps of it) grows as it goes."""

    seed: ExerciseSeed
    folder: RunFolder
    construction: ExerciseConstruction
    runner: SandboxRunner
    gateway: ModelGateway
    index: ReferenceIndex | None
    trace: TraceWriter
    say: Callable[[str], None]
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def work(self) -> Path:
        return self.folder.root

    def end(self, status: str, stage: str, reason: str | None = None) -> dict[str, Any]:
        self.record.update(seed=self.seed.id, status=status, stage=stage, reason=reason)
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
        staged = write_exercise(self.work / STAGED, definition, tests[selection.test],
                                solutions[selection.solution], provenance)
        outcomes = await self.judge(staged)
        self.record["judge_outcomes"] = outcomes
        self.trace.write("judged", seed=self.seed.id, outcomes=outcomes)
        return self.end(JUDGED, "judges")

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

    async def judge(self, staged: Path) -> dict[str, str]:
        """Each judge's outcome on the staged exercise (`difficulty.judge_outcome`), its reflect run resumed from
        its folder when the seed was cut short."""
        play = self.construction.play_judge
        if play is None:
            raise ProjectGenError("exercise construction: no judge play given (the batch sets reflection's)")
        exercise = load_exercise(staged)
        outcomes: dict[str, str] = {}
        runs: dict[str, Any] = {}
        for number, judge in enumerate(self.construction.judges, 1):
            name = f"{number}-{judge.label}"
            record = await play(Play(sample=exercise, run_dir=self.folder.root / "judges" / name, spec=judge.spec,
                                     label=judge.label, model=judge.model, runner=self.runner,
                                     settings={"edit_format": EDIT_FORMAT, "tries": self.construction.judge_tries},
                                     scope=f"construct-judge/{self.seed.id}/{name}"))
            result = judge_run(record, name)
            outcomes[name] = judge_outcome(result.tries, result.passed_at)
            runs[name] = {"spec": judge.spec, "passed_at": result.passed_at, "calls": result.calls,
                          "input_tokens": result.input_tokens, "output_tokens": result.output_tokens}
        self.record["judges"] = runs
        return outcomes


def in_project(files: Mapping[str, str], project: str) -> dict[str, str]:
    """A draft's files by path in the project folder: a path written from outside it (``<project>/x.py``) loses
    the project folder."""
    prefix = f"{project}/"
    return {path.removeprefix(prefix): text for path, text in files.items()}


def reference_texts(path: Path) -> dict[str, str]:
    """A reference set for decontamination: the instructions of every exercise at or below `path`."""
    found = load_exercises(path)
    return {exercise.id: exercise.instructions for exercise in found.exercises}
