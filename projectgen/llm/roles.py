"""The agent roles a model can serve, and the labels each model call carries.

The door (`projectgen.llm.door`) puts a call's `CallLabels` into the metadata of its
LangChain run config (keys ``META_*``); the scripted and fault-injecting models read them
back to know who is asking, and the call's record and call-cache key are made of them.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

# The roles of the project graph's agents (the fields of `projectgen.agents.Agents`), then LiveCoder's,
# then the baselines' (`projectgen.runs.methods`: the one-call generator of `direct` and `self-reflection`),
# then the stage-memory summariser's.
STAGE_ROLES: tuple[str, ...] = ("architect", "architecture_judge", "skeleton", "skeleton_judge", "coder", "code_judge")
KNOWLEDGE_ROLE = "knowledge"
DIRECT_ROLE = "direct"
# The stage-memory summariser (`projectgen.agents.summarizer`), called per revision with distilled memory.
MEMORY_ROLE = "memory_summary"
# The stage of Self-Reflection's verbal reflection (the direct role's call before its fix, when reflections are
# carried): a replay answers it apart from the fix by it.
NOTES_STAGE = "self_reflection_notes"
ROLES: tuple[str, ...] = (*STAGE_ROLES, KNOWLEDGE_ROLE, DIRECT_ROLE, MEMORY_ROLE)
# LiveRepoReflection's one agent (`projectgen.protocols.reflection.coder`): not a role of the project graph's runs,
# so not in ROLES (those runs give each of ROLES a model); its calls carry it like any other role.
REFLECTION_ROLE = "reflection"
# SR-Eval's multi-turn writer (`projectgen.protocols.refinement.refiner`) and the stage its calls are labelled with: like
# REFLECTION_ROLE, a role of its own protocol's runs only.
REFINER_ROLE = "refiner"
REFINEMENT_STAGE = "refinement"
# An external system's calls through the model bridge (`projectgen.bridge`, `projectgen.external`): like
# REFLECTION_ROLE, not a role of the project graph's runs; the stage is the system's name.
EXTERNAL_ROLE = "external"
# Not a model's role: the judge named on a person's rejection in a review (`projectgen.graphs.review`). It goes
# to the generator like a judge's feedback but has no score, so summaries and the trace keep it apart.
HUMAN_JUDGE = "human"
META_ROLE = "projectgen_role"
META_STAGE = "projectgen_stage"
META_TARGET = "projectgen_target"
META_ITERATION = "projectgen_iteration"
META_ATTEMPT = "projectgen_attempt"


@dataclass(frozen=True)
class CallLabels:
    """Who is asking: the agent role, the pipeline stage, the file or item (target), the stage
    iteration, and LiveCoder's attempt (which comes in the caller's run-config metadata)."""

    role: str
    stage: str
    target: str | None = None
    iteration: int = 0
    attempt: int | None = None

    def in_run(self, config: Mapping[str, Any] | None) -> tuple[CallLabels, dict[str, Any]]:
        """These labels completed by the caller's run config (which may name the attempt), and that
        config with the labels added to its metadata."""
        attempt = self.attempt
        if attempt is None and (named := (config or {}).get("metadata", {}).get(META_ATTEMPT)) is not None:
            attempt = int(named)
        labels = replace(self, attempt=attempt)
        return labels, labels.run_config(config)

    def run_config(self, config: Mapping[str, Any] | None) -> dict[str, Any]:
        """The caller's run config with these labels added to its metadata (and a run name)."""
        merged = dict(config or {})
        metadata = dict(merged.get("metadata") or {})
        metadata.update({META_ROLE: self.role, META_STAGE: self.stage, META_ITERATION: self.iteration})
        if self.attempt is not None:
            metadata[META_ATTEMPT] = self.attempt
        if self.target is not None:
            metadata[META_TARGET] = self.target
        merged["metadata"] = metadata
        merged.setdefault("run_name", f"{self.stage}:{self.role}")
        return merged
