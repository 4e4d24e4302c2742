"""One test run of a task in a language other than Python: a sandboxed session, read back as a `TestReport`.

The workspace is filled as for pytest (`workspace.copy_candidate`, then the task's files over it);
the test files (a suite's folder stands for the files below it that the language's tests end with)
get every test switched on (`LanguagePlan.enable_all_tests`) and are bound read-only, with a canary
beside them where the language allows (`LanguagePlan.canary`: a test that must fail, under a random
name). The steps are the language's build and test steps (`plans`), then a last step of ours that
prints the report file to its own output pipe (capped at `REPORT_CAP`). The report lives in a folder
of the private temp folder that the test step makes under a random name before anything of the
candidate runs (a folder already there stops the step), and is read only after the test step ended
and the launcher killed everything it left, only when it is a regular file (no link, FIFO or device),
never from the host's disk: a report the candidate ships or writes in a known place is never read.
What the report says is still the code under test's to forge while it runs, in the test framework's
process (docs/sandbox.md, "What remains"); a canary that passes, or is missing from a report in which
every test passed, marks the run tampered, and then no test counts as passed; so does a twin planted in
the test files (`planting`) that passes or goes missing, and twins are taken out of the report and of
the output a model is shown.

A build that fails counts every test of every test file as failed, with the compiler's message
(a `CollectionError` per test file, which `expectations.score_report` counts as the failure of each
of the file's expected tests); so does a test file the report says nothing about.
"""
from __future__ import annotations

import secrets
from pathlib import Path

from projectgen.datasets.task import SuiteName, Task
from projectgen.evaluation.languages.dependencies import (
    DependencyError,
    check_crates,
    check_java_packages,
    prepare_go_modules,
    prepare_node_modules,
)
from projectgen.evaluation.languages.plans import (NEXT_REPORT, PLANS, LanguagePlan, LanguageRun, Parsed, report_name,
                                                  report_names)
from projectgen.evaluation.languages.planting import planted_names, planted_problem
from projectgen.evaluation.languages.reports import declares_tests
from projectgen.evaluation.languages.toolchains import GO, JAVA, JAVASCRIPT, RUST, Toolchain
from projectgen.evaluation.planted_tests import Planting
from projectgen.evaluation.protected_paths import ProtectedPaths, suite_mounts
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.evaluation.results_channel import canary_problem
from projectgen.evaluation.sandbox import Containment, Limits, RunCgroup
from projectgen.evaluation.sandbox_session import (
    FINISHED,
    TIMED_OUT,
    SessionFolder,
    SessionResult,
    Step,
    StepResult,
    run_session,
    steps_usage,
    with_suite_problem,
)
from projectgen.evaluation.stable_output import (ENVIRONMENT, SESSION, WORKSPACE, StablePaths, stable_text,
                                                 without_identity_hashes)
from projectgen.evaluation.workspace import Candidate, copy_candidate, copy_task_files

REPORT_CAP = 16 * 1024**2
REPORT_TIMEOUT = 60.0


def evaluate_in_language(task: Task, candidate: Candidate, suite: SuiteName, *, toolchain: Toolchain,
                         containment: Containment, limits: Limits, timeout: float, cache: Path,
                         workdir: Path | None, keep_workspace: bool, planting: Planting | None = None) -> TestReport:
    """Run `suite` of `task` (in `task.language`) against `candidate` in one sandboxed session, with `planting`'s
    twins in the test files (`languages.planting.plan_twins`; made from `suite_sources`)."""
    plan = PLANS[task.language]
    planting = planting or Planting()
    if not toolchain.ready:
        return TestReport(task_id=task.id, suite=suite, error=toolchain.not_ready_reason(),
                          isolation=containment.isolation)
    folder = SessionFolder.create(workdir, task.id)
    try:
        return _run(plan, task, candidate, suite, folder, toolchain, containment, limits, timeout, cache, planting)
    finally:
        if not keep_workspace:
            folder.remove()


