"""SR-Eval's construction agents: each role a Protocol, a default class calling the model through the one door
(`ModelGateway`) with its prompt file, and a pydantic model of what it answers, parsed tolerantly.

Roles (what the scripted replay keys its entries by, with the target and the iteration):

- ``decomposer`` (target the seed id): the seed's requirement as a core requirement and 1-4 evolving ones;
- ``requirement_evaluator`` (seed id): Testability, Completeness, Distinctiveness, Scenario Authenticity of each,
  and Retain or Refine with feedback;
- ``analyzer`` (seed id): which requirement builds on which (a DAG rooted at the core requirement);
- ``turn_coder`` (``SEED/turnK``): turn K's code and tests;
- ``alignment_evaluator`` (``SEED/turnK``): whether those tests check what turn K asks: RETAIN, TEST_REFINE or
  REQUIREMENT_REFINE;
- ``instruction_converter`` (seed id): the target function's signature and docstring as a natural-language
  instruction (repository level: the requirement the Decomposer starts from);
- ``contamination_probe`` (seed id, iteration K for the K-th probe model): the target function from its signature
  and docstring alone.

A reply that does not parse raises `projectgen.llm.parsing.StructuredOutputError`, whose text is feedback for
the next iteration (`projectgen.protocols.multiturn_construction.requirements`, `.turns`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, field_validator

from projectgen.agents.base import ModelGateway
from projectgen.agents.skeleton import code_from_reply
from projectgen.datasets.multiturn import TESTS_DIR
from projectgen.llm.parsing import StructuredOutputError, parse_model
from projectgen.prompts import Prompt, load_prompt
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.repository.edits import fenced_python, parse_whole_files

STAGE = "construction"  # the stage every construction call is labelled with
DECOMPOSER_ROLE = "decomposer"
REQUIREMENT_EVALUATOR_ROLE = "requirement_evaluator"
ANALYZER_ROLE = "analyzer"
TURN_CODER_ROLE = "turn_coder"
ALIGNMENT_EVALUATOR_ROLE = "alignment_evaluator"
CONTAMINATION_ROLE = "contamination_probe"
INSTRUCTION_ROLE = "instruction_converter"


def turn_target(seed_id: str, turn: int) -> str:
    """The call target of turn `turn`'s coder and evaluator."""
    return f"{seed_id}/turn{turn}"


# --------------------------------------------------------------------------- what the agents answer

class Decomposition(BaseModel):
    """The core requirement (turn 1) and the evolving ones, in the Decomposer's order."""

    core: str = Field(min_length=1)
    evolving: list[str] = Field(description="1 to 4 requirements that change or extend the core one")

    def requirements(self) -> list[str]:
        """Index 0 is the core requirement, 1.. the evolving ones."""
        return [self.core, *self.evolving]


