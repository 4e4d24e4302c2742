import time

from kvstore.cli import main


def test_json_values_round_trip(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    assert main(["--file", path, "set", "config", '{"debug": true, "tags": ["a"]}', "--json"]) == 0
    assert main(["--file", path, "set", "count", "3", "--json"]) == 0
    capsys.readouterr()
    main(["--file", path, "get", "config"])
    main(["--file", path, "get", "count"])
    assert capsys.readouterr().out == '{"debug": true, "tags": ["a"]}\n3\n'


def test_strings_print_as_they_are(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    main(["--file", path, "set", "name", "Ada"])
    main(["--file", path, "get", "name"])
    assert capsys.readouterr().out == "Ada\n"


def test_ttl_makes_the_key_expire(tmp_path):
    path = str(tmp_path / "data.json")
    assert main(["--file", path, "set", "token", "abc", "--ttl", "0.05"]) == 0
    assert main(["--file", path, "set", "keep", "abc", "--ttl", "3600"]) == 0
    time.sleep(0.1)
    assert main(["--file", path, "get", "token"]) == 1
    assert main(["--file", path, "get", "keep"]) == 0


def test_deleting_a_missing_key_is_still_exit_code_1(tmp_path):
    assert main(["--file", str(tmp_path / "data.json"), "delete", "nope"]) == 1
