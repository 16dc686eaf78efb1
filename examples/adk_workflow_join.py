"""An ADK 2.x Workflow where two parallel nodes (and START) fan in to `merge`, a plain node, not a JoinNode — hazardous."""

from google.adk.workflow import Workflow


def left(node_input):
    return "left"


def right(node_input):
    return "right"


def merge(node_input):
    return node_input


workflow = Workflow(name="wf", edges=[("START", left, merge), ("START", right, merge), ("START", merge)])
