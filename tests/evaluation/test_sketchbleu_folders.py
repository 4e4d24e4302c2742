"""SketchBLEU's codes mode scores the folders ProjectGen's script scored: the whole task folder against the
output with the task's tests copied in.

Known answers: each expected value was computed by CodeS's own code run out of tree, not by projectgen:
``calc_repobleu`` of the codebleu copy in github.com/whisperzqh/ProjectGen ``datasets/evaluation`` (the
NL2Code/CodeS code with a guard for an empty pairing matrix), called as that repository's
``calc_sketchbleu.py`` calls it (``calc_repobleu([task folder], [output folder], "python",
tokenizer=tokenize_code)``), on the dataset task folder and an output folder into which that repository's
``calc_passrate.py`` ``Test(task, output, "unit_tests").setup_implementation()`` had copied the task's files
(its ``cp`` processes waited for; the setup script, a pip install, not run). The output folder held the
task's reference repository, or the same with every function body ``pass`` (`with_pass_bodies`), as a run
writes it. The tasks cover each way a copy lands: lice's ``templates/*`` (a glob nothing expands),
portalocker's list of examples naming ``pyproject`` (absent from the task), cookiecutter's ``tests/`` (copied
into the folder: ``tests/tests``), and ArXiv_digest's files with CRLF line ends (CodeS opens files in text
mode: universal newlines). tree-sitter came from tree-sitter-python 0.21.0, ``os.walk`` listed names sorted, CodeS's
``get_data_flow`` and comment stripper were memoised (pure functions); PYTHONHASHSEED 0, 1 and 7 gave the
same values. Checked again (issue 37) with CodeS's own parser, tree-sitter 0.20.4 and the tree-sitter-python
0.20.4 grammar CodeS ships, built with ``Language.build_library`` as its setup.py does, ``os.walk`` in the
disk's order, ``calc_passrate.py`` run unchanged (``pip`` a no-op): the same values; the ArXiv_digest pairs
were computed that way (seeds 0-3 agree). None of CodeS's or ProjectGen's code is in this repository.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import projectgen
from projectgen.errors import ProjectGenError
from projectgen.evaluation.sketchbleu_folders import (
    SCRIPT_FOLDERS,
    SOURCE_FILES,
    copied_entries,
    copied_into,
    folder_files,
    script_folders,
)
from projectgen.experiments.figures import final_sketchbleu
from projectgen.runs.folder import RunFolder

from test_support import with_pass_bodies

# (task, output) -> CodeS's (total, ngram, weighted ngram, structure, dataflow) on the script's folders
CODES_ON_SCRIPT_FOLDERS = {
    ("DevBench/ArXiv_digest", "reference"): (97.16757927427264, 1.0, 1.0, 0.940274599542334, 0.9464285714285714),
    ("DevBench/ArXiv_digest", "stubs"): (92.23583371904611, 0.9971446700507615, 0.9906307129798902,
                                         0.8759725400457666, 0.8256854256854258),
    ("DevBench/lice", "reference"): (99.13509060955519, 1.0, 1.0, 0.9654036243822076, 1.0),
    ("DevBench/lice", "stubs"): (88.20088295210627, 0.9666299963329666, 0.9599999999999985, 0.8665568369028006,
                                 0.7348484848484848),
    ("DevBench/readtime", "reference"): (98.76829592139588, 1.0, 1.0, 0.9877688738928722, 0.9629629629629629),
    ("DevBench/readtime", "stubs"): (82.58739466858887, 0.9903703703703703, 0.9642438452520515, 0.8199072121467735,
                                     0.528974358974359),
    ("CodeProjectEval/deprecated", "reference"): (94.2538973263553, 1.0, 1.0, 0.9998856227839414, 0.7702702702702703),
    ("CodeProjectEval/deprecated", "stubs"): (91.3880932701427, 0.997250027499725, 0.9946873722926035,
                                              0.9557360173853369, 0.7078503136280423),
    ("CodeProjectEval/portalocker", "reference"): (98.39589734121705, 1.0, 1.0, 0.9999384577512462,
                                                   0.9358974358974359),
    ("CodeProjectEval/portalocker", "stubs"): (86.98491182140486, 0.9934581731948646, 0.9774011299435023,
                                               0.8961782263523909, 0.6123589433654368),
    ("CodeProjectEval/cookiecutter", "reference"): (92.47416267319899, 1.0, 1.0, 0.9999615318035814,
                                                    0.6990049751243781),
    ("CodeProjectEval/cookiecutter", "stubs"): (90.62702705089387, 0.9973283531761471, 0.9919318427200097,
                                                0.9596853301532957, 0.6761355559863023),
}


def run_output(tmp_path: Path, task: projectgen.Task, case: str) -> Path:
    """A run folder whose output repository is the task's reference, or the reference stubbed."""
    reference = task.reference_repository()
    RunFolder(tmp_path).write_repository(reference if case == "reference" else with_pass_bodies(reference))
    return tmp_path


