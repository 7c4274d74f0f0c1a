"""A value loop that fills a list or a sum made just before it: the list goes into the steps with it.

TF 1.x code builds its clipped gradients and its weight decay with Python loops at graph-building
time (`capped = []` then `for g, v in grads_and_vars: capped.append(...)`; `l2 = 0.0` then
`l2 += tf.nn.l2_loss(v)`). The TF2 tier reads such a loop as one value statement, recomputed in
each step that needs it; the statement that made the list must go with it, or the step would fill
the one module-level list again at every trace (or read an unbound local). `Translator.fresh`
remembers, per name, the statement that last made it from a new literal while nothing read it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.tf2.model import AV, Mapping, Other, Seq, StateKind, StateRef, TFSymbol
from codemods.tf2.syntax import changed_names, values_put_into

if TYPE_CHECKING:
    from codemods.tf2.call_site import Evaluation
    from codemods.tf2.program import Program


def fold_inits(tr: "Program", st, out: list, ev: "Evaluation") -> list:
    """[(name, statement)] that made each name a value block `st` fills (`grads = []` before
    `for g, v in pairs: grads.append(...)`), taken out of `out`: they go into the steps with the block,
    so each step starts from a new one. A name made otherwise, or read in between, is refused; a graph
    value is made in the steps already."""
    inits = []
    # a TensorFlow module or function (`T = tf`, then `T.add(h, b)`) is not a container the block fills
    for name in sorted(n for n in changed_names(st) if n in tr.env and not tr.env[n].graph
                       and not isinstance(tr.env[n], TFSymbol)):
        for value in values_put_into(st, name):
            if _makes_objects(ev.value_of_original(value)):
                tr.refuse(f"`{name}` is filled in a loop with TensorFlow objects that are not values (rnn cells, "
                          "layers): not converted")
        made = tr.fresh.get(name)
        at = [i for i, s in enumerate(out) if made is not None and made[0] is out and getattr(s, "body", None) is made[1]]
        if not at:
            tr.refuse(f"this block changes `{name}`, made before it, while the graph is built: in a step it "
                      f"would change the one `{name}` again at every trace (not converted)")
        init = out.pop(at[0])
        comments = [line for line in init.leading_lines if line.comment is not None]
        inits.append((name, init.with_changes(leading_lines=comments)))
        tr.folded.pop(name, None)
    return inits


def _makes_objects(av: AV) -> bool:
    """`av` holds a TensorFlow object other than a value or a variable (a cell, a layer, an optimizer)."""
    if isinstance(av, (Seq, Mapping)):
        return any(_makes_objects(i) for i in av.items)
    if isinstance(av, StateRef):
        return av.state.kind != StateKind.VARIABLE
    return isinstance(av, Other)
