"""How a prompt names the tests whose output it shows: the feedback suite (`Settings.feedback_suite`).

"check" keeps the words the prompts have always had: recorded replays and the call cache key on the exact
prompt text, so they must not change. "unit" is LiveCoder's execution feedback where a benchmark publishes
no visible tests: the prompt says "the tests" and no more (nothing about where they come from), so a model is
not told these are check tests it could read.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType

from projectgen.config import FeedbackSuite


@dataclass(frozen=True)
class SuiteWords:
    """The words for the prompts' ``${tests}``, ``${test_errors}`` and ``${test_results}``."""

    tests: str  # "its check tests fail", "2 of 3 check tests pass"
    test_errors: str  # the error log's heading: "# The check-test errors"
    test_results: str  # the code judge's heading: "# Check-test results: 2 of 3 passed"

    def values(self) -> dict[str, str]:
        """The prompt values, by placeholder name."""
        return asdict(self)


SUITE_WORDS: Mapping[FeedbackSuite, SuiteWords] = MappingProxyType({
    "check": SuiteWords(tests="check tests", test_errors="check-test errors", test_results="Check-test results"),
    "unit": SuiteWords(tests="tests", test_errors="test errors", test_results="Test results"),
})


def suite_words(suite: FeedbackSuite) -> SuiteWords:
    """The words naming `suite`'s tests in a prompt."""
    return SUITE_WORDS[suite]
