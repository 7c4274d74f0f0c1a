"""Building the output: code templates filled with libcst nodes, comments, fresh names.

Generated code is never assembled as text from the user's code: a template names its holes
(`"{opt}.apply_gradients(zip({grads}, {variables}))"`) and each hole gets a node, so the
user's expressions go in as they were parsed, and TensorFlow is spelled with the module's own
alias (`tf_ref`).
"""
from __future__ import annotations

from typing import Iterable, Optional, Union

import libcst as cst
from libcst.helpers import parse_template_expression, parse_template_statement

from codemods.tf2.names import tf_expr
from codemods.tf2.syntax import names_of

Node = Union[cst.CSTNode, str]


def _nodes(holes: dict) -> dict:
    return {k: (cst.Name(v) if isinstance(v, str) else v) for k, v in holes.items()}


def expr(template: str, **holes: Node) -> cst.BaseExpression:
    """`expr("{a} + 1", a=node)`; a str hole is a Name."""
    return parse_template_expression(template, **_nodes(holes))


def stmt(template: str, **holes: Node) -> cst.BaseStatement:
    """One statement (simple or compound) from a template; a str hole is a Name."""
    if not template.endswith("\n"):
        template += "\n"
    return parse_template_statement(template, **_nodes(holes))


def tf_ref(alias: str, qname: str) -> cst.BaseExpression:
    return tf_expr(alias, qname)


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def call(func: cst.BaseExpression, *args: cst.BaseExpression, **kwargs: cst.BaseExpression) -> cst.Call:
    """`func(args..., key=value...)` with the commas libcst expects."""
    items = [cst.Arg(a) for a in args] + [keyword(k, v) for k, v in kwargs.items()]
    return cst.Call(func=func, args=items)


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value` as an argument (no spaces around `=`)."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def assign(name: Union[str, cst.BaseAssignTargetExpression], value: cst.BaseExpression) -> cst.SimpleStatementLine:
    target = cst.Name(name) if isinstance(name, str) else name
    return cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(target)], value=value)])


def with_args(call_node: cst.Call, args: Iterable[cst.Arg]) -> cst.Call:
    """`call_node` with `args` (their commas normalized)."""
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return call_node.with_changes(args=args)


def string_like(original: cst.BaseExpression, text: str) -> cst.SimpleString:
    """A string literal of `text`, in the quotes of `original` (a string literal of the script)."""
    quote = original.quote if isinstance(original, cst.SimpleString) and original.quote in ('"', "'") else '"'
    return cst.SimpleString(quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote)


def blank_lines(count: int = 2) -> list:
    """Blank lines before a definition, with no indentation (also inside a method's body)."""
    return [cst.EmptyLine(indent=False) for _ in range(count)]


def comment_lines(text: str, width: int = 96) -> list:
    """`text` as `# ...` lines of at most `width` characters."""
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width - 2:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return [cst.EmptyLine(comment=cst.Comment("# " + line)) for line in lines]


def paren(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` parenthesized unless it is an atom (a name, an attribute, a number, a call, a subscript): safe to
    put where an operand goes."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call, cst.Subscript)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def with_comment(st: cst.BaseStatement, text: Optional[str]) -> cst.BaseStatement:
    """`st` with `text` as comment lines above it (after its own leading lines)."""
    if not text:
        return st
    return st.with_changes(leading_lines=[*st.leading_lines, *comment_lines(text)])


class Namer:
    """Fresh names for generated objects, never equal to a name the file already uses."""

    def __init__(self, taken: Iterable[str]):
        self.taken = set(taken)
        self.preferred: dict = {}  # fresh name -> the name asked for

    def fresh(self, preferred: str, avoid: Iterable[str] = ()) -> str:
        """A name no one has taken, nor one of `avoid` (the locals of the function it goes into)."""
        preferred = preferred.replace("/", "_").replace("-", "_").replace(".", "_") or "value"
        if preferred[0].isdigit():
            preferred = "_" + preferred
        avoid = set(avoid)
        name, i = preferred, 2
        while name in self.taken or name in avoid:
            name = f"{preferred}_{i}"
            i += 1
        self.taken.add(name)
        self.preferred[name] = preferred
        return name

    def claim(self, name: str) -> None:
        self.taken.add(name)


def add_preamble(body: list, preamble: list, imports: set, names) -> list:
    """`body` with `imports` it lacks and the `preamble` definitions after its imports."""
    if not preamble and not imports:
        return body
    have = {dotted for local, dotted in names.bindings.items() if local == dotted}
    new_imports = []
    for m in sorted(imports - have):
        if m.startswith("import:"):  # import:module:local → `import module as local`
            _, module, local = m.split(":")
            new_imports.append(cst.SimpleStatementLine([cst.Import([cst.ImportAlias(
                cst.parse_expression(module), asname=None if local == module else cst.AsName(cst.Name(local)))])]))
        elif m.startswith("absl:"):
            _, module, local = m.split(":")
            alias = cst.ImportAlias(cst.Name(module), asname=None if local == module else
                                    cst.AsName(cst.Name(local)))
            new_imports.append(cst.SimpleStatementLine([cst.ImportFrom(module=cst.Name("absl"), names=[alias])]))
        else:
            new_imports.append(cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name(m))])]))
    defined = set()
    for d in preamble:
        if isinstance(d, (cst.FunctionDef, cst.ClassDef)):
            defined.add(d.name.value)
    first_use = next((i for i, st in enumerate(body) if names_of(st) & defined), len(body))
    last = -1
    for i, st in enumerate(body[:first_use]):  # after the imports the definitions need (TensorFlow's)
        if isinstance(st, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in st.body):
            last = i
    start = last + 1 if last >= 0 else (1 if body and is_docstring(body[0]) else 0)
    defs = [d.with_changes(leading_lines=blank_lines()) if isinstance(
        d, (cst.FunctionDef, cst.ClassDef)) else d for d in preamble]
    rest = body[start:]
    if rest and defs:
        rest[0] = rest[0].with_changes(leading_lines=[*blank_lines(), *[
            line for line in rest[0].leading_lines if line.comment is not None]])
    return body[:start] + new_imports + defs + rest


def is_docstring(st) -> bool:
    """Is `st` a docstring (one string expression statement)?"""
    return (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
