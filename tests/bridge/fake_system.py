"""A fake external system, run inside the sandbox by the bridge's tests: it speaks the OpenAI API with the
`openai` client (configured only by OPENAI_BASE_URL and OPENAI_API_KEY, as a real system is), reads the
document it was given, asks the model for each file it names, writes them, and then tries to reach
other places on the network, writing what happened to `network.json`.

    python fake_system.py [--die-after N] [--probe HOST:PORT ...]

docs/PRD.md names the files, one ``- path`` line each. `--die-after N`: SIGKILL itself once N files are
written (a killed run). `--probe`: addresses it tries to open a TCP connection to.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
from pathlib import Path

import openai


def probe(address: str) -> str:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            return "reached"
    except OSError as exc:
        return f"blocked: {type(exc).__name__}: {exc}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--probe", action="append", default=[])
    args = parser.parse_args()
    prd = Path("docs/PRD.md").read_text(encoding="utf-8")
    wanted = [line[2:].strip() for line in prd.splitlines() if line.startswith("- ")]
    client = openai.OpenAI(max_retries=0)  # base URL and key from the environment only
    served = [model.id for model in client.models.list()]
    written = 0
    for path in wanted:
        try:
            reply = client.chat.completions.create(
                model="gpt-4o", temperature=0.9, max_tokens=10,
                messages=[{"role": "system", "content": prd}, {"role": "user", "content": f"Write the file {path}"}])
        except openai.APIStatusError as exc:
            print(f"model call refused ({exc.status_code}): {exc.message}", flush=True)
            return 3
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(reply.choices[0].message.content or "", encoding="utf-8")
        written += 1
        print(f"wrote {path}", flush=True)
        if written == args.die_after:
            os.kill(os.getpid(), signal.SIGKILL)
    Path("network.json").write_text(json.dumps({"served": served, "base_url": os.environ.get("OPENAI_BASE_URL"),
                                                "probes": {address: probe(address) for address in args.probe}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
