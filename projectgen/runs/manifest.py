"""run.json: what a LiveCoder run folder holds a run of, and the budgets it asked for.

Written first (so a killed run can be resumed) and again when the run ends (its status and
why); `read_manifest` turns a missing or unreadable file into one line for the user.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.llm import Budget, UsageRecorder
from projectgen.runs import layout


# Changes when a field of run.json changes meaning or goes away (a new field with a default does not).
MANIFEST_SCHEMA_VERSION = 1


class RunManifest(BaseModel):
    """What a run folder holds a run of; written first, read on resume."""

    schema_version: int = Field(default=MANIFEST_SCHEMA_VERSION, description="run.json's schema version; a file "
                                "written before it was recorded reads as 1 (every later field has a default)")
    run_id: str
    task_path: str
    task_id: str
    method: str = Field(default="livecoder", description="the method run (projectgen.runs.METHODS); older "
                        "run.json files without it ran LiveCoder")
    custom_graph: list[str] | None = Field(default=None, description="the top-level nodes of the caller's own "
                                           "project graph (run_livecoder's project_graph or stages), when the "
                                           "attempts ran it instead of the method's; a resume needs the same graph")
    models: dict[str, str] = Field(default_factory=dict, description="role -> spec string, when known")
    model_label: str | None = Field(default=None, description="what the models are when they are not models: "
                                    "'reference replay (oracle, not a model)' for the spec 'reference'")
    sampling: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="role -> the temperature, top_p and max_tokens its model was made with "
        "(projectgen.llm.sampling; empty for a replay)")
    settings: dict[str, Any] = Field(default_factory=dict)
    attempt_settings: dict[str, Any] = Field(default_factory=dict)
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
    status: str = Field(default="running", description="running, finished, interrupted, budget-limited, failed, "
                        "or awaiting-review (paused for a person's decision: projectgen review DIR)")
    reason: str | None = Field(default=None, description="why the run stopped early (one line), if it did")


def write_manifest(out_dir: Path, manifest: RunManifest) -> None:
    write_atomic(Path(out_dir) / layout.MANIFEST, manifest.model_dump_json(indent=1) + "\n")


def read_manifest(out_dir: Path) -> RunManifest:
    path = Path(out_dir) / layout.MANIFEST
    if not path.is_file():
        raise ProjectGenError(f"{out_dir}: not a run folder (no {layout.MANIFEST})")
    try:
        return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        problem = error["msg"] if error["type"] == "json_invalid" else f"{where or 'top level'}: {error['msg']}"
        raise ProjectGenError(f"{path}: not a readable run manifest ({problem})") from None
    except UnicodeDecodeError as exc:
        raise ProjectGenError(f"{path}: not a readable run manifest (not valid UTF-8 at byte {exc.start})") from None
    except OSError as exc:
        raise ProjectGenError(f"{path}: cannot read the run manifest ({exc.strerror or exc})") from None


def run_budget(manifest: RunManifest, earlier: UsageRecorder | None = None) -> Budget | None:
    """The token and cost budgets run.json asks for, already charged with the calls in `earlier`."""
    from projectgen.llm import AllBudgets, CostBudget, TokenBudget

    calls = earlier.records if earlier is not None else []
    budgets: list[Budget] = []
    if manifest.max_tokens:
        budgets.append(TokenBudget(manifest.max_tokens, used=sum(c.total_tokens for c in calls)))
    if manifest.max_cost_usd is not None:
        from projectgen.llm.pricing import PriceTable

        prices = PriceTable.from_file(manifest.prices_file) if manifest.prices_file else PriceTable.default()
        budgets.append(CostBudget(manifest.max_cost_usd, prices, spent=prices.total(calls).value or 0.0))
    if len(budgets) > 1:
        return AllBudgets(*budgets)
    return budgets[0] if budgets else None
