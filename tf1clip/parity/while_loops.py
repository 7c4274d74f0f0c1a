"""TF 1.x while loops under parity: one iteration at a time where a loop draws random numbers.

A random op inside a loop body (the dropout of a `DropoutWrapper` cell in `dynamic_rnn`, the
decoder of `tf.contrib.seq2seq`) is one stateful kernel that draws once per iteration. With
several iterations in flight, which time step gets which draw follows the schedule, so one
program run twice trains differently (TF 1.x too), and the keyed dropout ordinal would not be
the time step. So every graph-mode `WhileContext` (`dynamic_rnn`, `tf.scan`, `map_fn`,
`tf.while_loop`) is built with `parallel_iterations=1`, and TF 2's `while_v2` likewise.

`parallel_iterations` is not only a bound, though. TF 1.x's gradient of a loop whose
iterations outnumber it, built under `tf.control_dependencies` of ops that a cond made (a batch
norm's UPDATE_OPS with a fed `training` switch: `dynamic_rnn` then batch norm then
`minimize`), is a dead tensor (TensorFlow issue 32720): fetching it raises "Retval[0] does
not have value", and an update that reads it silently does nothing. So a loop pinned to one
iteration at a time would break a program that TF 1.x ran with its own 32. When the gradient
of a loop is built (TF's `_GradLoopState`), the loop gets its own `parallel_iterations` back if
its body has no stateful op other than reading variables and its own stacks and tensor
arrays: such a loop computes the same numbers in any order, so only its pinning could change
them. A loop that draws stays pinned (and stays exposed to that TF bug at one iteration).
"""
from __future__ import annotations

from tf1clip.steps import wrap

# Stateful ops a loop body may run without its numbers depending on the order of iterations.
_ORDER_FREE_STATEFUL = ("ReadVariableOp", "TensorArray", "Stack")


def one_iteration_at_a_time() -> None:
    """Pin TF 1.x and TF 2 while loops to one iteration at a time in this process (see the
    module); the gradient of a loop that draws nothing gives it back its own bound."""
    from tensorflow.python.ops import control_flow_ops, control_flow_state, while_v2

    def make_init(original):
        def _init_from_args(self, maximum_iterations, parallel_iterations, *args, **kwargs):
            self.tf1clip_requested_iterations = parallel_iterations
            return original(self, maximum_iterations, 1, *args, **kwargs)
        return _init_from_args

    wrap(control_flow_ops.WhileContext, "_init_from_args", make_init)

    def make_grad_state(original):
        def __init__(self, forward_ctxt, *args, **kwargs):
            _unpin_if_order_free(forward_ctxt)
            original(self, forward_ctxt, *args, **kwargs)
            # the gradient loop (made just now, pinned as every loop) runs at its forward loop's bound
            self.grad_context.tf1clip_requested_iterations = forward_ctxt.parallel_iterations
            _unpin_if_order_free(self.grad_context)
        return __init__

    wrap(control_flow_state._GradLoopState, "__init__", make_grad_state)  # noqa: SLF001 - TF's gradient of a loop

    # TF 2's while loops (a While op, inside tf.function) take the same bound as an argument.
    def make_while_v2(original):
        def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, *args, **kwargs):
            return original(cond, body, loop_vars, shape_invariants, 1, *args, **kwargs)
        return while_loop

    wrap(while_v2, "while_loop", make_while_v2)


def _unpin_if_order_free(ctxt) -> None:
    """Give a forward loop its requested `parallel_iterations` when its body is order-free."""
    from tensorflow.core.framework import attr_value_pb2

    requested = getattr(ctxt, "tf1clip_requested_iterations", 1)
    if requested == ctxt.parallel_iterations:
        return
    graph = ctxt.pivot.graph
    body = [op for op in graph.get_operations() if _inside(op, ctxt)]
    if any(_order_matters(op) for op in body):
        return
    frame = ctxt.name.encode()
    enters = [op for op in graph.get_operations()
              if op.type in ("Enter", "RefEnter") and op.get_attr("frame_name") == frame]
    ctxt._parallel_iterations = requested  # noqa: SLF001 - the bound TF reads for the loop's later Enters
    for op in enters:
        op._set_attr("parallel_iterations", attr_value_pb2.AttrValue(i=requested))  # noqa: SLF001


def _inside(op, ctxt) -> bool:
    context = op._get_control_flow_context()  # noqa: SLF001 - TF's control-flow context of a graph op
    while context is not None:
        if context is ctxt:
            return True
        context = context.outer_context
    return False


def _order_matters(op) -> bool:
    return op.op_def.is_stateful and not op.type.startswith(_ORDER_FREE_STATEFUL)
