import asyncio

from review import build_workflow


def output(document: str) -> dict:
    return asyncio.run(build_workflow().run(document)).get_outputs()[0]


def test_a_plain_document_gets_one_verdict():
    assert output("a memo")["verdict"].endswith(": ok")


def test_a_contract_is_escalated_to_legal():
    assert output("a contract")["escalation"] == "legal"


def test_a_leaked_password_is_escalated_to_security():
    assert output("a password")["escalation"] == "security"
