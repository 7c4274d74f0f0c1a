"""TF 2: each call of a `tf.function` (or of a concrete function of one) made from outside any other one is one computation of
NEW, as one `Session.run` is of OLD: the recorder notes what it returns (fetched.py) and, under
keyed dropout, when it starts and ends (keyed_draws.py). A function traced or called inside
another is part of the outer one."""
from __future__ import annotations

import threading

from tf1clip.steps import wrap


def install(rec) -> None:
    from tensorflow.python.eager.polymorphic_function import concrete_function, polymorphic_function

    depth = threading.local()

    def make_call(original):
        def __call__(self, *args, **kwargs):
            level = getattr(depth, "n", 0)
            depth.n = level + 1
            rec.computation_began()
            result = None
            try:
                result = original(self, *args, **kwargs)
                return result
            finally:
                depth.n = level
                rec.computation_ended(result if level == 0 else None)
        return __call__

    wrap(polymorphic_function.Function, "__call__", make_call)
    wrap(concrete_function.ConcreteFunction, "__call__", make_call)  # f.get_concrete_function()(...)
