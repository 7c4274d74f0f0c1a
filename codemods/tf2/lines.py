"""The line each node of a libcst module starts on: libcst's `PositionProvider`, lines only.

The TF2 tier asks positions for one thing, the 1-based line a refusal or a note names, and it asks
them of every file it reads. libcst's provider prints the whole module while it records each node's
start and end, line and column, splitting every token on a regular expression; that was a fifth of
the tier's time on real files. `start_lines` runs the same printing (the node's own `_codegen`, so
the same walk and the same rule for where a node starts: its syntactic start, or the start of the
child libcst names) and counts newlines only. tests/test_tf2_symbols.py holds it equal to
`PositionProvider`'s `start.line` for every node of the fixtures.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst._nodes.internal import CodegenState  # the printer's state, as libcst's own providers subclass it


def start_lines(module: cst.Module) -> dict:
    """node → the line it starts on, for every node of `module` (its own nodes, not a copy), in the
    order the printer reaches them (names, attributes and imports in the order of a walk)."""
    state = _LineState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return state.starts


@dataclass
class _LineState(CodegenState):
    line: int = 1
    starts: dict = field(default_factory=dict)

    def add_indent_tokens(self) -> None:  # indentation holds no newline
        pass

    def add_token(self, value: str) -> None:
        if "\r" in value:  # "\r\n" is one line break, a lone "\r" another (libcst's NEWLINE_RE)
            self.line += value.count("\n") + value.count("\r") - value.count("\r\n")
        else:
            self.line += value.count("\n")

    def pop_trailing_newline(self) -> None:  # the end of the file: no node starts after it
        pass

    def before_codegen(self, node: cst.CSTNode) -> None:
        # where the node starts; a syntactic start recorded inside it (below) replaces this one
        if node not in self.starts:
            self.starts[node] = self.line

    def after_codegen(self, node: cst.CSTNode) -> None:
        pass

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> "_Syntactic":
        return _Syntactic(self, node, start_node)


class _Syntactic:
    """`record_syntactic_position` as a plain context manager: the node starts where its syntax
    starts, or where `start_node` (a child already printed) starts."""
    __slots__ = ("state", "node", "start_node", "line")

    def __init__(self, state: _LineState, node: cst.CSTNode, start_node: Optional[cst.CSTNode]):
        self.state, self.node, self.start_node = state, node, start_node

    def __enter__(self) -> None:
        self.line = self.state.line

    def __exit__(self, *exc) -> bool:
        starts = self.state.starts
        starts[self.node] = starts[self.start_node] if self.start_node is not None else self.line
        return False
