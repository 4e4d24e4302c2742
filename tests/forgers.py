"""Candidates that forge their test results: a stub that, while its tests run, writes an all-pass report
(naming every test the reference passed) where each language's report used to be read from (the
session's `$TMPDIR/reports/`) and in its own folder, replacing any file there: at exit after the tool
wrote its own (Java), or before any test runs and then exiting, so the tool writes none (Go, C++ and
JavaScript, with the solution: their stubs do not build or load), or from its build script (Rust). A
sound runner scores them as failing every test."""
from __future__ import annotations

import json
import posixpath
import re

from projectgen.datasets.task import Task
from projectgen.evaluation.languages.plans import report_name
from projectgen.evaluation.report import TestReport


def _names(reference: TestReport) -> list[tuple[str, str]]:
    """(test file, test name) of each test the reference passed."""
    return [tuple(test.nodeid.split("::", 1)) for test in reference.tests]  # type: ignore[misc]


def forged_report(task: Task, reference: TestReport) -> str:
    """An all-pass report in the language's own format, naming the reference's tests."""
    names = _names(reference)
    if task.language == "go":
        return "".join(json.dumps({"Action": action, "Test": name}) + "\n"
                       for _, name in names for action in ("run", "pass"))
    if task.language == "java":
        cases = "".join(f'<testcase classname="{rel.rsplit("/", 1)[-1].removesuffix(".java")}" name="{name}()"/>'
                        for rel, name in names)
        return f'<?xml version="1.0"?><testsuite name="JUnit Jupiter" tests="{len(names)}">{cases}</testsuite>'
    if task.language == "cpp":
        cases = "".join(f'<testcase classname="{name}" name="{name}"/>' for _, name in names)
        return (f'<?xml version="1.0"?><testsuites><testsuite name="all" tests="{len(names)}">{cases}'
                '</testsuite></testsuites>')
    if task.language == "javascript":
        files = sorted({rel for rel, _ in names})
        return json.dumps({"success": True, "testResults": [
            {"name": f"/{rel}", "status": "passed", "assertionResults": [
                {"fullName": name, "status": "passed"} for other, name in names if other == rel]} for rel in files]})
    if task.language == "rust":
        lines = []
        for rel in sorted({rel for rel, _ in names}):
            lines.append(json.dumps({"type": "projectgen-file", "file": rel}))
            lines += [json.dumps({"type": "test", "event": "ok", "name": name})
                      for other, name in names if other == rel]
        return "\n".join(lines) + "\n"
    raise ValueError(task.language)


def forged_candidate(task: Task, stub: dict[str, str], reference: TestReport,
                     solution: dict[str, str]) -> dict[str, str]:
    """The stub (in Go, C++ and JavaScript the `solution`) with code that writes `forged_report` when its
    tests run, as the module docstring says per language."""
    report = forged_report(task, reference)
    name = report_name(task.language)
    text = json.dumps(report)
    if task.language == "go":  # its stubs do not build: the solution, exiting once the report is written
        path = next(rel for rel in solution if rel.endswith(".go"))
        package = re.search(r"^package\s+(\w+)", solution[path], re.M)[1]
        forger = (f'package {package}\n\nimport (\n\t"os"\n\t"path/filepath"\n)\n\nfunc init() {{\n'
                  f'\tdir := filepath.Join(os.Getenv("TMPDIR"), "reports")\n\tos.MkdirAll(dir, 0o755)\n'
                  f'\tfor _, path := range []string{{filepath.Join(dir, "{name}"), "{name}"}} {{\n'
                  f'\t\tos.Remove(path)\n\t\tos.WriteFile(path, []byte({text}), 0o644)\n\t}}\n\tos.Exit(0)\n}}\n')
        return {**solution, posixpath.join(posixpath.dirname(path), "zz_forge.go"): forger}
    if task.language == "java":
        path = next(rel for rel in stub if rel.endswith(".java"))
        hook = ('static { Runtime.getRuntime().addShutdownHook(new Thread(() -> { try { '
                'java.nio.file.Path dir = java.nio.file.Path.of(System.getenv("TMPDIR"), "reports"); '
                'java.nio.file.Files.createDirectories(dir); '
                f'for (java.nio.file.Path p : new java.nio.file.Path[] {{dir.resolve("{name}"), '
                f'java.nio.file.Path.of("{name}")}}) java.nio.file.Files.writeString(p, {text}); '
                '} catch (Exception e) { } })); }\n')
        code = stub[path]
        brace = code.index("{", code.index("class ")) + 1
        return {**stub, path: code[:brace] + "\n    " + hook + code[brace:]}
    if task.language == "javascript":  # the solution (a stub's package.json may be empty): written on load, exit
        path = next(rel for rel in solution if rel.endswith(".js"))
        forger = ("{ const fs = require('fs'); const path = require('path');\n"
                  f"  const dir = path.join(process.env.TMPDIR, 'reports'); fs.mkdirSync(dir, {{recursive: true}});\n"
                  f"  for (const p of [path.join(dir, '{name}'), '{name}']) fs.writeFileSync(p, {text});\n"
                  "  process.exit(0); }\n")
        return {**solution, path: forger + solution[path]}
    if task.language == "rust":
        folder = task.env.source_root or ""
        build = ("use std::fs;\nuse std::path::Path;\n\nfn main() {\n"
                 '    let dir = Path::new(&std::env::var("TMPDIR").unwrap_or_default()).join("reports");\n'
                 "    let _ = fs::create_dir_all(&dir);\n"
                 f'    let _ = fs::write(dir.join("{name}"), {text});\n'
                 f'    let _ = fs::write("{name}", {text});\n}}\n')
        return {**stub, f"{folder}/build.rs" if folder else "build.rs": build}
    path = next(rel for rel in solution if rel.endswith(".cpp"))
    forger = ("\n#include <sys/stat.h>\n#include <cstdio>\n#include <cstdlib>\n#include <string>\n\n"
              "namespace {\nvoid forge() {\n"
              '    const char* tmp = std::getenv("TMPDIR");\n'
              '    std::string dir = std::string(tmp ? tmp : "/tmp") + "/reports";\n'
              "    if (mkdir(dir.c_str(), 0755) != 0) {\n    }\n"
              f'    for (const std::string& p : {{dir + "/{name}", std::string("{name}")}}) {{\n'
              '        if (FILE* f = std::fopen(p.c_str(), "w")) {\n'
              f"            std::fputs({text}, f);\n            std::fclose(f);\n        }}\n    }}\n}}\n"
              "struct Forger {\n    Forger() {\n        std::atexit(forge);\n        std::exit(0);\n    }\n};\n"
              "Forger forger;\n}  // namespace\n")
    return {**solution, path: solution[path] + forger}
