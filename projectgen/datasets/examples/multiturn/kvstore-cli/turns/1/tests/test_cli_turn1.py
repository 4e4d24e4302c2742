from kvstore.cli import main


def test_set_then_get(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    assert main(["--file", path, "set", "name", "Ada"]) == 0
    assert main(["-f", path, "get", "name"]) == 0
    assert capsys.readouterr().out == "Ada\n"


def test_the_file_keeps_the_data(tmp_path):
    from kvstore import JSONFileStorage, KVStore

    path = tmp_path / "data.json"
    assert main(["--file", str(path), "set", "city", "Paris"]) == 0
    assert KVStore(JSONFileStorage(path)).get("city") == "Paris"


def test_missing_key_is_exit_code_1(tmp_path, capsys):
    assert main(["--file", str(tmp_path / "data.json"), "get", "nope"]) == 1
    assert capsys.readouterr().err.startswith("error: ")
