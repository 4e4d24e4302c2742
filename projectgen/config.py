"""Settings of the ProjectGen pipeline; defaults are the paper's hyperparameters.

Kept apart from the agents so one `Settings` value describes a run completely and can be
written into its summary (and, in the attempts loop, compared between runs).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EditFormat = Literal["whole", "search_replace"]
# How a judge's score is held against the threshold. ProjectGen's architecture judge accepts a tree whose
# score *exceeds* the threshold (8); "at_least" accepts a score equal to it (projectgen before 0.2).
ThresholdRule = Literal["exceeds", "at_least"]
# A named set of defaults. "paper": the four papers as printed (used by default for the published
# benchmarks); "projectgen": this library's defaults, where it keeps a choice it finds better for users.
Profile = Literal["paper", "projectgen"]
ArchitectureCriteria = Literal["paper", "projectgen"]
SkeletonReviewMode = Literal["paper", "exact"]
# "distilled": the architecture stage's revisions are summarised (the paper distils only that stage's memory; the
# skeleton and code stages keep feedback, diff and the change in check-test passes as they are); "distilled-all":
# every stage's; "raw": none.
MemoryForm = Literal["distilled", "distilled-all", "raw"]
DISTILLED_STAGES: Mapping[str, frozenset[str]] = MappingProxyType({
    "distilled": frozenset({"architecture"}), "distilled-all": frozenset({"architecture", "skeleton", "code"}),
    "raw": frozenset()})
# Whose test output is the execution feedback (the code judge's, Self-Reflection's, the knowledge agent's):
# "check", the visible tests (ProjectGen keeps the hidden ones apart), or "unit", the hidden tests the score
# comes from (LiveCoder as printed on RAL-Bench and NL2Repo-Bench, which publish no visible tests).
FeedbackSuite = Literal["check", "unit"]

# What each profile sets where a caller leaves a field unset (`Settings`, `AttemptSettings`); the
# "projectgen" profile is the fields' defaults. docs/pipeline.md explains each difference.
SETTINGS_PROFILES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "paper": MappingProxyType({"architecture_criteria": "paper", "skeleton_review": "paper",
                               "skeleton_threshold_rule": "at_least", "stage_memory": "distilled",
                               "carry_reflections": True}),
    "projectgen": MappingProxyType({}),
})
ATTEMPT_PROFILES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "paper": MappingProxyType({"selection": "unit", "knowledge_after_last": True}),
    "projectgen": MappingProxyType({}),
})


# The settings docs/fidelity.md names as choosing between a paper and projectgen (or as the paper's numbers),
# beyond the profile, the selection and the feedback suite, which every result already carries on its own:
# what an experiment's result row and a run's report repeat from run.json, so a reader sees what ran.
FIDELITY_SETTINGS: tuple[str, ...] = (
    "threshold", "threshold_rule", "skeleton_threshold_rule", "gamma", "architecture_iterations",
    "skeleton_iterations", "code_iterations", "architecture_criteria", "skeleton_review", "stage_memory",
    "carry_reflections", "edit_format")
FIDELITY_ATTEMPT_SETTINGS: tuple[str, ...] = ("knowledge_after_last",)


def fidelity_settings(settings: Mapping[str, Any], attempt_settings: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the settings docs/fidelity.md names, as a run recorded them (its run.json's or summary's
    `settings` and `attempt_settings`); a name the record lacks (a run from before it existed) is left out, not
    guessed."""
    return {**{name: settings[name] for name in FIDELITY_SETTINGS if name in settings},
            **{name: attempt_settings[name] for name in FIDELITY_ATTEMPT_SETTINGS if name in attempt_settings}}


def profile_defaults(profiles: Mapping[str, Mapping[str, Any]], data: Any) -> Any:
    """`data` (a model's input) with the fields it leaves out taken from its `profile`'s defaults."""
    if isinstance(data, Mapping) and data.get("profile") in profiles:
        return {**profiles[data["profile"]], **data}
    return data



