"""`construct multiturn`'s logic without the sandbox: seeds and their filters, the turn order, the caps that send a
seed to review, REQUIREMENT_REFINE, tolerant parsing, and resuming a seed from its recorded calls. Test runs are
answered by a fake runner that reads the tests it is given (no code runs here; the sandbox end to end is
test_construct_multiturn.py)."""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from projectgen.agents.base import ModelGateway
from projectgen.datasets.multiturn import load_multiturn_task
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.experiments.ledger import Ledger
from projectgen.llm import ScriptedChatModel
from projectgen.llm.parsing import StructuredOutputError
from projectgen.protocols.multiturn_construction.agents import (Alignment, ConstructionAgents, ModelTurnCoder,
                                                                RequirementReview, TurnDraft, instruction_from_reply,
                                                                parse_draft)
from projectgen.protocols.multiturn_construction.batch import ConstructionSpec, run_construction
from projectgen.protocols.multiturn_construction.filters import filter_seed
from projectgen.protocols.multiturn_construction.output import write_task
from projectgen.protocols.multiturn_construction.requirements import CycleError, generate_requirements, turn_order
from projectgen.protocols.multiturn_construction.dependencies import dependencies
from projectgen.protocols.multiturn_construction.seeds import body_lines, bundled_seeds_dir, load_seed, load_seeds
from projectgen.protocols.multiturn_construction.settings import ConstructionSettings
from projectgen.protocols.multiturn_construction.turns import TurnRecord, build_turn, check_draft


class FakeRunner:
    """Answers a run by `passes(code, tests)`; counts its runs. Nothing is executed."""

    def __init__(self, passes: Callable[[str, str], bool] = lambda code, tests: True) -> None:
        self.passes = passes
        self.runs = 0

    def evaluate(self, task, candidate, suite):
        self.runs += 1
        tests = "".join((task.root / path).read_text() for path in task.suites[suite].paths)
        ok = self.passes("".join(candidate.values()), tests)
        return TestReport(task_id=task.id, suite=suite,
                          tests=[TestResult(nodeid="t::x", outcome=Outcome.PASSED if ok else Outcome.FAILED)])


def model(responses: list[dict]) -> object:
    return ScriptedChatModel.from_responses({"label": "test", "responses": responses})


RETAIN_ALL = {"requirements": [{"requirement": i, "testability": 5, "completeness": 5, "distinctiveness": 5,
                                "authenticity": 5, "decision": "retain"} for i in range(5)]}


def events() -> tuple[list, Callable[..., None]]:
    recorded: list = []
    return recorded, lambda event, **fields: recorded.append((event, fields))


def seed(name: str = "rle"):
    return load_seed(bundled_seeds_dir() / name)


# --------------------------------------------------------------------------- seeds

def test_the_bundled_seeds_load_and_the_length_filter_measures_the_target_function():
    seeds = load_seeds(bundled_seeds_dir())
    assert [(s.id, s.level) for s in seeds] == [("clamp", "function"), ("grading", "function"),
                                                ("inventory", "function"), ("rle", "function"), ("wrap", "repository")]
    assert {s.id: body_lines(s.reference(), s.function) for s in seeds} == {
        "clamp": 1, "grading": 11, "inventory": 10, "rle": 13, "wrap": 15}
    assert seed().signature().splitlines()[0] == "def encode(text: str) -> str:"
    assert seed().signature().rstrip().endswith("...") and "while" not in seed().signature()


def test_a_bad_seed_is_one_line(tmp_path: Path):
    folder = tmp_path / "s"
    folder.mkdir()
    with pytest.raises(TaskFormatError, match="no seed.toml"):
        load_seed(folder)
    (folder / "seed.toml").write_text('level = "file"\ntarget = "m.py"\nfunction = "f"\n')
    with pytest.raises(TaskFormatError, match="level: expected one of function, repository"):
        load_seed(folder)
    (folder / "seed.toml").write_text('level = "repository"\ntarget = "pkg/m.py"\nfunction = "f"\n')
    with pytest.raises(TaskFormatError, match="'repository' is not a folder of the seed"):
        load_seed(folder)
    (folder / "seed.toml").write_text('target = "pkg/m.py"\nfunction = "f"\n')
    with pytest.raises(TaskFormatError, match="module file"):
        load_seed(folder)
    (folder / "seed.toml").write_text('target = "m.py"\nfunction = "f"\n')
    with pytest.raises(TaskFormatError, match="requirement.md: missing"):
        load_seed(folder)
    (folder / "tests").mkdir()
    with pytest.raises(ProjectGenError, match="no seed folders"):
        load_seeds(folder / "tests")  # a folder without seed folders (made empty here)