def suite_test_files(task: Task, suite: SuiteName, plan: LanguagePlan) -> tuple[str, ...]:
    """The test files of `suite`: its files that end like the language's test files (a Java suite
    `src/test/java` is its `.java` files). Another file a suite names (a Rust exercise lists its
    `Cargo.toml` among its test files) is put in place with the suite but is no test target: run as one,
    `cargo test --lib` found no test in it and the exercise lost a test it passes."""
    return tuple(rel for rel in task.suite_files(suite) if rel.endswith(plan.test_suffixes))


def suite_sources(task: Task, suite: SuiteName, plan: LanguagePlan) -> dict[str, str]:
    """The text of each test file of `suite` as it runs: every test switched on (`enable_all_tests`)."""
    return {rel: plan.enable_all_tests((task.root / rel).read_text(encoding="utf-8", errors="replace"))
            for rel in suite_test_files(task, suite, plan) if (task.root / rel).is_file()}


def _run(plan: LanguagePlan, task: Task, candidate: Candidate, suite: SuiteName, folder: SessionFolder,
         toolchain: Toolchain, containment: Containment, limits: Limits, timeout: float, cache: Path,
         planting: Planting) -> TestReport:
    tests = suite_test_files(task, suite, plan)
    isolation = containment.isolation
    project = task.env.source_root or ""
    sources = {**suite_sources(task, suite, plan), **planting.modules}  # the twins in their files
    word = secrets.token_hex(6)
    made = plan.canary(word, sources, project)
    canary = made[0] if made else ""
    _fill(folder, task, candidate, suite, plan, sources, (canary, made[1]) if made else None)
    try:
        dependencies = _dependencies(task.language, toolchain, cache, folder.workspace / project)
    except DependencyError as exc:
        return TestReport(task_id=task.id, suite=suite, install_error=str(exc), output_tail=str(exc),
                          isolation=isolation)
    report = folder.tmp / f"r{secrets.token_hex(12)}" / report_name(task.language)
    ctx = LanguageRun(workspace=folder.workspace, project=project, test_files=tests, toolchain=toolchain,
                     home=folder.home, tmp=folder.tmp, report=str(report), timeout=timeout,
                     test_sources={**sources, **({canary: made[1]} if made else {})},
                     dependencies=dependencies, canary=canary)
    steps = plan.steps(ctx)
    steps[-1] = _with_report_folder(steps[-1], report.parent)
    others = [str(report.parent / name) for name in report_names(task.language)[1:]]
    steps.append(Step("report", ["/bin/sh", "-c", _PRINT_REPORT, "report", str(REPORT_CAP + 1), str(report), *others],
                      ctx.env(), REPORT_TIMEOUT, output_keep=REPORT_CAP + 1))
    binds = tuple(dict.fromkeys([*toolchain.binds, *([str(dependencies)] if dependencies else [])]))
    cgroup = RunCgroup.create(limits) if containment.cgroups else None
    cpu_limit = cgroup.cpu_limit() if cgroup else None
    try:
        # the workspace was filled above (dependencies read it); the launcher copies it in
        session = run_session(containment, folder, binds, limits, steps, cgroup)
    finally:
        if cgroup:
            cgroup.remove()
    if session.setup_error:
        return TestReport(task_id=task.id, suite=suite, error=f"the sandbox could not be set up: "
                          f"{session.setup_error}", isolation=isolation)
    report = _stable(_report(plan, ctx, task, suite, session, isolation, word if made else "", planting),
                     StablePaths.of([(folder.workspace, WORKSPACE), (folder.root, SESSION),
                                     *([(dependencies, ENVIRONMENT)] if dependencies else [])]))
    report.usage = steps_usage(session.steps[:-1], cpu_limit)  # the build and the tests, not our report step
    return with_suite_problem(report, session.suite_problem)