def cache_root() -> Path:
    """Where projectgen keeps what it can rebuild (test environments, fetched benchmarks):
    `$PROJECTGEN_CACHE_DIR`, else the XDG cache folder's projectgen/."""
    explicit = os.environ.get("PROJECTGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "projectgen"

class Settings(BaseModel):
    """How hard each stage tries and what counts as good enough."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Profile = Field(default="projectgen", description="the named defaults the unset fields below take "
                             "(SETTINGS_PROFILES): 'paper' as the papers print it, 'projectgen' this library's")
    threshold: float = Field(default=8.0, ge=0, le=10, description="judge score (0-10) a stage needs to pass")
    threshold_rule: ThresholdRule = Field(default="exceeds", description="'exceeds': a score must be above the "
                                          "threshold (the paper's rule); 'at_least': equal to it is enough")
    skeleton_threshold_rule: ThresholdRule | None = Field(
        default=None, description="the skeleton judge's own rule; None = `threshold_rule`. The paper revises a "
        "skeleton only when its score falls below theta_S: 'at_least'")
    architecture_criteria: ArchitectureCriteria = Field(
        default="projectgen", description="the architecture judge's criteria: 'paper' (its wording, circular "
        "dependencies and layering, a justification per criterion) or 'projectgen' (one reasons field)")
    skeleton_review: SkeletonReviewMode = Field(
        default="exact", description="'exact': an AST check against the tree, then the model; 'paper': the model "
        "scores directory structure and interface/call matching (0-10 each) and overall")
    stage_memory: MemoryForm = Field(
        default="raw", description="'distilled': one summarising call per architecture revision (feedback + diff -> "
        "a short summary), BM25 over the summaries; the skeleton and code stages keep theirs raw (the paper); "
        "'distilled-all': every stage's revisions summarised; 'raw': BM25 over the feedback and diff themselves")
    carry_reflections: bool = Field(
        default=False, description="Self-Reflection keeps a verbal reflection per round and passes all earlier "
        "ones forward (the baseline as LiveCoder runs it); off: one 'reflect and fix' call per round")
    feedback_suite: FeedbackSuite = Field(
        default="check", description="the tests whose output the code judge, Self-Reflection and the knowledge "
        "agent see: 'check' (visible; a task without check tests gets no execution feedback) or 'unit' (the "
        "hidden tests the score comes from, as LiveCoder does on benchmarks without visible tests; labelled in "
        "reports)")
    architecture_iterations: int = Field(default=3, ge=1, description="cap on architect revisions")
    skeleton_iterations: int = Field(default=3, ge=1, description="cap on skeleton revisions")
    code_iterations: int = Field(default=5, ge=1, description="cap on code rounds (first fill + repairs)")
    gamma: int = Field(default=2, ge=0, description="stage-memory entries a generator sees (BM25 top-gamma)")
    edit_format: EditFormat = Field(default="whole", description="how the coder answers repair requests")
    max_concurrency: int = Field(default=4, ge=1, description="model calls in flight during a fan-out")
    error_log_chars: int = Field(default=6000, ge=500, description="check-test log excerpt shown to the judge")
    retries: int = Field(default=3, ge=0, description="retries of a model call after a transient error")
    retry_backoff: float = Field(default=1.0, ge=0, description="seconds before the first retry (doubling, "
                                 "at most 30; a server's Retry-After can ask for longer)")
    max_reply_chars: int = Field(default=200_000, ge=1000, description="a longer model reply is cut to this "
                                 "many characters and the cut recorded (projectgen.llm.MAX_REPLY_CHARS)")

    def gateway_options(self) -> dict[str, Any]:
        """The `ModelGateway` fields these settings decide."""
        return {"retries": self.retries, "backoff": self.retry_backoff, "max_reply_chars": self.max_reply_chars}

    @classmethod
    def with_profile(cls, profile: Mapping[str, Any], settings: Settings | None = None) -> Settings:
        """`settings` with the fields it leaves unset taken from `profile` (a task's paper settings,
        `Task.settings_profile`): what a user sets always wins, and a field set nowhere keeps its default."""
        given = settings.model_dump(exclude_unset=True) if settings is not None else {}
        return cls(**{**profile, **given})

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        return profile_defaults(SETTINGS_PROFILES, data)

    def accepts(self, score: float, stage: str | None = None) -> bool:
        """Whether a judge's score of `stage` passes the threshold under the stage's threshold rule."""
        rule = (self.skeleton_threshold_rule if stage == "skeleton" else None) or self.threshold_rule
        return score > self.threshold if rule == "exceeds" else score >= self.threshold

    def cap(self, stage: str) -> int:
        """The iteration cap of `stage` ("architecture", "skeleton" or "code")."""
        return {"architecture": self.architecture_iterations, "skeleton": self.skeleton_iterations,
                "code": self.code_iterations}[stage]


ScoreSuite = Literal["check", "unit"]


class AttemptSettings(BaseModel):
    """LiveCoder's outer loop: attempts, what drives selection, and the paper's ablations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Profile = Field(default="projectgen", description="the named defaults the unset fields below take "
                             "(ATTEMPT_PROFILES); a run takes its pipeline settings' profile")
    attempts: int = Field(default=4, ge=1, description="attempts per task (the paper's A)")
    selection: ScoreSuite = Field(
        default="check", description="tests whose pass rate picks and reuses the best attempt: 'check' (visible) "
        "or 'unit' (the functional score, as the paper does: the `paper` profile's; labelled in reports)")
    knowledge_after_last: bool = Field(
        default=False, description="extract knowledge after the last attempt too (the paper updates K+/K- after "
        "every attempt); off: knowledge serves later attempts only, so the last one costs no extraction call")
    success_knowledge: bool = Field(default=True, description="extract and inject success knowledge")
    failure_knowledge: bool = Field(default=True, description="extract and inject failure knowledge")
    historical_best: bool = Field(default=True, description="keep the best repository; off = output the last attempt")
    warm_start: bool = Field(default=False, description="later attempts reuse the best attempt's tree and skeleton")
    knowledge_k: int = Field(default=3, ge=0, description="entries of each kind retrieved per attempt")
    full_score: float = Field(default=1.0, gt=0, le=1, description="a best at or above this is reused as is")
    measure_unit_tests: bool = Field(default=True, description="run the hidden unit tests of every attempt for "
                                     "reporting (never shown to the generators)")

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        return profile_defaults(ATTEMPT_PROFILES, data)
