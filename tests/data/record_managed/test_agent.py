from agent import build_agent


def test_both_checks_reach_the_answer():
    out = build_agent().invoke({"question": "is the join safe?"})
    assert len(out["checks"]) == 2 and "style ok" in out["answer"]
