"""The state-key reader the inspectors share where a framework keeps its state as an attribute named `state`
(pydantic-graph's `ctx.state`, CrewAI's `self.state`): kept apart from audit_reading.py, which every inspector
imports whole."""

from __future__ import annotations

import ast

from audit_reading import StateReader


class AttributeStateReader(StateReader):
    """A state held as an attribute named `state` (`ctx.state`, `self.state`): its keys are attributes and
    subscripts of it (`.f`, `["k"]`, `.f["k"]`), `s = ….state` and a helper handed the state are followed.

    `owners`: the names the attribute must hang off (None: any expression's `.state`); `methods`: the
    state's own methods (a dict's `get`, a model's `model_dump`), never keys."""

    def __init__(self, owners: set[str] | None = None, methods: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.aliases: set[str] = set()
        self.owners = owners
        self.methods = methods

    def _is_state(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "state":
            return self.owners is None or (isinstance(node.value, ast.Name) and node.value.id in self.owners)
        return isinstance(node, ast.Name) and node.id in self.aliases

    def key(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Attribute) and self._is_state(node.value) and node.attr not in self.methods:
            return node.attr
        if isinstance(node, ast.Subscript):
            literal = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if self._is_state(node.value):
                return str(literal) if isinstance(literal, (str, int)) else None
            inner = self.key(node.value)
            if inner is not None and isinstance(literal, (str, int)):
                return f"{inner}[{literal!r}]"
        return None

    def carries_state(self, node: ast.AST) -> bool:
        return self._is_state(node) or super().carries_state(node)

    def receives(self, parameter: str, argument: ast.AST, key: str | None) -> None:
        if self._is_state(argument):
            self.aliases.add(parameter)  # helper(ctx.state): the parameter is the state
        else:
            super().receives(parameter, argument, key)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name) and self._is_state(node.value):
                self.aliases.add(target.id)
        super().visit_Assign(node)
