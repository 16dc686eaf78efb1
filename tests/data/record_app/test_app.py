from app import build_graph


def test_both_researchers_contribute():
    final = build_graph().invoke({"topic": "fan-in"})
    assert len(final["notes"]) == 2 and "fan-in" in final["summary"]


def test_a_second_topic():
    final = build_graph().invoke({"topic": "joins"})
    assert final["summary"].count("joins") == 2
