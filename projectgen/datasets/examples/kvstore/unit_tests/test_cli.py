import os
import subprocess
import sys
from pathlib import Path

import kvstore
from kvstore import JSONFileStorage, KVStore
from kvstore.cli import main


def test_set_get_and_list(tmp_path, capsys):
    db = str(tmp_path / "db.json")
    assert main(["--file", db, "set", "name", "Ada"]) == 0
    assert main(["--file", db, "set", "nums", "[1, 2]", "--json"]) == 0
    capsys.readouterr()
    assert main(["--file", db, "get", "name"]) == 0
    assert capsys.readouterr().out == "Ada\n"
    assert main(["--file", db, "get", "nums"]) == 0
    assert capsys.readouterr().out == "[1, 2]\n"
    assert main(["--file", db, "list"]) == 0
    assert capsys.readouterr().out == 'name\t"Ada"\nnums\t[1, 2]\n'
    assert KVStore(JSONFileStorage(db)).get("nums") == [1, 2]


def test_exit_codes_and_namespaces(tmp_path, capsys):
    db = str(tmp_path / "db.json")
    assert main(["--file", db, "--namespace", "ns", "set", "k", "v"]) == 0
    assert main(["--file", db, "get", "k"]) == 1
    assert "key not found" in capsys.readouterr().err
    assert main(["--file", db, "-n", "ns", "delete", "k"]) == 0
    assert main(["--file", db, "-n", "ns", "delete", "k"]) == 1
    capsys.readouterr()
    assert main(["--file", db, "set", "k", "{bad", "--json"]) == 2
    assert main(["--file", db, "set", "k", "v", "--ttl", "-1"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_python_dash_m_entry_point(tmp_path):
    db = str(tmp_path / "db.json")
    root = str(Path(kvstore.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = [sys.executable, "-m", "kvstore", "--file", db]
    subprocess.run([*run, "set", "greeting", "hi"], check=True, env=env)
    result = subprocess.run([*run, "get", "greeting"], capture_output=True, text=True, env=env)
    assert result.returncode == 0
    assert result.stdout == "hi\n"
