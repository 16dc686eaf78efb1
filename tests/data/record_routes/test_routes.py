from routes import build_graph


def test_only_a():
    assert build_graph().invoke({"want": "writer_a"})["log"] == ["a"]


def test_only_b():
    assert build_graph().invoke({"want": "writer_b"})["log"] == ["b"]


def test_that_fails_on_purpose():
    assert build_graph().invoke({"want": "writer_b"})["log"] == ["a"]
