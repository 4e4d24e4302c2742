"""SR-Eval's seed filters: the target function's body length, its dependencies on the code around it (repository
level: intra-file ones only), the reference passing its tests in the sandbox, and (when asked) the contamination
check: one probe per model, the union of their verdicts deciding."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from projectgen.agents.base import ModelGateway
from projectgen.construction.execution import execute
from projectgen.datasets.multiturn import TESTS_DIR
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents, ContaminationProbe
from projectgen.protocols.multiturn_construction.requirements import Record
from projectgen.protocols.multiturn_construction.dependencies import dependencies, dependency_reason
from projectgen.protocols.multiturn_construction.seeds import TaskSeed, body_lines, target_function, with_function_of
from projectgen.protocols.multiturn_construction.settings import CONTAMINATION_RULE, ConstructionSettings
from projectgen.protocols.multiturn_construction.turns import failing_summary

if TYPE_CHECKING:
    from projectgen.evaluation import SandboxRunner


async def filter_seed(seed: TaskSeed, agents: ConstructionAgents, gateway: ModelGateway, runner: SandboxRunner,
                      settings: ConstructionSettings, record: Record) -> str:
    """Why SR-Eval's seed filters drop `seed` ("" when it is kept): its target function's body must have at least
    `min_function_lines` code lines; at repository level the function must use the code around it in its own file
    and nothing of the repository's other files (a self-contained function is function-level material; a cross-file
    one is dropped as the paper drops it); its reference must pass its tests; and (when asked) no probe model shown
    only the function's signature and docstring may pass them (else the seed is taken as leaked into a model's
    training data)."""
    reference = seed.reference()
    if target_function(reference, seed.function) is None:
        reason = f"{seed.target} defines no function {seed.function!r}"
        record("seed_filter", seed=seed.id, filter="length", kept=False, reason=reason)
        return reason
    lines = body_lines(reference, seed.function)
    if lines < settings.min_function_lines:
        reason = (f"{seed.target}: {seed.function}'s body has {lines} code line(s), fewer than "
                  f"{settings.min_function_lines}")
        record("seed_filter", seed=seed.id, filter="length", kept=False, reason=reason, body_lines=lines)
        return reason
    if seed.level == "repository":
        found = dependencies(seed)
        reason = dependency_reason(seed, found)
        record("seed_filter", seed=seed.id, filter="dependencies", kept=not reason, found=found,
               reason=reason)
        if reason:
            return reason
    tests = {f"{TESTS_DIR}/{path}": text for path, text in seed.tests().items()}
    run = execute(runner, seed.task(), seed.candidate(reference), tests)
    record("seed_filter", seed=seed.id, filter="reference", kept=run.all_passed, passed=run.passed, total=run.total,
           anomaly=run.anomaly)
    if not run.all_passed:
        return f"the reference does not pass its tests ({run.passed}/{run.total}): {failing_summary(run)}"
    if settings.contamination:
        return await contamination_check(seed, agents.contamination, gateway, runner, tests, record)
    return ""


async def contamination_check(seed: TaskSeed, probes: Sequence[ContaminationProbe], gateway: ModelGateway,
                              runner: SandboxRunner, tests: Mapping[str, str], record: Record) -> str:
    """Why the seed is taken as leaked ("" when not): SR-Eval shows three models only the function's signature and
    docstring and drops the seed when any of them writes code that passes its tests (the union; at repository level
    the function is tested in its file, `probe_candidate`). Every probe is asked, so each model's verdict is on the
    record, not only the first leak's."""
    verdicts = []
    for iteration, probe in enumerate(probes, start=1):
        code = await probe.complete(gateway, seed, iteration=iteration)
        run = execute(runner, seed.task(), probe_candidate(seed, code), tests)
        verdicts.append({"model": probe.name, "leaked": run.all_passed, "passed": run.passed, "total": run.total,
                         "anomaly": run.anomaly})
    leaked = [verdict["model"] for verdict in verdicts if verdict["leaked"]]
    record("seed_filter", seed=seed.id, filter="contamination", kept=not leaked, rule=CONTAMINATION_RULE,
           verdicts=verdicts)
    if not leaked:
        return ""
    return (f"leaked: code written from the signature and docstring alone by {', '.join(leaked)} passes the "
            f"reference tests ({len(leaked)} of {len(verdicts)} probe model(s))")


def probe_candidate(seed: TaskSeed, code: str) -> dict[str, str]:
    """What a probe's code is tested as: at function level the module it wrote; at repository level its function in
    the reference file in place of the reference's (DevEval's in-place completion, as refine places a turn's answer),
    so a probe that calls its file's helpers, as a model that saw the repository would, runs with them. A reply
    without the function is tested as the whole file."""
    if seed.level != "repository":
        return seed.candidate(code)
    return seed.candidate(with_function_of(seed.reference(), code, seed.function))
