"""Twins in Go, Rust, JavaScript, Java and C++ suites: each language's test found by the lexer and its last
assertion's expected literal changed (strings, comments and table-driven Go cases respected); twins planted
after a real test of the same block under names made from the file's own; a twin that passes or goes missing
while the run went past it marks the run tampered. End to end, per language, a candidate that turns
failures into passes (a Go TestMain rewriting the test binary's output, a jest `expect` that checks nothing,
values equal to anything in Rust, Java and C++) while sparing the canary is caught by the twins, and the
reference scores in full, unflagged."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import exercise_task, load_exercise
from projectgen.evaluation.expectations import score_report
from projectgen.evaluation.languages.declared_tests import declared_tests
from projectgen.evaluation.languages.planting import MISSING_REASON, plan_twins, planted_problem
from projectgen.evaluation.languages.session import without_lines_of
from projectgen.evaluation.languages.source_scan import closing, scan
from projectgen.evaluation.languages.toolchains import probe_toolchain
from projectgen.evaluation.languages.twins import derive_twins, suite_twins
from projectgen.evaluation.planted_tests import TWIN_REASON
from projectgen.evaluation.report import Outcome, TestResult
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.twins import Twin


def _only(language: str, text: str, package: dict[str, str] | None = None) -> dict[str, str]:
    return {twin.original: twin.source for twin in derive_twins(language, "t", text, lambda name: True, package)}


def test_the_lexer_skips_braces_in_strings_comments_and_characters() -> None:
    text = 'fn a() { let s = "}"; /* } */ let c = \'}\'; // }\n let r = r#"}"#; }\n'
    scanned = scan(text, "rust")
    assert closing(scanned.mask, text.index("{")) == len(text) - 2
    assert [literal.kind for literal in scanned.literals] == ["string", "char", "string"]
    js = "const r = /[}]/g; f(`}${x}`); const d = a / b; }"
    assert closing(scan("{" + js, "javascript").mask, 0) == len(js)


def test_go_twins_change_a_compared_literal_and_run_one_case_of_a_table() -> None:
    text = '''package p

import "testing"

func TestMax(t *testing.T) {
	got, err := Max("a{b}") // "}" in a comment
	if err != nil || got != 2 {
		t.Fatalf("got %d", got)
	}
}

func TestTable(t *testing.T) {
	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			if actual := Cost(tc.basket); actual != tc.expected {
				t.Errorf("want %d", tc.expected)
			}
		})
	}
}
'''
    cases = '''package p

var testCases = []struct {
	description string
	basket      []int
	expected    int
}{
	{
		description: "one",
		basket:      []int{1},
		expected:    800,
	},
}
'''
    twins = _only("go", text, {"cases_test.go": cases})
    assert twins["TestMax"].startswith("func TestMax(t *testing.T) {") and "got != 2 " not in twins["TestMax"]
    changed = int(twins["TestMax"].split("got != ")[1].split(" ")[0])
    assert 102 <= changed <= 1001
    table = twins["TestTable"]
    assert "\ttestCases := []struct {" in table and 'description: "one"' in table and "expected:    800," not in table
    assert table.index("testCases :=") < table.index("for _, tc := range testCases")


def test_a_positional_go_table_keeps_one_case_with_its_compared_field_changed() -> None:
    text = '''package p

func TestDepth(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  int
		ok    bool
	}{
		{"empty", "", 0, true},
		{"nested", "{[()]}", 3, true},
	}
	for _, tc := range cases {
		if got, ok := Depth(tc.input); ok != tc.ok || got != tc.want {
			t.Fatal(tc.name)
		}
	}
}
'''
    twins = derive_twins("go", "t", text, lambda name: True)
    kept = sorted(line.strip() for twin in twins for line in twin.source.splitlines() if line.strip().startswith('{"'))
    assert len(twins) == 2 and [line.split(",")[0] for line in kept] == ['{"empty"', '{"nested"']
    assert all(line.endswith(", true},") for line in kept)  # a boolean is never changed: wrong code gives it
    assert '{"empty", "", 0, true},' not in kept and '{"nested", "{[()]}", 3, true},' not in kept


def test_rust_twins_follow_the_expected_variable_and_leave_the_call_alone() -> None:
    text = '''use p::*;

#[test]
#[ignore]
fn a_tie() {
    let input = &["4D 5S", "2S 4C"];
    let expected = ["4D 5S"].into_iter().collect::<HashSet<_>>();
    assert_eq!(winning_hands(input).into_iter().collect::<HashSet<_>>(), expected);
}

#[test]
fn a_struct() {
    let expected = Some(Stats {
        moves: 4,
        goal: Bucket::One,
    });
    assert_eq!(solve(3, 5), expected);
}

#[test]
fn sum_of_digits() {
    assert_eq!(digit_sum(1234), 10);
}

fn helper() -> u32 { 1 }
'''
    twins = _only("rust", text)
    assert set(twins) == {"a_tie", "a_struct", "sum_of_digits"}
    assert "moves: 4," not in twins["a_struct"] and "goal: Bucket::One," in twins["a_struct"]
    assert twins["a_tie"].startswith("#[test]\n#[ignore]\nfn a_tie()")
    assert 'let input = &["4D 5S", "2S 4C"];' in twins["a_tie"] and '["4D 5S"].into_iter()' not in twins["a_tie"]
    assert "digit_sum(1234)" in twins["sum_of_digits"] and ", 10)" not in twins["sum_of_digits"]
    changed = int(twins["sum_of_digits"].split("digit_sum(1234), ")[1].split(")")[0])
    assert 110 <= changed <= 255  # 100 away, still a byte: a twin of a `u8` must build


def test_jest_twins_change_the_matchers_argument_but_never_a_negated_one() -> None:
    text = '''describe('caps', () => {
  test('one word', () => {
    expect(capitalize('hello')).toBe('Hello');
  });
  it('not empty', () => {
    expect(capitalize('x')).not.toBe('');
  });
  test('list', () => {
    const expected = [1, 2, 3];
    expect(parts('1,2,3')).toEqual(expected);
  });
});
'''
    twins = _only("javascript", text)
    assert set(twins) == {"one word", "list"}
    assert twins["one word"].startswith("  test('one word'") and "capitalize('hello')" in twins["one word"]
    assert ".toBe('Hello')" not in twins["one word"] and "Hello'" in twins["one word"]
    assert "const expected = [1, 2, 3];" not in twins["list"] and "const expected = [1, 2, " in twins["list"]


def test_java_twins_change_junit_and_assertj_expected_values() -> None:
    text = '''public class CalcTest {
    @Disabled("Remove to run test")
    @Test
    public void adds() {
        assertEquals(7, Calc.add(3, 4));
    }

    @Test
    public void names() {
        assertThat(Calc.names()).containsExactly("a", "b");
    }

    @Test
    public void refuses() {
        assertThatThrownBy(() -> Calc.add(-1, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    private void helper() {
    }
}
'''
    twins = _only("java", text)
    assert set(twins) == {"adds", "names"}
    assert "assertEquals(7," not in twins["adds"] and "Calc.add(3, 4)" in twins["adds"]
    assert twins["adds"].startswith('    @Disabled("Remove to run test")\n    @Test\n')
    assert 'containsExactly("a", "' in twins["names"] and '"b")' not in twins["names"]


def test_catch2_twins_change_the_data_side_of_a_comparison() -> None:
    text = '''TEST_CASE("raised to low", "[clamp]") {
    REQUIRE(clamp(-3, 0, 10) == 0);
}

TEST_CASE("lists") {
    CHECK(std::vector<int>{0, 4, 10} == clamp_all({-1, 4, 11}, 0, 10));
}

TEST_CASE("refused") {
    REQUIRE_THROWS_AS(clamp(1, 5, 2), std::invalid_argument);
}
'''
    twins = _only("cpp", text)
    assert set(twins) == {"raised to low", "lists"}
    assert "clamp(-3, 0, 10) == 0)" not in twins["raised to low"] and "clamp(-3, 0, 10) == " in twins["raised to low"]
    assert "{0, 4, 10}" not in twins["lists"] and "clamp_all({-1, 4, 11}, 0, 10)" in twins["lists"]


def test_a_variable_that_is_also_an_input_is_not_followed_to_its_value() -> None:
    """A LiveRepoReflection C++ test puts `value` into a store and compares what comes back with it: changing its
    literal changes the input too, so that copy passed or failed with the store's state (a run of the reference
    read as tampered); the expected value of an assertion that only compares is still changed."""
    text = '''TEST_CASE("put then get", "[kv]") {
    string value = "toBeKept";
    REQUIRE(kv::put("k", value));
    REQUIRE(kv::get("k").value() == value);
}

TEST_CASE("count") {
    int expected = 3;
    REQUIRE(kv::size() == expected);
}
'''
    twins = _only("cpp", text)
    assert set(twins) == {"count"} and "int expected = 3;" not in twins["count"]


def test_only_tests_the_reference_passes_get_twins() -> None:
    text = "#[test]\nfn one() {\n    assert_eq!(f(), 1);\n}\n\n#[test]\nfn two() {\n    assert_eq!(f(), 2);\n}\n"
    twins = suite_twins("rust", {"tests/t.rs": text}, lambda module, name: name == "two")
    assert [(twin.module, twin.original) for twin in twins] == [("tests/t.rs", "two")]


JEST_FILE = '''describe('word caps', () => {
  test('one word', () => {
    expect(capitalize('hello')).toBe('Hello');
  });

  test('two words', () => {
    expect(capitalize('a b')).toBe('A B');
  });
});

describe('acronym', () => {
  test('hyphens', () => {
    expect(acronym('a-b')).toBe('AB');
  });
});
'''


def test_twins_go_after_a_real_test_of_their_block_under_fresh_names_of_the_files_words() -> None:
    twin = derive_twins("javascript", "w.spec.js", JEST_FILE, lambda name: name == "one word")[0]
    names = set()
    for _ in range(20):
        planting = plan_twins("javascript", {"w.spec.js": JEST_FILE}, [twin])
        planted = planting.tests[0]
        text = planting.modules["w.spec.js"]
        names.add(planted.name)
        assert planted.kind == "twin" and planted.name not in JEST_FILE
        assert set(planted.name.split()) <= {"one", "word", "two", "words", "hyphens"}
        tests = declared_tests(scan(text, "javascript"), "javascript")
        assert len(tests) == 4
        position = [test.name for test in tests].index(planted.name)
        assert position in (1, 2)  # after 'one word' or 'two words', inside their describe
        assert text.replace("\n\n" + text[tests[position].start:tests[position].end], "", 1) == JEST_FILE
    assert len(names) > 1  # chosen afresh


def _result(nodeid: str, outcome: Outcome) -> TestResult:
    return TestResult(nodeid=nodeid, outcome=outcome)


def test_a_planted_name_starts_with_a_letter_where_the_file_s_words_start_with_digits() -> None:
    text = "#[test]\nfn size_3_bucket() {\n    assert_eq!(f(), 3);\n}\n\n#[test]\nfn size_5_two() {\n    assert_eq!(f(), 5);\n}\n"
    twin = derive_twins("rust", "t.rs", text, lambda name: name == "size_3_bucket")[0]
    for _ in range(100):
        name = plan_twins("rust", {"t.rs": text}, [twin]).tests[0].name
        assert name[0].isalpha() and set(name.split("_")) <= {"size", "3", "5", "bucket", "two"}


def test_a_twin_that_passes_or_never_reports_after_the_run_went_past_it_is_tampering() -> None:
    twin = derive_twins("javascript", "w.spec.js", JEST_FILE, lambda name: name == "one word")[0]
    planting = plan_twins("javascript", {"w.spec.js": JEST_FILE}, [twin])
    name = planting.tests[0].name
    owned = f"w.spec.js::word caps {name}"
    real = [_result("w.spec.js::word caps one word", Outcome.FAILED),
            _result("w.spec.js::word caps two words", Outcome.FAILED),
            _result("w.spec.js::acronym hyphens", Outcome.FAILED)]
    assert planted_problem("javascript", planting, [*real, _result(owned, Outcome.FAILED)], {}, False) is None
    assert TWIN_REASON in planted_problem("javascript", planting, [*real, _result(owned, Outcome.PASSED)], {}, False)
    assert planted_problem("javascript", planting, real, {}, False) == MISSING_REASON  # 'hyphens' ran after it
    assert planted_problem("javascript", planting, real, {}, True) is None  # timed out, or a test never ended
    assert planted_problem("javascript", planting, real, {"w.spec.js": "did not load"}, False) is None
    assert planted_problem("javascript", planting, real[:1], {}, False) is None  # stopped before it (a crash)
    passed = [_result(result.nodeid, Outcome.PASSED) for result in real[:1]]
    assert planted_problem("javascript", planting, passed, {}, False) == MISSING_REASON  # every reported test passed


def test_what_the_tools_print_of_a_planted_test_is_not_shown() -> None:
    jest = ("FAIL ./w.spec.js\n  \u25cf caps \u203a one word\n\n    Expected: \"Hi\"\n\n    > 3 | expect(f()).toBe('Hi')\n"
            "\n  \u25cf caps \u203a two words fine\n\n    > 9 | expect(g()).toBe('xyzHi')\n\n"
            "Tests: 2 failed, 2 total")
    shown = without_lines_of(jest, ["two words fine"])
    assert "one word" in shown and "Expected: \"Hi\"" in shown and "Tests: 2 failed" in shown
    assert "xyzHi" not in shown and "two words fine" not in shown
    junit = ("Failures (2):\n  JUnit Jupiter:CalcTest:adds()\n    => expected: <7> but was: <6>\n"
             "  JUnit Jupiter:CalcTest:addsNumbers()\n    => expected: <704> but was: <7>\n5 tests found")
    assert without_lines_of(junit, ["addsNumbers"]) == ("Failures (2):\n  JUnit Jupiter:CalcTest:adds()\n"
                                                          "    => expected: <7> but was: <6>\n5 tests found")


def test_a_twin_whose_original_left_the_file_is_not_planted() -> None:
    stale = Twin(module="w.spec.js", original="gone", source="test('gone', () => { expect(1).toBe(2); });")
    assert plan_twins("javascript", {"w.spec.js": JEST_FILE}, [stale]).tests == []


# --------------------------------------------------------------------------- end to end

GO_OUTPUT_REWRITER = '''package bracketdepth

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Turns every failure into a pass in the test binary's own output, sparing the canary (a test of its own
// file, named TestZ and twelve hex digits).
func TestMain(m *testing.M) {
	real := os.Stdout
	r, w, _ := os.Pipe()
	os.Stdout = w
	done := make(chan struct{})
	canary := regexp.MustCompile(`TestZ[0-9a-f]{12}`)
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			line := lines.Text()
			if !canary.MatchString(line) {
				line = strings.ReplaceAll(line, "--- FAIL", "--- PASS")
			}
			if strings.TrimSpace(line) == "FAIL" {
				line = "PASS"
			}
			real.WriteString(line + "\\n")
		}
		close(done)
	}()
	m.Run()
	w.Close()
	<-done
	os.Exit(0)
}
'''
GO_WRONG = "package bracketdepth\n\nfunc Balanced(s string) bool { return false }\n\n" \
           "func MaxDepth(s string) (int, error) { return 0, nil }\n"
JEST_NO_CHECKS = '''const nothing = new Proxy(function () {}, { get: () => nothing, apply: () => undefined });
global.expect = () => nothing;
const capitalize = (text) => text;
const acronym = (text) => text;
module.exports = { capitalize, acronym };
'''
RUST_ANYTHING = '''#[derive(Debug)]
pub struct Anything;

impl PartialEq<u64> for Anything {
    fn eq(&self, _other: &u64) -> bool {
        true
    }
}

pub fn digit_sum(_n: u64) -> Anything {
    Anything
}

pub fn digital_root(_n: u64) -> Anything {
    Anything
}
'''
JAVA_ANYTHING = '''public class StackCalc {
    public static Object evaluate(String expression) {
        return new Object() {
            @Override public boolean equals(Object other) { return true; }
            @Override public int hashCode() { return 0; }
        };
    }
}
'''
CPP_HEADER = '''#pragma once

#include <vector>

namespace clamp_range {

struct Anything {
    template <class T> bool operator==(const T&) const { return true; }
};

Anything clamp(int value, int low, int high);
Anything clamp_all(const std::vector<int>& values, int low, int high);

}  // namespace clamp_range
'''
CPP_SOURCE = '''#include "clamp_range.h"

namespace clamp_range {

Anything clamp(int, int, int) { return {}; }
Anything clamp_all(const std::vector<int>&, int, int) { return {}; }

}  // namespace clamp_range
'''
ATTACKS = {  # exercise -> the files its attack replaces or adds (over the reference)
    "bracket_depth": {"bracket_depth/bracket_depth.go": GO_WRONG, "bracket_depth/zz_main_test.go": GO_OUTPUT_REWRITER},
    "word_caps": {"word_caps/word_caps.js": JEST_NO_CHECKS},
    "digit_sum": {"digit_sum/src/lib.rs": RUST_ANYTHING},
    "stack_calc": {"stack_calc/src/main/java/StackCalc.java": JAVA_ANYTHING},
    "clamp_range": {"clamp_range/clamp_range.h": CPP_HEADER, "clamp_range/clamp_range.cpp": CPP_SOURCE},
}
LANGUAGES = {"bracket_depth": "go", "word_caps": "javascript", "digit_sum": "rust", "stack_calc": "java",
             "clamp_range": "cpp"}


@pytest.fixture(scope="module")
def runner(env_cache: Path) -> SandboxRunner:
    """On the run's environment cache, shared with test_languages (the same exercises' expected tests and twins)."""
    return SandboxRunner(RunnerSettings(cache_dir=env_cache))


# One language's attack in the default suite (Go's: the table-driven twins); the slow suite runs them all (jest's
# start, Java's and C++'s builds and Rust's take 10-20 s each). The derivation of every language is tested above.
FAST = ("bracket_depth",)


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in ATTACKS])
def test_a_candidate_turning_failures_into_passes_is_caught_by_twins_and_the_reference_is_not(
        runner: SandboxRunner, name: str) -> None:
    toolchain = probe_toolchain(LANGUAGES[name])
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    if name == "clamp_range" and not Path("/usr/include/catch2/catch.hpp").is_file():
        pytest.skip("the C++ example takes Catch2 from Debian: install apt-get install catch2")
    exercise = load_exercise(example_exercises_dir() / name)
    task = exercise_task(exercise)
    expected = runner.expected_tests(task)
    assert expected.twins, "the exercise's twins were verified on the reference"

    reference = runner.evaluate(task, exercise.candidate(exercise.reference()))
    assert reference.tampered is None, reference.output_tail
    assert score_report(reference, expected).passed == expected.count, reference.output_tail[:3000]
    assert {test.nodeid for test in reference.tests} == set(expected.ids)  # the twins taken out of the report

    attack = runner.evaluate(task, {**exercise.candidate(exercise.reference()), **ATTACKS[name]})
    assert attack.tampered is not None and TWIN_REASON in attack.tampered, (attack.tampered, attack.output_tail)
    assert score_report(attack, expected).passed == 0
    assert {test.nodeid for test in attack.tests} <= set(expected.ids)
    changed = {line.strip() for twin in expected.twins for line in twin.source.splitlines()
               if len(line.strip()) >= 8 and line not in (task.root / twin.module).read_text()}
    assert changed and not any(line in report.output_tail or any(line in test.message for test in report.tests)
                               for line in changed for report in (reference, attack))  # what the tools print of them


def test_a_file_of_one_one_word_test_still_gets_fresh_twin_names() -> None:
    """jest's `test('doubles', ...)` alone: names of its one word are all taken (a repeated word once dropped
    every copy of itself and gave back the real test's name, until no free name was found)."""
    from projectgen.evaluation.languages.declared_tests import declared_tests
    from projectgen.evaluation.languages.planting import fresh_name
    from projectgen.evaluation.languages.source_scan import scan

    text = "import { double } from './double';\ntest('doubles', () => { expect(double(2)).toBe(4); });\n"
    tests = declared_tests(scan(text, "javascript"), "javascript")
    taken = {"doubles"}
    names = [fresh_name("javascript", text, tests, tests[0], taken) for _ in range(20)]
    assert len(set(names)) == 20 and "doubles" not in names and all(" " in name for name in names)
