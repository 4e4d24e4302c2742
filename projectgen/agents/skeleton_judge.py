"""The skeleton judge: compile, then check structure against the SSAT exactly, then ask the LLM.

With `review_mode="exact"` (the projectgen profile), what a program can decide (syntax, missing or extra
files, classes, functions, parameter names/kinds/defaults) is decided by AST and never left to the
model; a skeleton with such problems is not accepted, whatever the model would have said. With
`review_mode="paper"` (JudgeS as the paper prints it) the model scores the two dimensions, directory
structure and interface/call matching (0-10 each), and an overall score that decides; only a file
that does not compile is refused without asking.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from projectgen.agents.base import ModelGateway, Verdict
from projectgen.config import SkeletonReviewMode
from projectgen.llm.parsing import StructuredOutputError, parse_model
from projectgen.prompts import Prompt, load_prompt
from projectgen.repository.syntax import syntax_error
from projectgen.ssat import SSAT, ClassNode, FileNode, FunctionNode, render_stub, render_tree, ssat_from_repository


def compile_errors(files: Mapping[str, str]) -> dict[str, str]:
    """path -> "line N: message" for every Python file that does not compile (`syntax_error`)."""
    errors: dict[str, str] = {}
    for path, code in sorted(files.items()):
        error = syntax_error(path, code)
        if error is not None:
            errors[path] = error
    return errors


def _signature(fn: FunctionNode) -> list[tuple[str, str, str | None]]:
    return [(p.name, p.kind, p.default) for p in fn.parameters]


def _describe(params: list[tuple[str, str, str | None]]) -> str:
    """The parameter list as Python writes it (`*args`, `**kw`, bare `*` and `/`), so a kind mismatch shows."""
    items: list[str] = []
    kinds = [kind for _, kind, _ in params]
    needs_star = "keyword_only" in kinds and "var_positional" not in kinds
    for i, (name, kind, default) in enumerate(params):
        if kind == "keyword_only" and needs_star:
            items.append("*")
            needs_star = False
        stars = {"var_positional": "*", "var_keyword": "**"}.get(kind, "")
        items.append(stars + name + (f"={default}" if default is not None else ""))
        if kind == "positional_only" and (i + 1 == len(params) or params[i + 1][1] != "positional_only"):
            items.append("/")
    return "(" + ", ".join(items) + ")"


def _compare_functions(where: str, expected: tuple[FunctionNode, ...], actual: tuple[FunctionNode, ...]) -> list[str]:
    problems: list[str] = []
    have = {f.name: f for f in actual}
    for fn in expected:
        got = have.get(fn.name)
        if got is None:
            problems.append(f"{where}: function {fn.name!r} is missing")
        elif _signature(got) != _signature(fn):
            problems.append(f"{where}: {fn.name}{_describe(_signature(got))} should be "
                            f"{fn.name}{_describe(_signature(fn))}")
    return problems


def _compare_classes(path: str, expected: tuple[ClassNode, ...], actual: tuple[ClassNode, ...]) -> list[str]:
    problems: list[str] = []
    have = {c.name: c for c in actual}
    for cls in expected:
        got = have.get(cls.name)
        if got is None:
            problems.append(f"{path}: class {cls.name!r} is missing")
        else:
            problems += _compare_functions(f"{path}: class {cls.name}", cls.methods, got.methods)
    return problems


def _normalized(node: FileNode) -> FileNode | None:
    """The node as the AST reader sees its stub, so both sides compare in the same form."""
    stub = render_stub(node)
    if not stub:
        return None
    return ssat_from_repository({node.path: stub}, "expected").file(node.path)


def structure_problems(ssat: SSAT, files: Mapping[str, str]) -> dict[str, list[str]]:
    """path -> exact mismatches between the skeleton `files` and the tree (compiling files only)."""
    expected = {f.path: f for f in ssat.files() if f.path.endswith(".py")}
    problems: dict[str, list[str]] = {}
    for path in sorted(set(files) - set(expected)):
        if path.endswith(".py"):
            problems.setdefault(path, []).append(f"{path}: file is not in the architecture tree")
    for path, node in expected.items():
        if path not in files:
            problems.setdefault(path, []).append(f"{path}: file is missing")
            continue
        want = _normalized(node)
        if want is None:
            continue
        try:
            got = ssat_from_repository({path: files[path]}, "actual").file(path)
        except (KeyError, ValueError):
            continue  # does not parse: reported as a compile error instead
        found = _compare_classes(path, want.classes, got.classes) + _compare_functions(
            path, want.functions, got.functions)
        if found:
            problems[path] = found
    return problems


class SkeletonReview(BaseModel):
    score: float = Field(ge=0, le=10)
    feedback: str = ""
    files: dict[str, str] = Field(default_factory=dict)


PAPER_DIMENSIONS = ("directory_structure", "interface_matching")
Review = TypeVar("Review", bound=BaseModel)


class PaperSkeletonReview(BaseModel):
    """JudgeS's reply in the paper's form: the two dimensions and an overall score (their mean when left out)."""

    scores: dict[str, float] = Field(default_factory=dict)
    overall: float | None = Field(default=None, ge=0, le=10)
    feedback: str = ""
    files: dict[str, str] = Field(default_factory=dict)

    def dimension_scores(self) -> dict[str, float]:
        return {name: min(10.0, max(0.0, float(self.scores[name]))) for name in PAPER_DIMENSIONS
                if name in self.scores}

    def overall_score(self) -> float:
        if self.overall is not None:
            return float(self.overall)
        dimensions = self.dimension_scores()
        return sum(dimensions.values()) / len(dimensions) if dimensions else 0.0


def _listing(files: Mapping[str, str]) -> str:
    return "\n\n".join(f"## {path}\n```python\n{code}```" for path, code in sorted(files.items()) if code)


@dataclass
class SkeletonJudge:
    """Scores 0-10; threshold from the settings. Uses no memory."""

    model: Any
    review_mode: SkeletonReviewMode = "exact"
    prompt: Prompt | None = None  # None: the bundled prompt of `review_mode`
    role: str = "skeleton_judge"
    name: str = "skeleton_judge"

    def __post_init__(self) -> None:
        if self.prompt is None:
            self.prompt = load_prompt("skeleton_judge_paper" if self.review_mode == "paper" else "skeleton_judge")

    def _rejected(self, iteration: int, score: float, feedback: str, files: dict[str, str]) -> Verdict:
        return Verdict(judge=self.name, stage="skeleton", iteration=iteration, score=score, accepted=False,
                       feedback=feedback, files=files, scores={"exact": score})

    async def review(self, gateway: ModelGateway, ssat: SSAT, files: Mapping[str, str], *, iteration: int,
                     threshold: float) -> Verdict:
        errors = compile_errors(files)
        if errors:
            feedback = "These files do not compile:\n" + "\n".join(f"- {p}: {e}" for p, e in errors.items())
            return self._rejected(iteration, 0.0, feedback, {p: f"fix the syntax error at {e}" for p, e in errors.items()})
        if self.review_mode == "paper":
            return await self._paper_review(gateway, ssat, files, iteration=iteration, threshold=threshold)
        problems = structure_problems(ssat, files)
        if problems:
            count = sum(len(v) for v in problems.values())
            # Below the threshold by construction: one point less per problem, from threshold - 1.
            score = max(0.0, min(threshold - 1, 10.0) - (count - 1))
            feedback = "The skeleton does not match the architecture tree:\n" + "\n".join(
                f"- {line}" for lines in problems.values() for line in lines)
            return self._rejected(iteration, score, feedback, {p: "\n".join(v) for p, v in problems.items()})
        review = await self._model_review(gateway, ssat, files, iteration=iteration, shape=SkeletonReview)
        if isinstance(review, Verdict):
            return review
        known = {p: s for p, s in review.files.items() if p in files}
        ignored = sorted(p for p in review.files if p not in files)
        return Verdict(judge=self.name, stage="skeleton", iteration=iteration, score=review.score,
                       accepted=review.score >= threshold, feedback=review.feedback, files=known,
                       scores={"exact": 10.0, "review": review.score},
                       reasons=f"ignored file(s) the judge named that are not in the skeleton: {ignored}"
                       if ignored else "")

    async def _paper_review(self, gateway: ModelGateway, ssat: SSAT, files: Mapping[str, str], *, iteration: int,
                            threshold: float) -> Verdict:
        """The paper's JudgeS: the model scores both dimensions and overall; the overall score decides."""
        review = await self._model_review(gateway, ssat, files, iteration=iteration, shape=PaperSkeletonReview)
        if isinstance(review, Verdict):
            return review
        score = review.overall_score()
        missing = [name for name in PAPER_DIMENSIONS if name not in review.scores]
        return Verdict(judge=self.name, stage="skeleton", iteration=iteration, score=score,
                       accepted=score >= threshold, feedback=review.feedback,
                       files={p: s for p, s in review.files.items() if p in files},
                       scores={**review.dimension_scores(), "overall": score},
                       reasons=f"no score given for {', '.join(missing)}" if missing else "")

    async def _model_review(self, gateway: ModelGateway, ssat: SSAT, files: Mapping[str, str], *, iteration: int,
                            shape: type[Review]) -> Review | Verdict:
        """The model's review of the skeleton read as `shape`, or the rejection saying it could not be read."""
        messages = self.prompt.messages(ssat=render_tree(ssat), skeleton=_listing(files))
        reply = await gateway.ask(self.model, messages, role=self.role, stage="skeleton", iteration=iteration)
        try:
            return parse_model(reply, shape)
        except StructuredOutputError as exc:
            return self._rejected(iteration, 0.0, f"The review could not be read ({exc}).", {})