def _stable(report: TestReport, paths: StablePaths) -> TestReport:
    """`report`'s messages and output as a model is shown them, the same for every run of the same candidate
    (`stable_output`: fixed paths, no addresses, identity hash codes or summary timings)."""
    def shown(text: str) -> str:
        return without_identity_hashes(stable_text(text, paths))

    return report.model_copy(update={
        "tests": [test.model_copy(update={"message": shown(test.message)}) for test in report.tests],
        "collection_errors": [error.model_copy(update={"message": shown(error.message)})
                              for error in report.collection_errors],
        "output_tail": shown(report.output_tail)})


# The report step: the report only when it is a regular file (not a link, FIFO or device), capped.
_PRINT_REPORT = ('cap=$1; shift\n'
                 '[ -f "$1" ] && [ ! -L "$1" ] || { echo "no regular report file" >&2; exit 3; }\n'
                 'head -c "$cap" -- "$1" || exit 3; shift\n'
                 'for f in "$@"; do\n'
                 '  [ -e "$f" ] || [ -L "$f" ] || continue\n'
                 '  [ -f "$f" ] && [ ! -L "$f" ] || { echo "no regular report file" >&2; exit 3; }\n'
                 f"  printf '\\n%s\\n' '{NEXT_REPORT}'; head -c \"$cap\" -- \"$f\" || exit 3\n"
                 'done')
"""Prints the report files a test step wrote, each a regular file (never a link), the first required and the
others (another engine's, e.g. JUnit Vintage's) when present, separated by `NEXT_REPORT`."""


def _with_report_folder(step: Step, reports: Path) -> Step:
    """The test step, preceded by making the report's folder, fresh (mkdir fails on one already there)."""
    argv = list(step.argv)
    if argv[:2] == ["/bin/sh", "-c"]:
        argv[2] = f"mkdir -m 700 '{reports}' || exit 125\n{argv[2]}"
    return Step(step.name, argv, step.env, step.timeout, step.channel, step.stop_on_failure, step.output_keep)


def _fill(folder: SessionFolder, task: Task, candidate: Candidate, suite: SuiteName, plan: LanguagePlan,
          sources: dict[str, str], canary: tuple[str, str] | None) -> None:
    """The candidate, then the task's files; the test files as they run (every test switched on, the twins in
    them); the canary beside them; the test files and the canary protected."""
    workspace = folder.workspace
    copy_candidate(workspace, candidate, ProtectedPaths.of(task))
    copy_task_files(task.root, workspace, [*task.required_files, *task.suite_files(suite)])
    for rel, text in sources.items():
        (workspace / rel).write_text(text, encoding="utf-8")
    protected = list(sources)
    if canary is not None:
        path = workspace / canary[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)  # a candidate file of that name gives way (C++'s canary is a test file)
        path.write_text(canary[1], encoding="utf-8")
        protected.append(canary[0])
    folder.protect_list.write_text("\n".join(suite_mounts(task, suite, protected)) + "\n", encoding="utf-8")


def _dependencies(language: str, toolchain: Toolchain, cache: Path, project_dir: Path) -> Path | None:
    if language == JAVASCRIPT:
        return prepare_node_modules(cache, toolchain, project_dir)
    if language == GO:
        return prepare_go_modules(cache, toolchain, project_dir)
    if language == RUST:
        check_crates(project_dir)
    if language == JAVA:
        check_java_packages(project_dir)
    return None


