"""Where a run folder is handled: issue 28's measure, counted by running the demo rather than by hand.

Runs `Run.open(...).run()` on the bundled kvstore demo (a replay, offline) under a profiler and lists every
function that holds the run folder itself (the `RunFolder`, its root as a path or string, or an object
carrying one, such as the `Run`) as an argument or local: where it is made, locked, asked for a path, read, written or passed on. A function
given one file of the folder (``UsageRecorder(folder.usage)``) handles that file, not the folder, and is
not counted. Then once more for a resume of the finished run, whose extra places are listed apart.

Run: .venv/bin/python scripts/run_folder_places.py
"""
from __future__ import annotations

import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import projectgen
from projectgen import (ModelRoles, Run, RunParts, RunRequest, ScriptedChatModel, example_script_path,
                        example_task_path, load_task)
from projectgen.runs.folder import RunFolder

PACKAGE = Path(projectgen.__file__).resolve().parent


def places_while(root: Path, work: Callable[[], Any]) -> list[str]:
    """module:function of every projectgen function that held the run folder while `work` ran."""
    found: dict[str, None] = {}
    names = {str(root), str(root.resolve())}

    def is_folder(value: Any) -> bool:
        if isinstance(value, RunFolder):
            return str(value.root) in names
        if isinstance(value, Path):
            return str(value) in names
        return isinstance(value, str) and value in names

    def holds_folder(value: Any, used: tuple[str, ...]) -> bool:
        """The folder itself, or an object carrying it in a field (the `Run`) that the function's code reads
        (`used`: the names it uses)."""
        fields = getattr(value, "__dataclass_fields__", None) or getattr(value, "__dict__", None)
        if is_folder(value) or fields is None or isinstance(value, (RunFolder, type)):
            return is_folder(value)
        return any(is_folder(getattr(value, name, None)) for name in fields if name in used) or (
            "out_dir" in used and is_folder(getattr(value, "out_dir", None)))

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        path = Path(frame.f_code.co_filename)
        if PACKAGE not in path.parents:
            return
        if any(holds_folder(value, frame.f_code.co_names) for value in list(frame.f_locals.values())):
            module = path.relative_to(PACKAGE.parent).with_suffix("").as_posix().replace("/", ".")
            found.setdefault(f"{module}:{frame.f_code.co_qualname}")

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return list(found)


def main() -> None:
    task = load_task(example_task_path("kvstore"))
    models = ModelRoles(ScriptedChatModel.from_file(example_script_path("kvstore.demo")))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "run"
        run = places_while(root, lambda: Run.open(RunRequest.for_task(task), root, RunParts(models=models)).run())
        resume = places_while(root, lambda: Run.resume(root, RunParts(models=models)).run())
    report("Run.open", run)
    report("Run.resume (what the run did not do)", [place for place in resume if place not in run])


def report(what: str, places: list[str]) -> None:
    """The places outside `RunFolder`, listed, and the `RunFolder` methods used (the folder itself, its `RunLayout`'s
    paths included)."""
    own = [place for place in places if ":RunFolder." in place or ":RunLayout." in place]
    outside = [place for place in places if place not in own]
    print(f"{what}: {len(outside)} places outside RunFolder, in {len({p.split(':')[0] for p in outside})} modules")
    for place in outside:
        print(f"  {place}")
    print(f"  and {len(own)} of RunFolder's own methods: " + ", ".join(p.split(".")[-1] for p in own))

if __name__ == "__main__":
    main()