def copy_seed(name: str, to: Path) -> Path:
    """A bundled seed copied to `to` (to be changed there)."""
    source = seed(name).root
    for path in source.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            (to / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            (to / path.relative_to(source)).write_text(path.read_text())
    return to


def test_the_length_filter_counts_body_code_lines_only(tmp_path: Path):
    """SR-Eval measures the function's body: a signature, a docstring, blank and comment lines do not count."""
    padded = ('def f(a,\n      b):\n    """Doc.\n\n    More doc.\n    """\n    # a comment\n\n    x = a\n'
              '    s = """one\n\ntwo"""\n    return x  # trailing\n')
    assert body_lines(padded, "f") == 5  # x, the three lines of s, return
    assert body_lines('def f():\n    """Only a docstring."""\n', "f") == 0 and body_lines("x = 1\n", "f") == 0
    short = copy_seed("rle", tmp_path / "rle")
    reference = (short / "reference.py").read_text()
    body = reference[reference.index("    if any("):]
    # 9 code lines in a function of 12 lines with its signature and docstring, padded with blank and comment lines
    (short / "reference.py").write_text(reference.replace(body, "".join(
        f"    # step {n}\n\n    x{n} = {n}\n" for n in range(8)) + "    return text\n"))
    recorded, record = events()
    reason = asyncio.run(filter_seed(load_seed(short), ConstructionAgents.default(None), ModelGateway(),
                                     FakeRunner(), ConstructionSettings(), record))
    assert reason == "rle.py: encode's body has 9 code line(s), fewer than 10"
    assert recorded == [("seed_filter", {"seed": "rle", "filter": "length", "kept": False, "reason": reason,
                                         "body_lines": 9})]


def test_a_repository_seed_keeps_intra_file_dependencies_and_drops_self_contained_and_cross_file_ones(
        tmp_path: Path):
    """SR-Eval keeps DevEval seeds whose function uses its own file's code, and drops the self-contained ones
    (function-level material) and those reaching into other files."""
    wrap = seed("wrap")
    assert dependencies(wrap) == ["intra-file: wrap_words uses _pieces"]
    assert wrap.candidate("X")["textkit/wrap.py"] == "X"
    assert set(wrap.candidate("X")) == {"textkit/__init__.py", "textkit/case.py", "textkit/wrap.py"}
    recorded, record = events()
    assert asyncio.run(filter_seed(wrap, ConstructionAgents.default(None), ModelGateway(), FakeRunner(),
                                   ConstructionSettings(), record)) == ""
    assert recorded[0] == ("seed_filter", {"seed": "wrap", "filter": "dependencies", "kept": True,
                                           "found": ["intra-file: wrap_words uses _pieces"], "reason": ""})

    self_contained = copy_seed("wrap", tmp_path / "alone")
    reference = (self_contained / "reference.py").read_text()
    (self_contained / "reference.py").write_text(reference.replace(
        "_pieces(word, width)", "(word[start:start + width] for start in range(0, len(word), width))"))
    recorded, record = events()
    reason = asyncio.run(filter_seed(load_seed(self_contained), ConstructionAgents.default(None), ModelGateway(),
                                     FakeRunner(), ConstructionSettings(), record))
    assert reason == ("self-contained: wrap_words uses no other top-level name of textkit/wrap.py (function-level "
                      "material, not a repository-level task)")
    assert recorded == [("seed_filter", {"seed": "wrap", "filter": "dependencies", "kept": False, "found": [],
                                         "reason": reason})]

    cross = copy_seed("wrap", tmp_path / "cross")
    (cross / "reference.py").write_text("from textkit.case import title_case\n\n" + reference.replace(
        "    lines: list[str] = []\n", "    lines: list[str] = [title_case(text)][:0]\n"))
    assert dependencies(load_seed(cross)) == ["intra-file: wrap_words uses _pieces",
                                              "cross-file: wrap_words uses title_case from textkit.case"]
    recorded, record = events()
    reason = asyncio.run(filter_seed(load_seed(cross), ConstructionAgents.default(None), ModelGateway(),
                                     FakeRunner(), ConstructionSettings(), record))
    assert reason == "cross-file: wrap_words uses title_case from textkit.case" and recorded[0][1]["kept"] is False


def test_cross_file_dependencies_are_the_functions_own_as_in_deveval(tmp_path: Path):
    """DevEval lists a function's dependencies: an import of the repository that only another function of the file
    uses is not the target's (the seed is kept); one the function reads, by any name, or makes itself, is."""
    future = "from __future__ import annotations\n"
    reference = (seed("wrap").root / "reference.py").read_text()

    def wrap_with(name: str, head: str, old: str = "", new: str = "") -> list[str]:
        """The wrap seed with `head` after its __future__ import and `old` replaced by `new`: its dependencies."""
        folder = copy_seed("wrap", tmp_path / name)
        text = reference.replace(future, future + head)
        (folder / "reference.py").write_text(text.replace(old, new) if old else text)
        return dependencies(load_seed(folder))

    shout = "\n\ndef shout(text):\n    return title_case(text)\n"  # another function of the file uses the import
    assert wrap_with("unused", "from textkit.case import title_case\n" + shout) == [
        "intra-file: wrap_words uses _pieces"]
    assert wrap_with("aliased", "import textkit.case as tc\n", "    lines: list[str] = []\n",
                     "    lines: list[str] = [tc.title_case(text)][:0]\n") == [
        "intra-file: wrap_words uses _pieces", "cross-file: wrap_words uses tc from textkit.case"]
    assert wrap_with("local", "", "    lines: list[str] = []\n",
                     "    from .case import title_case\n    lines: list[str] = [title_case(text)][:0]\n") == [
        "intra-file: wrap_words uses _pieces", "cross-file: wrap_words imports .case"]
    star = wrap_with("star", "from textkit.case import *\n")
    assert star[-1] == "cross-file: textkit/wrap.py imports * from textkit.case"
    assert wrap_with("stdlib", "import textwrap\n", "    lines: list[str] = []\n",
                     "    lines: list[str] = textwrap.wrap('', 1)\n") == ["intra-file: wrap_words uses _pieces"]


def test_the_dependency_filter_reads_python_scoping_not_spelling(tmp_path: Path):
    """A parameter or a local named like a top-level name of the file is the function's own (a self-contained
    function stays self-contained, and is dropped); a top-level name bound by a tuple assignment or inside an `if`
    and read from a nested scope is an intra-file dependency (the seed is kept)."""
    def wrap_with(name: str, reference: str):
        folder = copy_seed("wrap", tmp_path / name)
        (folder / "reference.py").write_text(reference)
        return load_seed(folder)

    def steps(count: int) -> str:
        return "".join(f"    total += {n}\n" for n in range(count))

    shadowing = wrap_with("shadow", 'total = 100\n\n\ndef width():\n    return 3\n\n\n'
                                    'def wrap_words(text, width=0):\n    """Doc."""\n    total = width\n'
                                    + steps(9) + "    return [text] * total\n")
    assert dependencies(shadowing) == []
    assert asyncio.run(filter_seed(shadowing, ConstructionAgents.default(None), ModelGateway(), FakeRunner(),
                                   ConstructionSettings(), events()[1])).startswith("self-contained: ")

    bound = wrap_with("bound", 'import os\nLOW, HIGH = 0, 10\nif os.sep:\n    def _cut(text):\n'
                               '        return text\n\n\n'
                               'def wrap_words(text, width):\n    """Doc."""\n    total = LOW\n' + steps(7)
                               + "    pick = lambda: _cut(text)\n    return [pick()] * min(total, HIGH) + [os.sep]\n")
    assert dependencies(bound) == ["intra-file: wrap_words uses HIGH", "intra-file: wrap_words uses LOW",
                                   "intra-file: wrap_words uses _cut"]
    assert asyncio.run(filter_seed(bound, ConstructionAgents.default(None), ModelGateway(), FakeRunner(),
                                   ConstructionSettings(), events()[1])) == ""
    assert body_lines(bound.reference(), "wrap_words") == 10  # kept at exactly the paper's 10 lines


def test_the_reference_and_contamination_filters(tmp_path: Path):
    gateway = ModelGateway()
    recorded, record = events()
    leaked = ConstructionAgents.default(model([{"role": "contamination_probe", "content": "```python\nx = 1\n```"}]))
    kept = ConstructionSettings(contamination=True)
    assert asyncio.run(filter_seed(seed(), leaked, gateway, FakeRunner(), kept, record)).startswith("leaked")
    assert asyncio.run(filter_seed(seed(), leaked, gateway, FakeRunner(), ConstructionSettings(), record)) == ""
    failing = FakeRunner(lambda code, tests: False)
    assert "reference does not pass its tests (0/1)" in asyncio.run(
        filter_seed(seed(), leaked, gateway, failing, ConstructionSettings(), record))
    assert [fields["filter"] for event, fields in recorded] == ["reference", "contamination", "reference",
                                                                "reference"]


def probe_reply(code: str) -> list[dict]:
    return [{"role": "contamination_probe", "content": f"```python\n{code}\n```"}]


def test_the_contamination_check_drops_a_seed_any_of_three_scripted_probes_passes():
    """SR-Eval's union: three probe models (scripted here), each asked and its verdict recorded; one that passes the
    reference tests is enough to drop the seed, and the reason names it."""
    probes = {"scripted:a": model(probe_reply("A = 'wrong'")), "scripted:b": model(probe_reply("B = 'leaked'")),
              "scripted:c": model(probe_reply("C = 'wrong'"))}
    agents = ConstructionAgents.default(model([]), probes)
    only_b = FakeRunner(lambda code, tests: "A = " not in code and "C = " not in code)  # the reference passes too
    settings = ConstructionSettings(contamination=True, contamination_models=tuple(probes))
    recorded, record = events()
    reason = asyncio.run(filter_seed(seed(), agents, ModelGateway(), only_b, settings, record))
    assert reason.startswith("leaked: code written from the signature and docstring alone by scripted:b passes")
    assert "(1 of 3 probe model(s))" in reason
    check = recorded[-1][1]
    assert check["filter"] == "contamination" and check["kept"] is False and check["rule"].startswith("union")
    assert [(v["model"], v["leaked"]) for v in check["verdicts"]] == [
        ("scripted:a", False), ("scripted:b", True), ("scripted:c", False)]
    assert only_b.runs == 4  # the reference, then every probe (none skipped after the leak)

    none_leak = FakeRunner(lambda code, tests: not any(f"{name} = " in code for name in "ABC"))
    recorded, record = events()
    assert asyncio.run(filter_seed(seed(), agents, ModelGateway(), none_leak, settings, record)) == ""
    assert [v["leaked"] for v in recorded[-1][1]["verdicts"]] == [False, False, False]
    assert recorded[-1][1]["kept"] is True


def test_a_repository_level_probe_is_tested_with_its_function_in_the_file():
    """A model that saw the repository writes the function calling its file's helper (`_pieces`); tested as the
    whole file it would fail for want of the helper, and the leaked seed would be kept."""
    memorized = ("def wrap_words(text, width):  # memorized\n"
                 "    return [p for w in text.split() for p in _pieces(w, width)]")
    probes = {"scripted:a": model(probe_reply(memorized))}
    runs_with_helper = FakeRunner(lambda code, tests: "def _pieces(" in code and "# memorized" in code
                                  or "# memorized" not in code)  # the reference passes too
    settings = ConstructionSettings(contamination=True, contamination_models=tuple(probes))
    recorded, record = events()
    reason = asyncio.run(filter_seed(seed("wrap"), ConstructionAgents.default(model([]), probes), ModelGateway(),
                                     runs_with_helper, settings, record))
    assert reason.startswith("leaked: code written from the signature and docstring alone by scripted:a passes")
    assert [(v["model"], v["leaked"]) for v in recorded[-1][1]["verdicts"]] == [("scripted:a", True)]


def test_a_construction_probes_with_each_named_model_and_records_them(tmp_path: Path):
    """The batch makes a probe of every `contamination_models` spec (scripted files here) and run.json and the
    seed's events name each one with its verdict."""
    specs = []
    for name, code in (("clean", "A = 'wrong'"), ("leaky", "B = 'leaked'")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"label": name, "responses": probe_reply(code)}))
        specs.append(f"scripted:{path}")
    settings = ConstructionSettings(contamination=True, contamination_models=tuple(specs))
    spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec="scripted:main", settings=settings, only=("rle",))
    runner = FakeRunner(lambda code, tests: "A = " not in code)
    results = run_construction(spec, tmp_path / "out", model=model([]), runner=runner)
    assert results.outcomes[0].status == "filtered" and f"by {specs[1]} passes" in results.outcomes[0].reason
    assert results.settings["contamination_models"] == specs
    run_json = json.loads((tmp_path / "out" / "runs" / "rle" / "run.json").read_text())
    assert run_json["protocol"]["contamination_models"] == specs
    lines = [json.loads(line) for line in (tmp_path / "out" / "runs" / "rle" / "events.jsonl").read_text().splitlines()]
    check = next(line for line in lines if line.get("filter") == "contamination")
    assert [(v["model"], v["leaked"]) for v in check["verdicts"]] == [(specs[0], False), (specs[1], True)]

    clean = ConstructionSettings(contamination=True, contamination_models=(specs[0],))  # a kept seed's task records it
    script_path = script(tmp_path / "s.json")
    spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{script_path}", settings=clean, only=("rle",))
    runner = FakeRunner(lambda code, tests: "A = " not in code and not ("@v1" in code and "@t2" in tests))
    run_construction(spec, tmp_path / "kept", model=ScriptedChatModel.from_file(script_path), runner=runner)
    verdicts = json.loads((tmp_path / "kept" / "rle" / "construction.json").read_text())["filter_verdicts"]
    assert [v["filter"] for v in verdicts] == ["reference", "contamination"]
    assert [(v["model"], v["leaked"]) for v in verdicts[-1]["verdicts"]] == [(specs[0], False)]


