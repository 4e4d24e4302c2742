"""One test run of a task in a language other than Python: a sandboxed session, read back as a `TestReport`.

The workspace is filled as for pytest (`workspace.copy_candidate`, then the task's files over it);
the test files get every test switched on (`LanguagePlan.enable_all_tests`) and are bound read-only.
The steps are the language's build and test steps (`plans`), then a last step of ours that prints
the report file to its own output pipe (capped at `REPORT_CAP`): the report is read only after the
test step ended and the launcher killed everything it left, never from the host's disk (the code
under test cannot reach the host's side of that pipe). What the report says is still the code
under test's to forge: it runs in the test framework's process (docs/sandbox.md, "What remains").

A build that fails counts every test of every test file as failed, with the compiler's message
(a `CollectionError` per test file, which `expectations.score_report` counts as the failure of each
of the file's expected tests); so does a test file the report says nothing about.
"""
from __future__ import annotations

from pathlib import Path

from projectgen.datasets.task import SuiteName, Task
from projectgen.evaluation.languages.dependencies import (
    DependencyError,
    check_crates,
    prepare_go_modules,
    prepare_node_modules,
)
from projectgen.evaluation.languages.plans import PLANS, LanguagePlan, Parsed, RunContext, report_name
from projectgen.evaluation.languages.toolchains import GO, JAVASCRIPT, RUST, Toolchain
from projectgen.evaluation.protected_paths import ProtectedPaths
from projectgen.evaluation.report import CollectionError, TestReport
from projectgen.evaluation.sandbox import Containment, Limits, RunCgroup
from projectgen.evaluation.sandbox_session import (
    FINISHED,
    TIMED_OUT,
    SessionFolder,
    SessionResult,
    Step,
    StepResult,
    run_session,
)
from projectgen.evaluation.workspace import Candidate, copy_candidate, copy_task_files

REPORT_CAP = 16 * 1024**2
REPORT_TIMEOUT = 60.0


def evaluate_in_language(task: Task, candidate: Candidate, suite: SuiteName, *, toolchain: Toolchain,
                         containment: Containment, limits: Limits, timeout: float, cache: Path,
                         workdir: Path | None, keep_workspace: bool) -> TestReport:
    """Run `suite` of `task` (in `task.language`) against `candidate` in one sandboxed session."""
    plan = PLANS[task.language]
    if not toolchain.ready:
        return TestReport(task_id=task.id, suite=suite, error=toolchain.not_ready_reason(),
                          isolation=containment.isolation)
    folder = SessionFolder.create(workdir, task.id)
    try:
        return _run(plan, task, candidate, suite, folder, toolchain, containment, limits, timeout, cache)
    finally:
        if not keep_workspace:
            folder.remove()


def _run(plan: LanguagePlan, task: Task, candidate: Candidate, suite: SuiteName, folder: SessionFolder,
         toolchain: Toolchain, containment: Containment, limits: Limits, timeout: float, cache: Path) -> TestReport:
    tests = tuple(task.suite(suite).paths)
    isolation = containment.isolation
    project = task.env.source_root or ""
    _fill(folder, task, candidate, suite, plan)
    try:
        dependencies = _dependencies(task.language, toolchain, cache, folder.workspace / project)
    except DependencyError as exc:
        return TestReport(task_id=task.id, suite=suite, install_error=str(exc), output_tail=str(exc),
                          isolation=isolation)
    report = folder.tmp / "reports" / report_name(task.language)
    ctx = RunContext(workspace=folder.workspace, project=project, test_files=tests, toolchain=toolchain,
                     home=folder.home, tmp=folder.tmp, report=str(report), timeout=timeout,
                     test_sources={rel: (task.root / rel).read_text(encoding="utf-8", errors="replace")
                                   for rel in tests if (task.root / rel).is_file()},
                     dependencies=dependencies)
    steps = plan.steps(ctx)
    steps[-1] = _with_report_folder(steps[-1], report.parent)
    steps.append(Step("report", ["head", "-c", str(REPORT_CAP + 1), "--", str(report)],
                      ctx.env(), REPORT_TIMEOUT, output_keep=REPORT_CAP + 1))
    binds = tuple(dict.fromkeys([*toolchain.binds, *([str(dependencies)] if dependencies else [])]))
    cgroup = RunCgroup.create(limits) if containment.cgroups else None
    try:
        # the workspace was filled above (dependencies read it); the launcher copies it in
        session = run_session(containment, folder, binds, limits, steps, cgroup)
    finally:
        if cgroup:
            cgroup.remove()
    if session.setup_error:
        return TestReport(task_id=task.id, suite=suite, error=f"the sandbox could not be set up: "
                          f"{session.setup_error}", isolation=isolation)
    return _report(plan, ctx, task, suite, session, isolation)