def _report(plan: LanguagePlan, ctx: LanguageRun, task: Task, suite: SuiteName, session: SessionResult,
            isolation: str, word: str, planting: Planting) -> TestReport:
    steps = session.steps
    printed, tested = steps[-1], steps[-2]
    tampered = None
    failed_build = next((s for s in steps[:-2] if s.stop != FINISHED or s.exit_status != 0), None)
    hidden = [*([word] if word else []), *(planted_names(planting) if planting.checked else [])]
    output = "\n".join(without_lines_of(s.output.text().strip(), hidden) for s in steps[:-1])
    if failed_build is not None:
        why = "timed out" if failed_build.stop == TIMED_OUT else f"exit status {failed_build.exit_status}"
        message = f"the build failed ({why}):\n{without_lines_of(failed_build.output.text().strip(), hidden)}"
        parsed = Parsed([], {rel: message for rel in ctx.test_files})
        ran = failed_build
    else:
        ran = tested
        text = printed.output.text() if printed.stop == FINISHED and printed.exit_status == 0 else ""
        if printed.output.total > REPORT_CAP:
            text = ""
        parsed = plan.results(ctx, text) if text else Parsed([])
        parsed, tampered = without_canary(parsed, word)
        if planting.checked and planting.tests:
            stopped = tested.stop == TIMED_OUT or any(test.outcome == Outcome.ERROR for test in parsed.tests)
            tampered = tampered or planted_problem(task.language, planting, parsed.tests, parsed.broken, stopped)
            parsed = Parsed([test for test in parsed.tests if not planting.owns(test.nodeid)], parsed.broken)
        reported = {test.nodeid.split("::", 1)[0] for test in parsed.tests}
        said = without_lines_of(tested.output.text().strip(), hidden)[-3000:]
        own = suite_sources(task, suite, plan)  # what each file declares: not the canary a Rust file may be given
        unreported = {rel: f"no test of this file reported an outcome: {_ending(tested)}\n{said}"
                      for rel in ctx.test_files if rel not in reported and rel not in parsed.broken
                      and declares_tests(task.language, own.get(rel))}
        parsed = Parsed(parsed.tests, {**{rel: f"{why}\n{said}" for rel, why in parsed.broken.items()},
                                       **unreported})
    if tampered:
        output += f"\n[projectgen] the results were tampered with: {tampered}; no test counts as passed"
        parsed = Parsed([TestResult(nodeid=test.nodeid, outcome=Outcome.FAILED, duration=test.duration,
                                    message=f"[projectgen] not counted: {tampered}") for test in parsed.tests],
                        parsed.broken)
    return TestReport(
        task_id=task.id, suite=suite, tests=parsed.tests, tampered=tampered,
        collection_errors=[CollectionError(nodeid=rel, message=message) for rel, message in parsed.broken.items()],
        collected=len(parsed.tests), collected_ids=[test.nodeid for test in parsed.tests],
        exit_status=ran.exit_status if ran.stop == FINISHED else None, timed_out=ran.stop == TIMED_OUT,
        output_tail=output[-6000:], isolation=isolation)


def without_lines_of(text: str, names: list[str]) -> str:
    """`text` without what it says of the canary and the twins (not for a model to see): each line naming one,
    and the blank or more indented lines after it (jest's failure block with its code frame, the JUnit
    launcher's failure details)."""
    kept, depth = [], None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if depth is not None and (not line.strip() or indent > depth):
            continue
        depth = None
        if any(name in line for name in names):
            depth = indent
            continue
        kept.append(line)
    return "\n".join(kept)


def without_canary(parsed: Parsed, word: str) -> tuple[Parsed, str | None]:
    """The report without the canary's tests, and why the run is tampered: a canary passed, or every test
    passed and the canary is missing (a report written without knowing it; a run that crashed before the
    canary ran has tests that did not pass)."""
    if not word:
        return parsed, None
    mine = [test for test in parsed.tests if word in test.nodeid.split("::", 1)[-1]]
    rest = Parsed([test for test in parsed.tests if test not in mine],
                  {rel: why for rel, why in parsed.broken.items() if word not in rel})
    tampered = canary_problem([test.nodeid for test in mine if test.outcome in (Outcome.PASSED, Outcome.XPASS)])
    if tampered is None and not mine and rest.tests and all(test.outcome == Outcome.PASSED for test in rest.tests):
        tampered = "every test passed but the canary test that runs with them is missing: the report was not the tool's"
    return rest, tampered


def _ending(step: StepResult) -> str:
    if step.stop == TIMED_OUT:
        return "the tests timed out"
    return f"the test step ended ({step.stop}, exit status {step.exit_status})"
