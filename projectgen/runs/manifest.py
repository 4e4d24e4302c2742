"""run.json: what a run folder holds a run of (its `RunRequest`), its id and how it ended.

Written first (so a killed run can be resumed) and again when the run ends (its status and
why); `parse_manifest` (behind `RunFolder.read_manifest`) turns a missing or unreadable file into one line for the user.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from projectgen.errors import ProjectGenError
from projectgen.llm import AllBudgets, Budget, CostBudget, TokenBudget, UsageRecorder
from projectgen.runs.request import RunRequest


# Changes when a field of run.json changes meaning or goes away (a new field with a default does not).
MANIFEST_SCHEMA_VERSION = 1


class RunManifest(RunRequest):
    """run.json: the run's request, its id, and how it stands; written first, read on resume."""

    schema_version: int = Field(default=MANIFEST_SCHEMA_VERSION, description="run.json's schema version; a file "
                                "written before it was recorded reads as 1 (every later field has a default)")
    run_id: str
    status: str = Field(default="running", description="running, finished, interrupted, budget-limited, failed, "
                        "or awaiting-review (paused for a person's decision: projectgen review DIR)")
    reason: str | None = Field(default=None, description="why the run stopped early (one line), if it did")
    pid: int | None = Field(default=None, description="the process that last wrote the status")

    def request(self) -> RunRequest:
        """The request alone (what a batch unit compares with the one it is given)."""
        return RunRequest.model_validate(self.model_dump(include=set(RunRequest.model_fields)))


def parse_manifest(path: Path, out_dir: Path) -> RunManifest:
    """The run.json at `path` (of the run folder `out_dir`); a missing or unreadable file is one line."""
    if not path.is_file():
        raise ProjectGenError(f"{out_dir}: not a run folder (no {path.name})")
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
