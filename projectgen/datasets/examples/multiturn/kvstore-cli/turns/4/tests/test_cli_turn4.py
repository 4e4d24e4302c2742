from kvstore.cli import main


def test_namespaces_are_separate(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    assert main(["--file", path, "-n", "users", "set", "1", "Ada"]) == 0
    assert main(["--file", path, "set", "1", "default one"]) == 0
    capsys.readouterr()
    main(["--file", path, "--namespace", "users", "get", "1"])
    main(["--file", path, "get", "1"])
    assert capsys.readouterr().out == "Ada\ndefault one\n"
    main(["--file", path, "-n", "users", "list"])
    assert capsys.readouterr().out == '1\t"Ada"\n'


def test_invalid_values_are_exit_code_2(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    assert main(["--file", path, "set", "k", "{not json", "--json"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["--file", path, "set", "k", "v", "--ttl", "0"]) == 2
    assert main(["--file", path, "set", "k", "v", "--ttl", "-5"]) == 2


def test_missing_keys_are_still_exit_code_1(tmp_path):
    assert main(["--file", str(tmp_path / "data.json"), "get", "nope"]) == 1
    assert main(["--file", str(tmp_path / "data.json"), "delete", "nope"]) == 1
