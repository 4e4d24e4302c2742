"""`RunRequest`: what a run is asked to do, exactly as run.json stores it.

The CLI and the Python API build the same object (`RunRequest.for_task`), and the library checks it
once (`check`: the method and its review stages, the suite that selection needs, the knowledge-store,
checkpoint and price options, the embedding) before a run folder is made. A resume reads it back from
run.json (`RunManifest` is the request plus the run's id and how it ended): nothing it fixes can be
asked otherwise.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, PrivateAttr

from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.specs import REFERENCE_SPEC
from projectgen.runs.checkpoints import check_checkpoint_url
from projectgen.runs.methods import DEFAULT_METHOD, check_review, method_attempt_settings

if TYPE_CHECKING:
    from projectgen.datasets.task import Task


class RunRequest(BaseModel):
    """What a run is asked to do: the task, the method, the models per role, the settings, sampling, the
    knowledge store and its embedding, review and budgets."""

    task_path: str
    task_id: str
    method: str = Field(default=DEFAULT_METHOD, description="the method run (projectgen.runs.METHODS), 'evolve', or "
                        "a protocol ('reflect', 'refine'); older run.json files without it ran LiveCoder")
    custom_graph: list[str] | None = Field(default=None, description="the top-level nodes of the caller's own "
                                           "project graph (RunParts' project_graph or stages), when the "
                                           "attempts ran it instead of the method's; a resume needs the same graph")
    custom_method: dict[str, str] | None = Field(
        default=None, description="the user's method the run is an arm of (an experiment's --method "
        "package.module:factory): its name, base method, spec and its module file's sha256; a resume with other "
        "code is refused (projectgen.experiments.custom_arms)")
    models: dict[str, str] = Field(default_factory=dict, description="role -> spec string, when known")
    model_label: str | None = Field(default=None, description="what the models are when they are not models: "
                                    "'reference replay (oracle, not a model)' for the spec 'reference'")
    sampling: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="role -> the temperature, top_p and max_tokens its model was made with "
        "(projectgen.llm.sampling; empty for a replay)")
    settings: Settings = Field(default_factory=Settings)
    attempt_settings: AttemptSettings = Field(default_factory=AttemptSettings)
    protocol: dict[str, Any] = Field(default_factory=dict, description="a protocol run's own setting (reflect: "
                                     "edit format and tries; refine: strategy and context)")
    knowledge_store: str | None = Field(default=None, description="Chroma server URL; None = embedded in the run")
    embedding: str | None = Field(default=None, description="the knowledge store's embedding: a name of "
                                  "projectgen.memory.EMBEDDINGS, or 'custom' for an Embeddings object given from "
                                  "Python (a resume must be given it again); None (run.json files written before "
                                  "it was recorded) = 'hashing', the only one there was")
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    prices_file: str | None = Field(default=None, description="price file over the list prices, for the cost budget")
    checkpoint_url: str | None = Field(default=None, description="PostgreSQL URL; None = checkpoints.sqlite in the run")
    review: list[str] = Field(default_factory=list, description="the stages whose output waits for a person's "
                              "decision (run --review; projectgen.graphs.review)")

    _task: Task | None = PrivateAttr(default=None)  # the Task it was built for (else loaded from task_path)

    @classmethod
    def for_task(cls, task: Task, *, method: str = DEFAULT_METHOD, models: Mapping[str, str] | None = None,
                 settings: Settings | None = None, attempt_settings: AttemptSettings | None = None,
                 knowledge_store: str | None = None, embedding: str | None = None, max_tokens: int | None = None,
                 max_cost_usd: float | None = None, prices_file: Path | str | None = None,
                 checkpoint_url: str | None = None, review: Sequence[str] | str = ()) -> RunRequest:
        """The request to run `method` on `task`: its settings over the task's profile, the method's attempt
        settings under the ones given, the label of a reference replay; checked (`check`)."""
        from projectgen.graphs.review import check_review_stages

        specs = dict(models or {})
        settings = Settings.with_profile(task.settings_profile, settings)
        if REFERENCE_SPEC in specs.values():  # the oracle's replies are known: the cap fits the longest
            from projectgen.oracles.reference_replay import oracle_reply_cap

            settings = settings.model_copy(
                update={"max_reply_chars": oracle_reply_cap(task, settings.max_reply_chars)})
        request = cls(task_path=str(task.load_path()), task_id=task.id, method=method, models=specs,
                      model_label=REFERENCE_LABEL if REFERENCE_SPEC in specs.values() else None,
                      settings=settings,
                      attempt_settings=method_attempt_settings(method, attempt_settings, settings.profile),
                      knowledge_store=knowledge_store, embedding=embedding, max_tokens=max_tokens,
                      max_cost_usd=max_cost_usd, prices_file=str(Path(prices_file).resolve()) if prices_file else None,
                      checkpoint_url=checkpoint_url, review=list(check_review_stages(review)))
        request._task = task
        request.check(task)
        return request

    def task(self) -> Task:
        """The task: the one the request was built for, else the folder run.json names (which must exist)."""
        if self._task is None:
            from projectgen.datasets.loaders import load_task

            if not Path(self.task_path).exists():
                raise ProjectGenError(f"the run's task folder {self.task_path} is gone; put it back to resume")
            self._task = load_task(Path(self.task_path))
        return self._task

    def check(self, task: Task) -> None:
        """Everything a run of this request needs that can be checked before its folder is made: the method
        and its review stages, the suite that scores attempts, the knowledge-store and checkpoint URLs, the
        price file, the embedding's package."""
        check_review(self.method, tuple(self.review))
        selection = self.attempt_settings.selection
        if task.role_suite(selection) not in task.suites:  # "unit" is the task's scored suite (RAL-Bench: functional)
            raise ProjectGenError(f"task {task.id!r} has no {selection} tests, which score its attempts "
                                  f"(--selection {selection}); it has: {', '.join(task.suites) or 'no tests'}")
        check_options(knowledge_store=self.knowledge_store, checkpoint_url=self.checkpoint_url,
                      prices_file=self.prices_file, embedding=self.embedding)


def check_options(*, knowledge_store: str | None = None, checkpoint_url: str | None = None,
                  prices_file: str | Path | None = None, embedding: str | None = None) -> None:
    """The options a batch or a run is given that name something outside it, refused before anything is
    written: a Chroma server URL, a PostgreSQL URL, a price file, an embedding name (and its package)."""
    check_checkpoint_url(checkpoint_url)
    if knowledge_store:
        from projectgen.memory.knowledge_store import parse_server_url

        parse_server_url(knowledge_store)
    if prices_file:
        from projectgen.llm.pricing import PriceTable

        PriceTable.from_file(prices_file)  # a missing or malformed file is an error even without --max-cost
    if embedding is not None and embedding != "custom":
        from projectgen.memory.embedding_models import make_embeddings

        make_embeddings(embedding)  # an unknown name or a missing package