def _with_report_folder(step: Step, reports: Path) -> Step:
    """The test step, preceded by making the report's folder (in the private temp folder)."""
    argv = list(step.argv)
    if argv[:2] == ["/bin/sh", "-c"]:
        argv[2] = f"mkdir -p '{reports}' || exit 125\n{argv[2]}"
    return Step(step.name, argv, step.env, step.timeout, step.channel, step.stop_on_failure, step.output_keep)


def _fill(folder: SessionFolder, task: Task, candidate: Candidate, suite: SuiteName, plan: LanguagePlan) -> None:
    """The candidate, then the task's files; every test switched on; the test files protected."""
    workspace = folder.workspace
    copy_candidate(workspace, candidate, ProtectedPaths.of(task))
    copy_task_files(task.root, workspace, [*task.required_files, *task.suite_files(suite)])
    tests = list(task.suite(suite).paths)
    for rel in tests:
        path = workspace / rel
        if path.is_file():
            path.write_text(plan.enable_all_tests(path.read_text(encoding="utf-8", errors="replace")),
                            encoding="utf-8")
    folder.protect_list.write_text("\n".join(tests) + "\n", encoding="utf-8")


def _dependencies(language: str, toolchain: Toolchain, cache: Path, project_dir: Path) -> Path | None:
    if language == JAVASCRIPT:
        return prepare_node_modules(cache, toolchain, project_dir)
    if language == GO:
        return prepare_go_modules(cache, toolchain, project_dir)
    if language == RUST:
        check_crates(project_dir)
    return None


def _report(plan: LanguagePlan, ctx: RunContext, task: Task, suite: SuiteName, session: SessionResult,
            isolation: str) -> TestReport:
    steps = session.steps
    printed, tested = steps[-1], steps[-2]
    failed_build = next((s for s in steps[:-2] if s.stop != FINISHED or s.exit_status != 0), None)
    output = "\n".join(s.output.text().strip() for s in steps[:-1] if s.output.text().strip())
    if failed_build is not None:
        why = "timed out" if failed_build.stop == TIMED_OUT else f"exit status {failed_build.exit_status}"
        message = f"the build failed ({why}):\n{failed_build.output.text().strip()}"
        parsed = Parsed([], {rel: message for rel in ctx.test_files})
        ran = failed_build
    else:
        ran = tested
        text = printed.output.text() if printed.stop == FINISHED and printed.exit_status == 0 else ""
        if printed.output.total > REPORT_CAP:
            text = ""
        parsed = plan.results(ctx, text) if text else Parsed([])
        reported = {test.nodeid.split("::", 1)[0] for test in parsed.tests}
        said = tested.output.text().strip()[-3000:]
        unreported = {rel: f"no test of this file reported an outcome: {_ending(tested)}\n{said}"
                      for rel in ctx.test_files if rel not in reported and rel not in parsed.broken}
        parsed = Parsed(parsed.tests, {**{rel: f"{why}\n{said}" for rel, why in parsed.broken.items()},
                                       **unreported})
    return TestReport(
        task_id=task.id, suite=suite, tests=parsed.tests,
        collection_errors=[CollectionError(nodeid=rel, message=message) for rel, message in parsed.broken.items()],
        collected=len(parsed.tests), collected_ids=[test.nodeid for test in parsed.tests],
        exit_status=ran.exit_status if ran.stop == FINISHED else None, timed_out=ran.stop == TIMED_OUT,
        output_tail=output[-6000:], isolation=isolation)


def _ending(step: StepResult) -> str:
    if step.stop == TIMED_OUT:
        return "the tests timed out"
    return f"the test step ended ({step.stop}, exit status {step.exit_status})"