def test_contamination_models_are_recorded_and_checked():
    settings = ConstructionSettings(contamination=True, contamination_models=["scripted:a", "scripted:b"])
    assert settings.contamination_models == ("scripted:a", "scripted:b")
    assert settings.protocol()["contamination_models"] == ["scripted:a", "scripted:b"]
    assert ConstructionSettings.from_protocol(settings.protocol()) == settings
    with pytest.raises(ProjectGenError, match="check is off"):
        ConstructionSettings(contamination_models=("scripted:a",))
    with pytest.raises(ProjectGenError, match="named twice: scripted:a"):
        ConstructionSettings(contamination=True, contamination_models=("scripted:a", "scripted:a"))


# --------------------------------------------------------------------------- requirements

def test_the_turn_order_is_a_dag_rooted_at_the_core():
    assert turn_order(4, [(0, 2), (2, 1), (0, 3)]) == [0, 2, 1, 3]
    assert turn_order(3, []) == [0, 1, 2]  # no pair: each builds on the core
    with pytest.raises(CycleError, match="cycle"):
        turn_order(3, [(1, 2), (2, 1)])
    with pytest.raises(CycleError, match="core requirement"):
        turn_order(3, [(1, 0)])
    with pytest.raises(CycleError, match="names no two"):
        turn_order(3, [(0, 7)])


