"""The TF2 tier: a TF 1.x training script → idiomatic TF 2 (GradientTape, tf.function, Keras).

    from codemods.tf2 import convert
    result = convert(text, "train.py")   # result.text is None when it cannot be done exactly

Steps, in order (one module each, each with its own before/after examples):

* `known_gaps`: constructs today's translator would get wrong (a variable reset by a second
  `sess.run(init)`) are refused first;
* `inline_helpers`: a helper that builds graph state (`train_op = create_optimizer(loss, ...)`)
  is inlined at its one module-level call, where TF1 ran it;
* `train_step`: the graph + Session program → state created once, `@tf.function` steps
  with `tf.GradientTape`, step calls in the loop (the structural rewrite);
* `clip_by_average_norm`: its exact TF 2 expression;
* `symbols`: every TF 1.x call and name left → its TF 2 form by TensorFlow's own upgrade spec
  (`api_changes.to_tf2`: `keep_prob` → `rate`, `reduction_indices` → `axis`, renames), or a
  refusal where the TF 2 spelling means something else;
* `output_checks`: the TF 2 program must bind every name it reads, create no state inside a step
  function and read no module-level value computed from variables inside one;
* `unused_imports`: imports the rewrite left unused (contrib, tutorials) are removed.

Any exception inside a step is a refusal too (`failures`): the file falls back to the compat
tier with the line the step was working on.

Then the result must use no TF 1.x-only API (the compat tier's `classify` says so) and must
compile; otherwise nothing is returned and the report says which line and why. The steps
never import TensorFlow; the output imports only what the input imported, minus what it
no longer needs.
"""
from __future__ import annotations

import libcst as cst

from codemods._base import compose_line_map
from codemods._usage import classify
from codemods.tf2 import (clip_by_average_norm, inline_helpers, known_gaps, output_checks, symbols, train_step,
                          unused_imports)
from codemods.tf2._base import Names, Note, Refuse, Result
from codemods.tf2.failures import failure_line, failure_reason

RULE = "tf2"
STEPS = (known_gaps, inline_helpers, train_step, clip_by_average_norm, symbols, output_checks, unused_imports)

__all__ = ["convert", "Result", "Note", "STEPS"]


def _usage(module: cst.Module):
    names = Names.of_module(module)

    return classify(names.module, names.raw, names.line)


def convert(text: str, filename: str = "<string>") -> Result:
    """Convert `text` to the TF2 tier; `Result.text` is None (and a 'human' note says why) if not exact."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return Result(None, [Note(exc.raw_line, RULE, "human", f"libcst cannot parse this file: {exc.message}")])
    usage = _usage(module)
    if usage.verdict == "none":
        return Result(text, [])  # TF 2 code already (or no TensorFlow): nothing to do
    if usage.verdict != "tf1":
        line = (usage.tf2 or usage.tf1)[0][0]
        return Result(None, [Note(line, RULE, "human", "mixes TF 2 eager code with TF 1 graph code (or enables "
                                                      "eager execution): converted by hand only")])
    notes: list = []
    current = module
    line_map = list(range(len(text.splitlines()) + 2))
    rule = RULE
    restructured = False
    try:
        for step in STEPS:
            rule = step.RULE
            if hasattr(step, "transform_with_lines"):
                new, step_notes, lines = step.transform_with_lines(current)
            elif getattr(step, "NEEDS_SOURCE", False):
                new, step_notes = step.transform(current, module)
                lines = None
            else:
                new, step_notes = step.transform(current)
                lines = None
            for n in step_notes:
                line = _where(text, current.code, n.line, line_map, restructured) if n.line > 0 else n.line
                notes.append(Note(line, n.rule, n.kind, n.message))
            if lines is not None:
                line_map = [line_map[k] if 0 < k < len(line_map) else 0 for k in lines]
            elif new.code != current.code and step is not train_step:
                line_map = compose_line_map(line_map, current.code, new.code)
            elif step is train_step:
                line_map = _anchor_map(text, new.code)
                restructured = True
            current = new
        out = current.code
        rule = RULE
        left = _usage(cst.parse_module(out))
        if left.tf1:
            _, source = left.tf1[0]
            raise Refuse(_find(text, source), f"`{source}` has no TF 2 mapping in tf1clip's tables")
        compile(out, filename, "exec", dont_inherit=True)
    except Refuse as exc:
        line = exc.line if rule == RULE or getattr(exc, "of_input", False) else _where(
            text, current.code, exc.line, line_map, restructured)
        return Result(None, [*notes, Note(line, rule, "human",
                                          f"not converted to the TF2 tier: {exc.reason}")])
    except Exception as exc:  # noqa: BLE001 - a failing step is a refusal: compat fallback, never `error`
        line = _where(text, current.code, failure_line(exc, current), line_map, restructured)
        return Result(None, [*notes, Note(line, rule, "human",
                                          f"not converted to the TF2 tier: {failure_reason(exc, rule)}")])
    unique = []
    for n in notes:
        if n not in unique:
            unique.append(n)
    unique.sort(key=lambda n: (n.line, n.kind != "change"))
    return Result(out, unique)


def _find(text: str, source: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if source in line:
            return i
    return 0


def _where(text: str, current: str, line: int, line_map: list, restructured: bool) -> int:
    """Line `line` of the module a step was given → the input's line. Before train_step the line
    map says; after it (statements re-indented into functions) the input's line holding the same
    code does, else the line map."""
    lines = current.splitlines()
    if restructured and 0 < line <= len(lines) and lines[line - 1].strip():
        wanted = lines[line - 1].strip()
        for i, original in enumerate(text.splitlines(), 1):
            if original.strip() == wanted:
                return i
    return line_map[line] if 0 < line < len(line_map) and line_map[line] else 0


def _anchor_map(old: str, new: str) -> list:
    """Lines of `new` → lines of `old` for identical lines; others 0 (only later notes use this)."""
    return compose_line_map(list(range(len(old.splitlines()) + 2)), old, new)