@pytest.mark.parametrize(("name", "case"), sorted(CODES_ON_SCRIPT_FOLDERS))
def test_codes_figure_is_codes_value_on_the_script_folders(shared_datasets, tmp_path, name, case) -> None:
    pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    from projectgen.evaluation.sketchbleu import sketch_bleu

    task = projectgen.load_task(shared_datasets / name)
    run_dir = run_output(tmp_path, task, case)
    figures = final_sketchbleu(run_dir, task)
    total, *parts = CODES_ON_SCRIPT_FOLDERS[(name, case)]
    assert figures["sketchbleu_codes"] == pytest.approx(total, rel=1e-12)
    assert figures["sketchbleu_codes_files"] == SCRIPT_FOLDERS
    files = script_folders(task, RunFolder(run_dir).repository)
    score = sketch_bleu(files.candidate, files.reference, mode="codes")
    assert [score.ngram_match, score.weighted_ngram_match, score.structure_match,
            score.dataflow_match] == pytest.approx(parts, rel=1e-12)
    # the repaired mode, projectgen's own, stays on the reference's source files: the reference scores 100
    assert (figures["sketchbleu"] == pytest.approx(100.0)) == (case == "reference")


def test_source_files_are_not_what_the_script_scored(shared_datasets, tmp_path) -> None:
    """The old file set (reference sources against the output alone) gives another number: 41.29 for
    deprecated's stubs where CodeS on the script's folders gives 91.39, the paper's ~90 at zero passes."""
    pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    from projectgen.evaluation.sketchbleu import sketch_bleu

    task = projectgen.load_task(shared_datasets / "CodeProjectEval" / "deprecated")
    stubs = with_pass_bodies(task.reference_repository())
    assert sketch_bleu(stubs, task.reference_repository(), mode="codes").total == pytest.approx(41.29, abs=0.01)


def test_other_formats_keep_the_source_files_and_say_so(tmp_path) -> None:
    pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    task = projectgen.load_task(projectgen.example_task_path("kvstore"))
    RunFolder(tmp_path).write_repository(task.reference_repository())
    figures = final_sketchbleu(tmp_path, task)
    # CodeS's value for kvstore against itself (tests/evaluation/test_sketchbleu_codes.py)
    assert figures["sketchbleu_codes"] == pytest.approx(96.55172413793103, rel=1e-12)
    assert figures["sketchbleu_codes_files"] == SOURCE_FILES


def test_copied_entries_are_the_scripts_in_its_order(shared_datasets) -> None:
    lice = shared_datasets / "DevBench" / "lice"
    assert copied_entries(lice) == ["unit_tests", "check_tests", "examples", "requirements.txt", "templates/*",
                                    "setup_shell_script.sh"]
    portalocker = shared_datasets / "CodeProjectEval" / "portalocker"
    assert copied_entries(portalocker) == ["unit_tests", "check_tests", "usage_examples", "pyproject",
                                           "requirements.txt", "setup_shell_script.sh"]
    hone = shared_datasets / "DevBench" / "hone"  # no setup script: nothing of it copied
    assert copied_entries(hone) == ["unit_tests", "check_tests", "examples", "data_file"]