def test_a_decomposition_never_retained_goes_to_review_at_the_cap():
    refine = {"requirements": [{"requirement": 0, "testability": 1, "completeness": 1, "distinctiveness": 1,
                                "authenticity": 1, "decision": "Refine", "feedback": "too vague"}]}
    agents = ConstructionAgents.default(model([
        {"role": "decomposer", "content": {"core": "c", "evolving": ["e"]}},
        {"role": "requirement_evaluator", "content": refine}]))
    recorded, record = events()
    outcome = asyncio.run(generate_requirements(seed(), agents, ModelGateway(), record, cap=3))
    assert outcome.review.startswith("no decomposition retained in 3 iterations") and outcome.requirements == []
    assert [step["decision"] for step in outcome.iterations] == ["refine"] * 3
    assert "requirement 0: too vague" in outcome.iterations[0]["feedback"]


def test_unparsable_and_out_of_range_drafts_become_feedback_and_a_bad_dag_keeps_the_order():
    agents = ConstructionAgents.default(model([
        {"role": "decomposer", "iteration": 1, "content": "I think the core is..."},
        {"role": "decomposer", "iteration": 2, "content": {"core": "c", "evolving": ["1", "2", "3", "4", "5"]}},
        {"role": "decomposer", "iteration": 3, "content": "```json\n{\"core\": \"c\", \"evolving\": [\"a\", \"b\"]}\n```"},
        {"role": "requirement_evaluator", "content": RETAIN_ALL},
        {"role": "analyzer", "content": {"edges": [[1, 2], [2, 1]]}}]))
    outcome = asyncio.run(generate_requirements(seed(), agents, ModelGateway(), events()[1]))
    assert outcome.review is None and outcome.requirements == ["c", "a", "b"]
    assert "did not parse" in outcome.iterations[0]["feedback"]
    assert "1 to 4 evolving requirements (you gave 5)" in outcome.iterations[1]["feedback"]
    assert "cycle" in outcome.iterations[2]["analysis_note"]


