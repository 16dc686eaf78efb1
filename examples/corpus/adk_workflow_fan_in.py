"""An ADK Workflow: prepare, then market and risk in parallel, both edges into collect (no JoinNode) — hazardous.

Without a JoinNode, collect runs once per finished predecessor (adk/workflow/plain-fan-in: silent).
"""

from google.adk.workflow import Workflow


def prepare(node_input):
    return {"ticker": "ACME"}


def market(node_input):
    return {"price": 10}


def risk(node_input):
    return {"score": 3}


def collect(node_input):
    return node_input


workflow = Workflow(name="analysis", edges=[("START", prepare, (market, risk), collect)])
