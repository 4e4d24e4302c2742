"""langgraph.json's graphs for `langgraph dev` / LangGraph Studio: both load, describe their input and
context as JSON schemas of plain values, and run from ``{"task": "kvstore"}`` with models from the
environment; `langgraph dev` itself serves them (when langgraph-cli[inmem] is installed)."""
from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from projectgen.datasets.examples import example_script_path
from projectgen.errors import ProjectGenError

from test_support import free_port

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = {"projectgen": "project_graph", "livecoder": "attempts_graph"}


@pytest.fixture()
def scripted_env(monkeypatch, tmp_path: Path) -> dict[str, str]:
    """The environment `langgraph dev` would have: the demo's replay script as the model (what
    `projectgen demo` replays), the attempts graph's folders under tmp_path."""
    env = {"PROJECTGEN_MODEL": f"scripted:{example_script_path('kvstore.demo')}",
           "PROJECTGEN_STUDIO_DIR": str(tmp_path / "studio")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def load_graphs() -> dict[str, Any]:
    """Every graph langgraph.json names, loaded as `langgraph dev` does (module path : factory, no arguments)."""
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    graphs = {}
    for name, target in config["graphs"].items():
        path, _, attribute = target.partition(":")
        module = importlib.import_module(path.removeprefix("./").removesuffix(".py").replace("/", "."))
        graphs[name] = getattr(module, attribute)()
    return graphs


def test_langgraph_json_names_the_project_and_the_attempts_graph() -> None:
    graphs = load_graphs()  # no model needed to load them: Studio lists graphs before any run
    assert {name: getattr(graph, "name") for name, graph in graphs.items()} == {"projectgen": "projectgen",
                                                                               "livecoder": "livecoder"}
    assert set(graphs["projectgen"].get_graph().nodes) >= {"load_task", "projectgen"}
    assert set(graphs["livecoder"].get_graph().nodes) >= {"load_task", "livecoder"}


def test_input_output_and_context_schemas_are_json_schemas_of_plain_values() -> None:
    for name, graph in load_graphs().items():
        schemas = {"input": graph.get_input_jsonschema(), "output": graph.get_output_jsonschema(),
                   "context": graph.get_context_jsonschema()}
        json.dumps(schemas)  # what the server sends
        assert schemas["input"]["required"] == ["task"] and schemas["input"]["properties"]["task"]["type"] == "string"
        assert schemas["context"]["properties"]["model"]["type"] == "string"
        assert "repository" in schemas["output"]["properties"]
    assert load_graphs()["livecoder"].get_context_jsonschema()["properties"]["attempts"]["type"] == "integer"


def test_the_project_graph_runs_from_a_task_name(scripted_env, tmp_path: Path) -> None:
    from projectgen.runs.studio import project_graph

    graph = project_graph().copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": "t"}}
    state = asyncio.run(graph.ainvoke({"task": "kvstore"}, config))
    assert state["task_id"] == "kvstore" and "kvstore/store.py" in state["repository"]
    assert [v["stage"] for v in state["verdicts"] if v["accepted"]] == ["architecture", "skeleton", "code"]
    assert "task" not in state  # the output is ProjectState; the folder stays in the graph's own state
    assert Path(asyncio.run(graph.aget_state(config)).values["task"]).name == "kvstore"
    # driven like every run: the thread's folder holds its trace (nodes named from the inner graph's root) and
    # every model call
    folder = tmp_path / "studio" / "t"
    events = trace_events(folder)
    assert events[0]["event"] == "run_start" and events[-1] == {**events[-1], "event": "run_end", "status": "finished"}
    last_verdicts = {e["stage"]: e["data"]["verdicts"][-1]["accepted"] for e in events
                     if e.get("node", "").startswith("judge_")}
    assert last_verdicts == {"architecture": True, "skeleton": True, "code": True}
    assert (folder / "prompts.jsonl").stat().st_size > 0 and (folder / "usage.jsonl").stat().st_size > 0


def trace_events(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]


def test_the_attempts_graph_runs_from_a_task_name_with_a_context_of_plain_values(scripted_env, monkeypatch,
                                                                                 tmp_path) -> None:
    from projectgen.runs.studio import attempts_graph

    graph = attempts_graph().copy(update={"checkpointer": InMemorySaver()})
    model = scripted_env["PROJECTGEN_MODEL"]
    monkeypatch.delenv("PROJECTGEN_MODEL")  # the context's model stands in for the environment's
    state = asyncio.run(graph.ainvoke({"task": "kvstore"}, {"configurable": {"thread_id": "thread-1"}},
                                      context={"model": model, "attempts": 1}))
    assert state["final"] == {"source": "best", "attempt": 1, "score": 1.0}
    assert [record["attempt"] for record in state["records"]] == [1]
    folder = tmp_path / "studio" / "thread-1"
    assert (folder / "attempts" / "1" / "attempt.json").is_file() and (folder / "best").is_dir()


@pytest.mark.parametrize("factory, context", [("project_graph", {}), ("attempts_graph", {"attempts": 1})])
def test_both_graphs_surface_a_review_interrupt_and_resume_with_a_command(scripted_env, factory: str,
                                                                          context: dict) -> None:
    """With the context's `review`, a Studio run pauses where the architecture awaits a decision (the
    interrupt reaches the outer graph through the inner ones), and Studio's resume value goes on from
    there, also when the resume's context does not name the stages again (they are kept in the thread's
    state)."""
    from langgraph.types import Command

    from projectgen.runs import studio

    graph = getattr(studio, factory)().copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": f"review-{factory}"}}
    paused = asyncio.run(graph.ainvoke({"task": "kvstore"}, config, context={**context, "review": ["architecture"]}))
    (request,) = [pending.value for pending in paused["__interrupt__"]]
    assert (request["stage"], request["iteration"], request["judge"]["accepted"]) == ("architecture", 2, True)
    snapshot = asyncio.run(graph.aget_state(config))
    assert snapshot.next == (("projectgen",) if factory == "project_graph" else ("livecoder",))
    assert [pending.id for pending in snapshot.interrupts] == [pending.id for pending in paused["__interrupt__"]]
    state = asyncio.run(graph.ainvoke(Command(resume={"action": "reject", "feedback": "name the storages"}),
                                      config, context=context))
    assert state["__interrupt__"][0].value["iteration"] == 3
    state = asyncio.run(graph.ainvoke(Command(resume={"action": "approve"}), config, context=context))
    assert "__interrupt__" not in state and "kvstore/store.py" in state["repository"]
    marks = [(e["event"], e.get("stage")) for e in trace_events(Path(scripted_env["PROJECTGEN_STUDIO_DIR"])
                                                                 / f"review-{factory}") if e["event"].startswith(("run_", "review_"))]
    assert marks == [("run_start", None), ("review_requested", "architecture"), ("run_resumed", None),
                     ("review_requested", "architecture"), ("run_resumed", None), ("run_end", None)]
    if factory == "attempts_graph":
        assert state["final"] == {"source": "best", "attempt": 1, "score": 1.0}
        assert state["records"][0]["stages"]["architecture"]["reviews"] == ["reject", "approve"]
    else:
        assert [r["action"] for r in state["reviews"]] == ["reject", "approve"]


def test_the_review_context_is_a_list_of_stage_names() -> None:
    from projectgen.runs.studio import project_graph

    schema = project_graph().get_context_jsonschema()["properties"]["review"]
    assert schema["type"] == "array" and schema["items"]["enum"] == ["architecture", "skeleton"]


def test_a_missing_model_or_task_is_a_one_line_error(monkeypatch) -> None:
    from projectgen.runs.studio import project_graph

    monkeypatch.delenv("PROJECTGEN_MODEL", raising=False)
    with pytest.raises(ProjectGenError, match="set PROJECTGEN_MODEL .* or give the run's context a model"):
        asyncio.run(project_graph().ainvoke({"task": "kvstore"}))
    with pytest.raises(ProjectGenError, match="nope: no such task folder or bundled example"):
        asyncio.run(project_graph().ainvoke({"task": "nope"}, context={"model": "scripted:x.json"}))


@pytest.mark.parametrize("factory, context, message", [
    ("project_graph", {"model": "foo:bar"}, "unknown model provider 'foo' in 'foo:bar'"),
    ("attempts_graph", {"model": "refrence", "attempts": 1}, "unknown model 'refrence': did you mean 'reference'?"),
    ("project_graph", {"model": "scripted:x.json", "review": ["code"]}, "code"),
])
def test_a_users_mistake_reaches_the_client_as_its_one_line(factory: str, context: dict, message: str,
                                                             tmp_path: Path, monkeypatch) -> None:
    """langgraph-api sends a failed run's message only for built-in errors (ValueError, ...), and "An internal
    error occurred" for any other class: the nodes raise the user's mistake as a ValueError with its line."""
    from projectgen.runs import studio

    monkeypatch.setenv("PROJECTGEN_STUDIO_DIR", str(tmp_path / "studio"))
    graph = getattr(studio, factory)()
    with pytest.raises(ProjectGenError) as raised:
        asyncio.run(graph.ainvoke({"task": "kvstore"}, {"configurable": {"thread_id": "t"}}, context=context))
    assert isinstance(raised.value, ValueError)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_studio_folders_default_to_the_cache_outside_the_watched_repository(tmp_path: Path, monkeypatch) -> None:
    """`langgraph dev` reloads when files change under the folder it serves: a thread's attempts (Python
    files) must land elsewhere unless PROJECTGEN_STUDIO_DIR says so."""
    from projectgen.runs.studio import studio_folder

    monkeypatch.delenv("PROJECTGEN_STUDIO_DIR", raising=False)
    monkeypatch.setenv("PROJECTGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert studio_folder("thread-1") == (tmp_path / "cache" / "studio" / "thread-1").resolve()
    monkeypatch.setenv("PROJECTGEN_STUDIO_DIR", str(tmp_path / "elsewhere"))
    assert studio_folder("thread-1") == (tmp_path / "elsewhere" / "thread-1").resolve()
    monkeypatch.delenv("PROJECTGEN_STUDIO_DIR")
    monkeypatch.delenv("PROJECTGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert not studio_folder("t").is_relative_to(ROOT)


# --------------------------------------------------------------------------- langgraph dev itself

def langgraph_cli() -> Path:
    """The `langgraph` command beside this interpreter, with the in-memory server; skips without them."""
    command = Path(sys.executable).with_name("langgraph")
    if not command.exists() or importlib.util.find_spec("langgraph_runtime_inmem") is None:
        pytest.skip("langgraph-cli[inmem] is not installed (pip install -e '.[studio]')")
    return command


def call(base: str, method: str, path: str, body: Any = None, timeout: float = 120) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


@pytest.mark.slow
def test_langgraph_dev_serves_both_graphs_their_schemas_and_runs(scripted_env, tmp_path: Path) -> None:
    command = langgraph_cli()
    # The repository's langgraph.json as it is, in a folder of its own: `langgraph dev` resolves its
    # paths and writes .langgraph_api/ in the working directory; a thread's folders go to the cache.
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(ROOT / "langgraph.json", served / "langgraph.json")
    (served / "projectgen").symlink_to(ROOT / "projectgen")
    port = free_port()
    log = tmp_path / "langgraph-dev.log"
    env = {**os.environ, **scripted_env, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    del env["PROJECTGEN_STUDIO_DIR"]  # the default folder: the cache's studio/, outside the served tree
    env["PROJECTGEN_CACHE_DIR"] = str(tmp_path / "cache")
    with open(log, "w") as sink:
        server = subprocess.Popen([str(command), "dev", "--no-browser", "--no-reload", "--port", str(port)],
                                  cwd=served, env=env, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if call(base, "GET", "/ok", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)

        status, assistants = call(base, "POST", "/assistants/search", {})
        assert status == 200 and {a["graph_id"] for a in assistants} == set(GRAPHS)
        ids = {a["graph_id"]: a["assistant_id"] for a in assistants}
        for graph_id, assistant in ids.items():
            status, schemas = call(base, "GET", f"/assistants/{assistant}/schemas")
            assert status == 200, schemas
            assert schemas["input_schema"]["required"] == ["task"]
            assert "model" in schemas["context_schema"]["properties"]

        status, thread = call(base, "POST", "/threads", {})
        runs = {"projectgen": {"input": {"task": "kvstore"}},
                "livecoder": {"input": {"task": "kvstore"}, "context": {"attempts": 1}}}
        results = {}
        for graph_id, body in runs.items():
            status, run = call(base, "POST", f"/threads/{thread['thread_id']}/runs",
                               {"assistant_id": ids[graph_id], **body})
            assert status == 200, run
            status, results[graph_id] = call(base, "GET", f"/threads/{thread['thread_id']}/runs/{run['run_id']}/join",
                                             timeout=300)
            status, finished = call(base, "GET", f"/threads/{thread['thread_id']}/runs/{run['run_id']}")
            assert finished["status"] == "success", log.read_text()[-5000:]
        assert [v["stage"] for v in results["projectgen"]["verdicts"] if v["accepted"]] == [
            "architecture", "skeleton", "code"], json.dumps(results["projectgen"]["verdicts"])[-3000:]
        assert results["livecoder"]["final"] == {"source": "best", "attempt": 1, "score": 1.0}
        folder = tmp_path / "cache" / "studio" / thread["thread_id"]
        assert (folder / "attempts" / "1" / "attempt.json").is_file()
        # both runs of the thread went through the driver: traced, written off the server's event loop
        assert [(e["event"], e.get("graph"), e.get("status")) for e in trace_events(folder) if e["event"] != "node"
                and not e["event"].startswith("stage")] == [
            ("run_start", "projectgen", None), ("run_end", None, "finished"),
            ("run_start", "livecoder", None), ("run_end", None, "finished")]

        # a review: the run pauses with the request as the thread's interrupt; a run with a resume command goes on
        status, thread = call(base, "POST", "/threads", {})
        runs_path = f"/threads/{thread['thread_id']}/runs"
        status, run = call(base, "POST", runs_path, {"assistant_id": ids["projectgen"], "input": {"task": "kvstore"},
                                                     "context": {"review": ["architecture"]}})
        assert status == 200, run
        call(base, "GET", f"{runs_path}/{run['run_id']}/join", timeout=300)
        status, paused = call(base, "GET", f"/threads/{thread['thread_id']}")
        assert paused["status"] == "interrupted", log.read_text()[-5000:]
        (request,) = [i["value"] for interrupts in paused["interrupts"].values() for i in interrupts]
        assert (request["stage"], request["iteration"]) == ("architecture", 2)
        status, run = call(base, "POST", runs_path, {"assistant_id": ids["projectgen"],
                                                     "command": {"resume": {"action": "approve"}}})
        assert status == 200, run
        status, resumed = call(base, "GET", f"{runs_path}/{run['run_id']}/join", timeout=300)
        status, finished = call(base, "GET", f"{runs_path}/{run['run_id']}")
        assert finished["status"] == "success", log.read_text()[-5000:]
        assert [r["action"] for r in resumed["reviews"]] == ["approve"] and "kvstore/store.py" in resumed["repository"]
        assert "BlockingError" not in log.read_text()  # nothing blocked langgraph dev's event loop
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