def test_a_review_naming_no_score_for_a_requirement_refuses_it():
    review = RequirementReview.model_validate({"requirements": [RETAIN_ALL["requirements"][0]]})
    assert review.refused(2) == ["requirement 1: not reviewed"]


# --------------------------------------------------------------------------- Algorithm 1

def draft(code: str, tests: str, target: str = "rle.py") -> str:
    return f"{target}\n```python\n{code}\n```\n\ntest_x.py\n```python\n{tests}\n```\n"


def test_requirement_refine_stops_the_turn_for_a_person():
    agents = ConstructionAgents.default(model([
        {"role": "turn_coder", "content": draft("def encode(t): return t", "def test(): pass")},
        {"role": "alignment_evaluator", "content": {"decision": "requirement refine", "feedback": "ambiguous"}}]))
    progress = asyncio.run(build_turn(seed(), ["core", "more"], 1, "", agents, ModelGateway(), FakeRunner(),
                                      events()[1]))
    assert progress.kept is None and progress.review == ("turn 1: the Evaluator asks for the requirement to be "
                                                         "rewritten: ambiguous")
    assert [step["decision"] for step in progress.drafts] == ["requirement_refine"]
    assert progress.last.code == "def encode(t): return t\n"  # what the person is shown


def test_a_turn_over_the_cap_goes_to_review_and_stage_two_compares_with_the_previous_turn():
    agents = ConstructionAgents.default(model([
        {"role": "turn_coder", "target": "rle/turn2", "content": draft("V2", "T2")},
        {"role": "alignment_evaluator", "content": {"decision": "RETAIN"}}]))
    runner = FakeRunner()  # every test passes on every code: turn 2's tests never tell V1 from V2
    progress = asyncio.run(build_turn(seed(), ["core", "more"], 2, "V1\n", agents, ModelGateway(), runner,
                                      events()[1], cap=3))
    assert progress.kept is None
    assert progress.review.startswith("turn 2: no draft kept in 3 iterations; last: Stage 2 (distinctiveness)")
    assert [step["decision"] for step in progress.drafts] == ["not_discriminative"] * 3
    assert runner.runs == 3 * 2
    # drafts made before (a person's rejection) are counted: the loop goes on from the next one
    more = asyncio.run(build_turn(seed(), ["core", "more"], 2, "V1\n", agents, ModelGateway(), runner, events()[1],
                                  cap=4, drafts=progress.drafts, feedback="a person asks"))
    assert [step["iteration"] for step in more.drafts] == [1, 2, 3, 4]
    discriminating = FakeRunner(lambda code, tests: not (code == "V1\n" and tests == "T2\n"))
    progress = asyncio.run(build_turn(seed(), ["core", "more"], 2, "V1\n", agents, ModelGateway(), discriminating,
                                      events()[1]))
    assert progress.review is None and progress.kept.code == "V2\n" and progress.kept.requirement == "more"


