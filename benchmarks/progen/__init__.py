"""progen: a seeded generator of TF 1.x training programs, for differential testing of the TF2
tier at scale (as Csmith and YARPGen test compilers).

`generate(seed)` returns one self-contained TF 1.x graph-mode script (NumPy data from a fixed
seed inside it, a few training steps, the losses printed) and the `Choices` it is made of: a
value for each dimension in `choices.DIMENSIONS` (where state is made, rebound names, aliases,
layer APIs, loss, l2, optimizer, learning rate, clipping recipe, session-loop shape), all drawn
from `random.Random(seed)`, so the seed alone reproduces the program. Every program is valid
TF 1.x: one that `tf1clip run` cannot run is a bug of this generator.
`benchmarks/progen_run.py` runs the programs through `tf1clip run`, `migrate --to tf2` and
`parity`; docs/progen.md explains both.
"""
from progen.choices import DIMENSIONS, Choices
from progen.program import generate

__all__ = ["DIMENSIONS", "Choices", "generate"]
