"""An ADK Workflow: prepare, market and risk in parallel, a JoinNode, then collect (the mitigation) — safe."""

from google.adk.workflow import JoinNode, Workflow


def prepare(node_input):
    return {"ticker": "ACME"}


def market(node_input):
    return {"price": 10}


def risk(node_input):
    return {"score": 3}


def collect(node_input):
    return node_input


workflow = Workflow(name="analysis", edges=[("START", prepare, (market, risk), JoinNode(name="join"), collect)])