class RecordingGateway:
    """Answers every call with `reply` and keeps the prompts it was asked."""

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    async def ask(self, model, messages, *, role, stage, target, iteration) -> str:
        self.prompts.append("\n".join(text for _, text in messages))
        return self.reply


WRAP_V1 = ('"""Words wrapped."""\n\n\ndef _pieces(word, width):  # @helper{helper}\n    return [word]\n\n\n'
           'def wrap_words(text, width):  # @v{version}\n    return text.split()\n')


def test_the_repository_level_coder_is_given_the_reference_code_and_tests():
    """Algorithm 1 line 8: at repository level the Coder writes each turn with the seed's reference and tests."""
    wrap = seed("wrap")
    gateway = RecordingGateway(draft(WRAP_V1.format(helper=1, version=1), "def test(): pass", "textkit/wrap.py"))
    asyncio.run(ModelTurnCoder(None).write(gateway, wrap, ["core", "more"], turn=1, previous_code="", feedback="",
                                           iteration=1))
    prompt = gateway.prompts[0]
    assert wrap.reference() in prompt and "_pieces(word, width)" in prompt
    assert all(f"tests/{path}" in prompt and text in prompt for path, text in wrap.tests().items())
    assert "- textkit/case.py" in prompt  # the repository's other files are still named


def test_a_repository_level_turn_must_define_the_target_function_and_stage_two_swaps_only_that_function():
    """A built repository-level task answers its target function each turn, so a draft without it is refused before
    any run, and stage 2 runs the tests on this turn's file with turn k-1's function, as refine's validation does."""
    wrap = seed("wrap")
    runner = FakeRunner()
    step: dict = {}
    decision, feedback = check_draft(wrap, 1, "", TurnDraft(code="def wrap(text):\n    return []\n", tests="T"),
                                     runner, "full", step)
    assert decision == "no_function" and "defines no top-level function `wrap_words`" in feedback
    assert runner.runs == 0
    seen: list[str] = []
    runner = FakeRunner(lambda code, tests: seen.append(code) or "@v1" not in code)
    decision, _ = check_draft(wrap, 2, WRAP_V1.format(helper=1, version=1),
                              TurnDraft(code=WRAP_V1.format(helper=2, version=2), tests="T2"), runner, "full", {})
    assert decision == "checked"
    assert "@helper2" in seen[1] and "@v1" in seen[1] and "@helper1" not in seen[1] and "@v2" not in seen[1]