@pytest.mark.parametrize(("config", "message"), [
    ({"unit_tests": "unit_tests", "check_tests": "check_tests", "usage_examples": ""}, "no 'required_files'"),
    ({"unit_tests": "unit_tests", "check_tests": "check_tests", "usage_examples": "", "required_files": "r.txt"},
     "must be a list"),
    ({"unit_tests": "../x", "check_tests": "c", "usage_examples": "", "required_files": []}, "'../x' is not a path"),
    ({"unit_tests": "u", "check_tests": "c", "usage_examples": [""], "required_files": []}, "'' is not a path"),
])
def test_a_config_the_script_cannot_copy_from_is_an_error(tmp_path, config, message) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ProjectGenError, match=message):
        copied_entries(tmp_path)


def script_copy(task: Path, output: Path, entry: str) -> None:
    """What calc_passrate.py's copy_files does, step by step, with the real `cp` (written here anew)."""
    target = f"{output}/{entry}"
    if Path(target).is_dir():
        shutil.rmtree(target)
    elif Path(target).exists():
        Path(target).unlink()
    Path(target.rsplit("/", 1)[0]).mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", f"{task}/{entry}", target], capture_output=True, check=False)


def test_copies_land_where_cp_puts_them(tmp_path) -> None:
    task, output = tmp_path / "task", tmp_path / "output"
    for path, text in {"unit_tests/test_a.py": "def test_a():\n    pass\n", "unit_tests/data/x.txt": "x",
                       "tests/test_b.py": "b = 1\n", "templates/mit.txt": "MIT", "docs/requirements.txt": "",
                       "setup_shell_script.sh": "pip install -r requirements.txt\n"}.items():
        (task / path).parent.mkdir(parents=True, exist_ok=True)
        (task / path).write_text(text, encoding="utf-8")
    (task / "empty_fixtures").mkdir()
    for path, text in {"pkg/core.py": "x = 1\n", "unit_tests/test_generated.py": "fake = 1\n",
                       "tests/old.py": "old = 1\n", "setup_shell_script.sh": "echo generated\n"}.items():
        (output / path).parent.mkdir(parents=True, exist_ok=True)
        (output / path).write_text(text, encoding="utf-8")
    candidate = folder_files(output)
    entries = ["unit_tests", "tests/", "templates/*", "pyproject", "docs/requirements.txt", "empty_fixtures",
               "setup_shell_script.sh"]
    for entry in entries:
        candidate = copied_into(candidate, task, entry)
        script_copy(task, output, entry)
    assert candidate == folder_files(output)
    # the output's own tests are gone; a trailing slash copies into the folder; a glob copies nothing
    assert candidate == {"docs/requirements.txt": "", "empty_fixtures/": "", "pkg/core.py": "x = 1\n",
                         "setup_shell_script.sh": "", "templates/": "", "tests/tests/test_b.py": "b = 1\n",
                         "unit_tests/data/x.txt": "", "unit_tests/test_a.py": "def test_a():\n    pass\n"}


def test_a_crlf_file_reads_as_codes_opens_it(tmp_path) -> None:
    """CodeS opens every file in text mode, so CRLF and lone CR line ends read as LF; kept, they would be
    tokens of their own ("\\r\\n") that the output's LF copy of the same file does not have."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_bytes(b"def f(a):\r\n    return a\r\nx = 1\ry = 2\n")
    with open(tmp_path / "pkg" / "m.py", encoding="utf-8") as file:  # how CodeS's stack_source_code reads it
        as_codes_reads = file.read()
    assert folder_files(tmp_path) == {"pkg/m.py": as_codes_reads}
    assert as_codes_reads == "def f(a):\n    return a\nx = 1\ny = 2\n"


def test_an_empty_folder_is_a_directory_of_codes_tree() -> None:
    pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    from projectgen.evaluation.sketchbleu import python_parser
    from projectgen.evaluation.sketchbleu_codes import tree_expressions

    files = {"m.py": "import os\nx = f(1)\n"}
    roots = [[expression for expression in tree_expressions(repository, python_parser(), {})
              if expression.startswith("(Root")] for repository in (files, {**files, "templates/": ""})]
    assert roots == [["(Root (File (expression_statement)))"],
                     ["(Root (File (expression_statement)) (Directory))"]]
