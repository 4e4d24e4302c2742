"""Prompt templates as files, loaded by name.

Each ``NAME.md`` holds a system part and a user part separated by a line
``=== user ===``. Placeholders are ``${name}`` (`string.Template`), so JSON examples
inside a prompt need no escaping. A file may open with an ``<!-- ... -->`` comment (where its
wording comes from), which is not sent. Agents take a `Prompt` argument, so a user can
pass their own text (``Prompt.from_text``) without touching these files.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from string import Template

from projectgen.errors import ProjectGenError

_SEPARATOR = "=== user ==="
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"


@dataclass(frozen=True)
class Prompt:
    """A system + user message pair with ``${placeholders}``."""

    name: str
    system: str
    user: str

    @classmethod
    def from_text(cls, text: str, name: str = "custom") -> Prompt:
        """Split a template file's text at the ``=== user ===`` line, its opening comment left out."""
        stripped = text.lstrip()
        if stripped.startswith(_COMMENT_OPEN) and _COMMENT_CLOSE in stripped:
            text = stripped.split(_COMMENT_CLOSE, 1)[1]
        system, sep, user = text.partition(_SEPARATOR)
        if not sep:
            raise ProjectGenError(f"prompt {name!r} has no '{_SEPARATOR}' line separating system and user parts")
        return cls(name=name, system=system.strip() + "\n", user=user.strip() + "\n")

    def messages(self, **values: object) -> list[tuple[str, str]]:
        """The chat messages with every placeholder filled; a missing value is a bug, so it raises."""
        try:
            return [("system", Template(self.system).substitute(values)),
                    ("human", Template(self.user).substitute(values))]
        except KeyError as exc:
            raise ProjectGenError(f"prompt {self.name!r} needs a value for {exc.args[0]!r}") from None


def load_prompt(name: str) -> Prompt:
    """The bundled prompt ``NAME.md``."""
    try:
        text = resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProjectGenError(f"no bundled prompt named {name!r} (see {', '.join(prompt_names())})") from None
    return Prompt.from_text(text, name)


def prompt_names() -> list[str]:
    """Names of the bundled prompts."""
    return sorted(p.name[:-3] for p in resources.files(__package__).iterdir() if p.name.endswith(".md"))