class RequirementScore(BaseModel):
    """The Evaluator on one requirement: the four criteria (1-5) and its decision."""

    requirement: int = Field(ge=0, description="0 = the core requirement, 1.. the evolving ones")
    testability: int = Field(ge=1, le=5)
    completeness: int = Field(ge=1, le=5)
    distinctiveness: int = Field(ge=1, le=5)
    authenticity: int = Field(ge=1, le=5, description="Scenario Authenticity")
    decision: Literal["retain", "refine"]
    feedback: str = ""

    @field_validator("decision", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class RequirementReview(BaseModel):
    """The Evaluator on every requirement of a decomposition."""

    requirements: list[RequirementScore]

    def refused(self, count: int) -> list[str]:
        """One line per requirement to refine, or not reviewed (of `count`); empty = every one retained."""
        by_index = {score.requirement: score for score in self.requirements}
        lines = []
        for index in range(count):
            score = by_index.get(index)
            if score is None:
                lines.append(f"requirement {index}: not reviewed")
            elif score.decision == "refine":
                lines.append(f"requirement {index}: {score.feedback or 'refine'}")
        return lines


class Dependencies(BaseModel):
    """The Analyzer's DAG: (prerequisite, dependent) pairs of requirement indices (0 = the core)."""

    edges: list[tuple[int, int]] = Field(default_factory=list)


class Alignment(BaseModel):
    """Stage 3: whether a turn's tests check what its requirement says."""

    decision: Literal["RETAIN", "TEST_REFINE", "REQUIREMENT_REFINE"]
    feedback: str = ""

    @field_validator("decision", mode="before")
    @classmethod
    def _normalised(cls, value: Any) -> Any:
        return value.strip().upper().replace(" ", "_").replace("-", "_") if isinstance(value, str) else value


@dataclass(frozen=True)
class TurnDraft:
    """A turn's code (the whole target file) and its tests (one pytest file)."""

    code: str
    tests: str


# --------------------------------------------------------------------------- the roles

class Decomposer(Protocol):
    async def decompose(self, gateway: ModelGateway, seed: TaskSeed, *, feedback: str, iteration: int) -> Decomposition:
        """A core requirement plus 1-4 evolving ones for `seed`; `feedback` is the Evaluator's on the last draft."""


class RequirementEvaluator(Protocol):
    async def review(self, gateway: ModelGateway, seed: TaskSeed, decomposition: Decomposition, *,
                     iteration: int) -> RequirementReview:
        """Each requirement scored on the four criteria, retained or sent back with feedback."""


class Analyzer(Protocol):
    async def analyze(self, gateway: ModelGateway, seed: TaskSeed, decomposition: Decomposition) -> Dependencies:
        """Which requirement builds on which."""


class TurnCoder(Protocol):
    async def write(self, gateway: ModelGateway, seed: TaskSeed, requirements: Sequence[str], *, turn: int,
                    previous_code: str, feedback: str, iteration: int) -> TurnDraft:
        """Turn `turn`'s code and tests (`requirements[turn - 1]` is the turn's; earlier ones came before)."""


class AlignmentEvaluator(Protocol):
    async def judge(self, gateway: ModelGateway, seed: TaskSeed, requirement: str, draft: TurnDraft, *, turn: int,
                    iteration: int) -> Alignment:
        """RETAIN, TEST_REFINE (feedback to the coder) or REQUIREMENT_REFINE (a person must look)."""


class InstructionConverter(Protocol):
    async def convert(self, gateway: ModelGateway, seed: TaskSeed) -> str:
        """The target function's signature and docstring as a natural-language programming instruction."""


class ContaminationProbe(Protocol):
    name: str  # the probe model as the record names it (its spec)

    async def complete(self, gateway: ModelGateway, seed: TaskSeed, *, iteration: int) -> str:
        """The target module (at repository level: the target function) written from the function's signature and
        docstring alone (`iteration`: which of the probes asks, so each probe's call has its own key)."""


# --------------------------------------------------------------------------- the default agents

@dataclass
class PromptedAgent:
    """A role answered by `model` with `prompt` (a file under projectgen/prompts), through the gateway."""

    model: Any
    prompt: Prompt
    role: str

    async def ask(self, gateway: ModelGateway, *, target: str, iteration: int, **values: object) -> str:
        return await gateway.ask(self.model, self.prompt.messages(**values), role=self.role, stage=STAGE,
                                 target=target, iteration=iteration)


def numbered(requirements: Sequence[str]) -> str:
    """Requirements as the prompts show them: ``[0] core``, ``[1] ...``."""
    return "\n\n".join(f"[{index}] {text}" for index, text in enumerate(requirements))


@dataclass
class ModelDecomposer:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_decomposer"))

    async def decompose(self, gateway: ModelGateway, seed: TaskSeed, *, feedback: str, iteration: int) -> Decomposition:
        agent = PromptedAgent(self.model, self.prompt, DECOMPOSER_ROLE)
        reply = await agent.ask(gateway, target=seed.id, iteration=iteration, target_file=seed.target,
                                requirement=seed.requirement, feedback=feedback or "(first draft)")
        return parse_model(reply, Decomposition)


@dataclass
class ModelRequirementEvaluator:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_requirement_evaluator"))

    async def review(self, gateway: ModelGateway, seed: TaskSeed, decomposition: Decomposition, *,
                     iteration: int) -> RequirementReview:
        agent = PromptedAgent(self.model, self.prompt, REQUIREMENT_EVALUATOR_ROLE)
        reply = await agent.ask(gateway, target=seed.id, iteration=iteration, requirement=seed.requirement,
                                requirements=numbered(decomposition.requirements()))
        return parse_model(reply, RequirementReview)


@dataclass
class ModelAnalyzer:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_analyzer"))

    async def analyze(self, gateway: ModelGateway, seed: TaskSeed, decomposition: Decomposition) -> Dependencies:
        agent = PromptedAgent(self.model, self.prompt, ANALYZER_ROLE)
        reply = await agent.ask(gateway, target=seed.id, iteration=1,
                                requirements=numbered(decomposition.requirements()))
        return parse_model(reply, Dependencies)


def turn_test_file(seed: TaskSeed, turn: int) -> str:
    """Where turn `turn`'s tests go: ``test_<module>_turn<K>.py``."""
    return f"test_{seed.target.rsplit('/', 1)[-1][:-3]}_turn{turn}.py"


def repository_context(seed: TaskSeed) -> str:
    """The Coder's prompt section at repository level ("" at function level): SR-Eval's Algorithm 1 (line 8) gives
    the repository-level Coder the seed's reference code and tests, here with the repository's other files named.
    Each turn's answer is the target function, so the Coder is told to keep the code around it."""
    if seed.level != "repository":
        return ""
    files = "\n".join(f"- {path}" for path in sorted(seed.snapshot()))
    tests = "\n\n".join(f"{TESTS_DIR}/{path}\n{fenced_python(text)}" for path, text in seed.tests().items())
    return (f"# The repository\n`{seed.target}` is a module of a repository; the tests import it from there "
            f"(`{seed.target[:-3].replace('/', '.')}`). Its other files:\n{files}\n\n"
            f"# The reference\nThe complete requirement is met by this `{seed.target}`; its function "
            f"`{seed.function}` is what the turns build step by step. Every turn's module defines `{seed.function}` "
            f"as that turn's requirements ask (not more), and keeps the code around it as the reference has it.\n"
            f"{fenced_python(seed.reference())}\n# The reference tests\n{tests}\n")


def parse_draft(reply: str, seed: TaskSeed) -> TurnDraft:
    """The target file and one test file from a whole-file reply; what is missing is said as feedback."""
    files = {edit.path: edit.content for edit in parse_whole_files(reply)}
    code = files.get(seed.target)
    tests = [text for path, text in files.items() if path.rsplit("/", 1)[-1].startswith("test_")]
    if code is None or len(tests) != 1:
        raise StructuredOutputError(f"Answer with two files, each a fenced block after its path line: `{seed.target}` "
                                    f"(found: {code is not None}) and one test file `test_....py` (found "
                                    f"{len(tests)}).", kind="schema")
    return TurnDraft(code=code, tests=tests[0])


@dataclass
class ModelTurnCoder:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_coder"))

    async def write(self, gateway: ModelGateway, seed: TaskSeed, requirements: Sequence[str], *, turn: int,
                    previous_code: str, feedback: str, iteration: int) -> TurnDraft:
        agent = PromptedAgent(self.model, self.prompt, TURN_CODER_ROLE)
        earlier = numbered(requirements[:turn - 1]) or "(none: this is the first turn)"
        previous = fenced_python(previous_code) if previous_code else "(none: the file does not exist yet)"
        reply = await agent.ask(gateway, target=turn_target(seed.id, turn), iteration=iteration,
                                target_file=seed.target, test_file=turn_test_file(seed, turn), earlier=earlier,
                                context=repository_context(seed),
                                requirement=requirements[turn - 1], previous=previous,
                                feedback=feedback or "(first draft)")
        return parse_draft(reply, seed)


@dataclass
class ModelAlignmentEvaluator:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_alignment_evaluator"))

    async def judge(self, gateway: ModelGateway, seed: TaskSeed, requirement: str, draft: TurnDraft, *, turn: int,
                    iteration: int) -> Alignment:
        agent = PromptedAgent(self.model, self.prompt, ALIGNMENT_EVALUATOR_ROLE)
        reply = await agent.ask(gateway, target=turn_target(seed.id, turn), iteration=iteration,
                                requirement=requirement, code=fenced_python(draft.code),
                                tests=fenced_python(draft.tests))
        return parse_model(reply, Alignment)


def instruction_from_reply(reply: str) -> str:
    """The instruction of a converter's reply: its prose, without a fence around it; an empty one is refused."""
    text = reply.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text.split("\n", 1)[1].rsplit("```", 1)[0].strip() if "\n" in text else ""
    if not text:
        raise StructuredOutputError("Answer with the instruction as prose; the reply was empty.", kind="schema")
    return text


@dataclass
class ModelInstructionConverter:
    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_instruction"))

    async def convert(self, gateway: ModelGateway, seed: TaskSeed) -> str:
        agent = PromptedAgent(self.model, self.prompt, INSTRUCTION_ROLE)
        reply = await agent.ask(gateway, target=seed.id, iteration=1, target_file=seed.target,
                                signature=fenced_python(seed.signature()))
        return instruction_from_reply(reply)


@dataclass
class ModelContaminationProbe:
    model: Any
    name: str = "the construction model"
    prompt: Prompt = field(default_factory=lambda: load_prompt("construct_contamination"))

    async def complete(self, gateway: ModelGateway, seed: TaskSeed, *, iteration: int) -> str:
        agent = PromptedAgent(self.model, self.prompt, CONTAMINATION_ROLE)
        reply = await agent.ask(gateway, target=seed.id, iteration=iteration, target_file=seed.target,
                                answer=probe_answer(seed), signature=fenced_python(seed.signature()))
        return code_from_reply(reply)


def probe_answer(seed: TaskSeed) -> str:
    """What the contamination prompt asks for: the module at function level; at repository level the function
    alone, completed in place in its file as DevEval's models complete it (`filters.probe_candidate`)."""
    if seed.level != "repository":
        return "Write the whole module."
    return (f"Write the function `{seed.function}` alone: it takes the place of `{seed.function}` in the "
            f"repository's `{seed.target}`, whose other code stays as it is.")


@dataclass(frozen=True)
class ConstructionAgents:
    """One agent per role; swap any of them (`default` builds each from one model). `contamination` holds every
    probe of the contamination check (SR-Eval's three models; a seed any of them passes is dropped)."""

    decomposer: Decomposer
    requirement_evaluator: RequirementEvaluator
    analyzer: Analyzer
    coder: TurnCoder
    alignment_evaluator: AlignmentEvaluator
    contamination: tuple[ContaminationProbe, ...]
    instruction: InstructionConverter

    @classmethod
    def default(cls, model: Any, probes: Mapping[str, Any] | None = None) -> ConstructionAgents:
        """Every role on `model`; the contamination probes on `probes` (name -> model), else on `model` alone."""
        contamination = tuple(ModelContaminationProbe(probe, name) for name, probe in probes.items()) if probes \
            else (ModelContaminationProbe(model),)
        return cls(decomposer=ModelDecomposer(model), requirement_evaluator=ModelRequirementEvaluator(model),
                   analyzer=ModelAnalyzer(model), coder=ModelTurnCoder(model),
                   alignment_evaluator=ModelAlignmentEvaluator(model), contamination=contamination,
                   instruction=ModelInstructionConverter(model))
