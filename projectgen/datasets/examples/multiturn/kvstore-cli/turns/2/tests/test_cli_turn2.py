from kvstore.cli import main


def test_delete_removes_the_key(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    main(["--file", path, "set", "a", "1"])
    assert main(["--file", path, "delete", "a"]) == 0
    assert main(["--file", path, "get", "a"]) == 1


def test_deleting_a_missing_key_is_exit_code_1(tmp_path, capsys):
    assert main(["--file", str(tmp_path / "data.json"), "delete", "nope"]) == 1
    assert "key not found: 'nope'" in capsys.readouterr().err


def test_list_prints_sorted_keys_and_json_values(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    for key, value in (("b", "two"), ("a", "one")):
        main(["--file", path, "set", key, value])
    capsys.readouterr()
    assert main(["--file", path, "list"]) == 0
    assert capsys.readouterr().out == 'a\t"one"\nb\t"two"\n'
