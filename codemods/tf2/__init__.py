"""The TF2 tier: a TF 1.x training script → idiomatic TF 2 (GradientTape, tf.function, Keras).

    from codemods.tf2 import convert
    result = convert(text, "train.py")   # result.text is None when it cannot be done exactly

Steps, in order (one module each, each with its own before/after examples):

* `inline_helpers`: a helper that builds graph state (`train_op = create_optimizer(loss, ...)`)
  is inlined at its one module-level call, where TF1 ran it;
* `train_step`: the graph + Session program → state created once, `@tf.function` steps
  with `tf.GradientTape`, step calls in the loop (the structural rewrite);
* `symbols`: TF 1.x names with a TF 2 spelling (`tf.set_random_seed` → `tf.random.set_seed`);
* `clip_by_average_norm`: its exact TF 2 expression;
* `unused_imports`: imports the rewrite left unused (contrib, tutorials) are removed.

Then the result must use no TF 1.x-only API (the compat tier's `classify` says so) and must
compile; otherwise nothing is returned and the report says which line and why. The steps
never import TensorFlow; the output imports only what the input imported, minus what it
no longer needs.
"""
from __future__ import annotations

import libcst as cst

from codemods._base import compose_line_map
from codemods._usage import classify
from codemods.tf2 import clip_by_average_norm, inline_helpers, symbols, train_step, unused_imports
from codemods.tf2._base import Names, Note, Refuse, Result

RULE = "tf2"
STEPS = (inline_helpers, train_step, symbols, clip_by_average_norm, unused_imports)

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
    try:
        for step in STEPS:
            rule = step.RULE
            if hasattr(step, "transform_with_lines"):
                new, step_notes, lines = step.transform_with_lines(current)
            else:
                new, step_notes = step.transform(current)
                lines = None
            for n in step_notes:
                line = line_map[n.line] if 0 < n.line < len(line_map) else n.line
                notes.append(Note(line, n.rule, n.kind, n.message))
            if lines is not None:
                line_map = [line_map[k] if 0 < k < len(line_map) else 0 for k in lines]
            elif new.code != current.code and step is not train_step:
                line_map = compose_line_map(line_map, current.code, new.code)
            elif step is train_step:
                line_map = _anchor_map(text, new.code)
            current = new
        out = current.code
        rule = RULE
        left = _usage(cst.parse_module(out))
        if left.tf1:
            _, source = left.tf1[0]
            raise Refuse(_find(text, source), f"`{source}` has no TF 2 mapping in tf1clip's tables")
        compile(out, filename, "exec", dont_inherit=True)
    except Refuse as exc:
        line = exc.line
        if rule == train_step.RULE and 0 < line < len(line_map) and line_map[line]:
            line = line_map[line]  # train_step reads the inlined module: back to the input's lines
        return Result(None, [*notes, Note(line, rule, "human",
                                          f"not converted to the TF2 tier: {exc.reason}")])
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


def _anchor_map(old: str, new: str) -> list:
    """Lines of `new` → lines of `old` for identical lines; others 0 (only later notes use this)."""
    return compose_line_map(list(range(len(old.splitlines()) + 2)), old, new)