def test_a_built_repository_level_task_names_its_target_function(tmp_path: Path):
    """refine reads `function`: each turn's answer is that function, the code above it the local context."""
    wrap = seed("wrap")
    versions = [WRAP_V1.format(helper=1, version=1), wrap.reference()]
    turns = [TurnRecord(turn=k, requirement=f"turn {k}", code=code, tests=f"def test_{k}(): pass\n",
                        test_file=f"test_wrap_turn{k}.py") for k, code in enumerate(versions, start=1)]
    task = write_task(wrap, turns, tmp_path / "wrap", {"seed": "wrap"})
    assert task.function == "wrap_words" and task.answer_name == "wrap_words in textkit/wrap.py"
    assert task.answer(2).startswith("def wrap_words(text: str, width: int)") and "_pieces" not in task.answer(2)[:40]
    assert "def _pieces(word: str, width: int)" in task.local_context(2)
    assert task.target_file(task.answer(1), 2).count("def wrap_words(text, width):  # @v1") == 1
    function_level = write_task(seed("rle"), [TurnRecord(turn=k, requirement="r", code="def encode(t): ...\n",
                                                         tests="def test(): pass\n", test_file=f"test_{k}.py")
                                              for k in (1, 2)], tmp_path / "rle", {})
    assert function_level.function is None  # a function-level task writes its whole file

    toml = tmp_path / "wrap" / "multiturn.toml"  # built before tasks carried their function, or the key deleted
    toml.write_text(toml.read_text().replace('function = "wrap_words"\n', ""))
    with pytest.raises(TaskFormatError, match="function: missing in a repository-level task built by"):
        load_multiturn_task(tmp_path / "wrap")  # not scored as whole modules
    (tmp_path / "wrap" / "construction.json").unlink()
    assert load_multiturn_task(tmp_path / "wrap").function is None  # a hand-written whole-module task still loads


def test_replies_are_parsed_tolerantly_and_what_is_missing_is_said():
    assert Alignment.model_validate({"decision": "test-refine"}).decision == "TEST_REFINE"
    assert parse_draft(draft("A", "B"), seed()).tests == "B\n"
    with pytest.raises(StructuredOutputError, match="one test file"):
        parse_draft("rle.py\n```python\nA\n```\n", seed())


# --------------------------------------------------------------------------- the batch

WRAP_INSTRUCTION = "Write `wrap_words(text, width)` in `textkit/wrap.py`: the words packed into lines."


def script(path: Path, drop_turn: str | None = None) -> Path:
    responses = [{"role": "decomposer", "content": {"core": "c", "evolving": ["e"]}},
                 {"role": "requirement_evaluator", "content": RETAIN_ALL},
                 {"role": "analyzer", "content": {"edges": [[0, 1]]}},
                 {"role": "alignment_evaluator", "content": {"decision": "RETAIN"}},
                 {"role": "instruction_converter", "target": "wrap", "content": WRAP_INSTRUCTION}]
    for name, target in (("grading", "grading.py"), ("inventory", "inventory.py"), ("rle", "rle.py"),
                         ("wrap", "textkit/wrap.py")):
        for turn in (1, 2):
            if f"{name}/turn{turn}" != drop_turn:
                code = (f"def wrap_words(text, width):  # {name} @v{turn}\n    return []" if name == "wrap"
                        else f"# {name} @v{turn}")  # a repository-level turn defines the target function
                responses.append({"role": "turn_coder", "target": f"{name}/turn{turn}",
                                  "content": draft(code, f"# tests @t{turn}", target)})
    path.write_text(json.dumps({"label": "test", "responses": responses}))
    return path


