"""An ADK 2.x Workflow where two nodes fan in to `merge`, START among its predecessors — hazardous."""

from google.adk.workflow import Workflow


def left(node_input):
    return "left"


def right(node_input):
    return "right"


def merge(node_input):
    return node_input


workflow = Workflow(name="wf", edges=[("START", left, merge), ("START", right, merge), ("START", merge)])
