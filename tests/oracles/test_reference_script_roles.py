"""`reference_script(task)` answers every role, so a scripted LiveCoder run lives past its first attempt."""
from __future__ import annotations

import json
from pathlib import Path

from projectgen.config import AttemptSettings
from projectgen.llm import ModelRoles, ScriptedChatModel
from projectgen.llm.roles import ROLES
from projectgen.oracles.reference_replay import Breakage, reference_script
from projectgen.runs import Run, RunParts
from projectgen.runs.request import RunRequest


def test_every_role_has_an_answer(task) -> None:
    answered = {entry.role for entry in reference_script(task).responses}
    assert set(ROLES) <= answered


def test_a_scripted_livecoder_run_reaches_its_second_attempt(task, runner, tmp_path: Path) -> None:
    script = reference_script(task, breakage=Breakage("kvstore/store.py", "_expired"))
    model = ScriptedChatModel.from_responses(script.model_dump(mode="json", exclude_none=True))
    request = RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=2))
    outcome = Run.open(request, tmp_path / "run", RunParts(models=ModelRoles(model), runner=runner)).run()
    assert outcome.summary["status"] == "finished"
    roles = {json.loads(line)["role"] for line in (tmp_path / "run" / "usage.jsonl").read_text().splitlines()}
    assert "knowledge" in roles