def test_a_failed_seed_is_an_error_built_again_from_its_recorded_calls(tmp_path: Path):
    runner = FakeRunner(lambda code, tests: not ("@v1" in code and "@t2" in tests))  # turn 2's tests fail on turn 1
    path = script(tmp_path / "s.json", drop_turn="rle/turn2")
    spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{path}")
    first = run_construction(spec, tmp_path / "out", model=ScriptedChatModel.from_file(path), runner=runner)
    status = {row.seed: row.status for row in first.outcomes}
    assert status == {"clamp": "filtered", "grading": "task", "inventory": "task", "rle": "error", "wrap": "task"}
    assert "no response for role='turn_coder' target='rle/turn2'" in first.errors()[0].reason
    rows: list = []
    replay = ScriptedChatModel.from_file(script(path))  # the script completed
    again = run_construction(spec, tmp_path / "out", model=replay, runner=runner, on_row=rows.append)
    assert [row.seed for row in rows] == ["rle"] and {row.status for row in again.outcomes} == {"task", "filtered"}
    # the calls the first invocation completed (decomposition, turn 1) are answered from runs/rle/calls.jsonl
    assert [(call["role"], call["target"]) for call in replay.calls] == [("turn_coder", "rle/turn2"),
                                                                        ("alignment_evaluator", "rle/turn2")]
    assert sum(e["key"] == "seed/rle" for e in Ledger(tmp_path / "out" / "ledger.jsonl").entries()) == 2


def test_another_ablation_builds_every_seed_again(tmp_path: Path):
    runner = FakeRunner(lambda code, tests: not ("@v1" in code and "@t2" in tests))  # turn 2's tests fail on turn 1
    path = script(tmp_path / "s.json")
    for ablation, built in (("full", 3), ("full", 0), ("no-evaluator", 3)):
        rows: list = []
        spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{path}", only=("grading", "inventory", "rle"),
                                settings=ConstructionSettings(ablation=ablation))
        run_construction(spec, tmp_path / "out", model=ScriptedChatModel.from_file(path), runner=runner,
                         on_row=rows.append)
        assert len(rows) == built
    with pytest.raises(ProjectGenError, match="unknown ablation 'w/o'"):
        ConstructionSettings(ablation="w/o")
    with pytest.raises(ProjectGenError, match="unknown seed"):
        run_construction(ConstructionSpec(seeds=bundled_seeds_dir(), spec="x", only=("nope",)), tmp_path / "o",
                         model=None, runner=runner)


def test_a_repository_seed_starts_from_its_docstring_converted_into_an_instruction(tmp_path: Path):
    """SR-Eval's seed preparation: the scripted converter is shown the target function's signature and docstring
    (not the body), and its instruction, not requirement.md, is what the Decomposer and Evaluator are given;
    construction.json records it. A function-level seed is not converted, and the setting turns it off."""
    runner = FakeRunner(lambda code, tests: not ("@v1" in code and "@t2" in tests))
    path = script(tmp_path / "s.json")
    replay = ScriptedChatModel.from_file(path)
    spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{path}", only=("rle", "wrap"))
    results = run_construction(spec, tmp_path / "out", model=replay, runner=runner)
    assert {row.seed: row.status for row in results.outcomes} == {"rle": "task", "wrap": "task"}
    assert [call["target"] for call in replay.calls if call["role"] == "instruction_converter"] == ["wrap"]
    prompts = [json.loads(line) for line in (tmp_path / "out" / "runs" / "wrap" / "prompts.jsonl").read_text()
               .splitlines()]
    converter_prompt = json.dumps(next(p for p in prompts if "signature and docstring into a" in json.dumps(p)))
    assert "def wrap_words(text: str, width: int)" in converter_prompt and "_pieces(word" not in converter_prompt
    decomposer_prompt = json.dumps(next(p for p in prompts if "You are the Decomposer" in json.dumps(p)))
    assert WRAP_INSTRUCTION[:40] in decomposer_prompt and "greedily into lines" not in decomposer_prompt
    trajectory = json.loads((tmp_path / "out" / "wrap" / "construction.json").read_text())
    assert trajectory["instruction"] == WRAP_INSTRUCTION and trajectory["settings"]["docstring_instructions"]
    assert json.loads((tmp_path / "out" / "rle" / "construction.json").read_text())["instruction"] is None

    off = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{path}", only=("wrap",),
                           settings=ConstructionSettings(docstring_instructions=False))
    replay = ScriptedChatModel.from_file(path)
    run_construction(off, tmp_path / "off", model=replay, runner=runner)
    assert "instruction_converter" not in {call["role"] for call in replay.calls}
    assert json.loads((tmp_path / "off" / "wrap" / "construction.json").read_text())["instruction"] is None
    assert instruction_from_reply("```text\nWrite `f`.\n```") == "Write `f`." == instruction_from_reply(" Write `f`.\n")
    with pytest.raises(StructuredOutputError, match="reply was empty"):
        instruction_from_reply("```\n```")
