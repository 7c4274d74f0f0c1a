"""tf.contrib.eager (`tfe`): TF 1.x's eager API, on TF 2.21's eager execution.

TF 1.15's `tfe` names were mostly TensorFlow's own eager functions under other names; they are
the same objects here (`implicit_value_and_gradients` is `backprop.implicit_val_and_grad`,
`Variable` is `ResourceVariable`, `Iterator` the eager dataset iterator, `Checkpoint` the v1
`tf.train.Checkpoint`). `tfe.enable_eager_execution()` (or `tf.enable_eager_execution()`) at
the top of the script turns eager execution back on after the face's
`disable_v2_behavior()`, as TF 1.x required it at program start. `Network` and `Sequential`
(TF 1.x's eager model containers) are tf1clip's (`tf1clip.contrib.eager_network`). What TF
2.21 no longer has (`metrics`, the eager `Saver`, ...) is named with its TF 2 replacement.
"""
import tensorflow as _tf
from tensorflow.python.data.ops import iterator_ops as _iterator_ops
from tensorflow.python.eager import backprop as _backprop
from tensorflow.python.eager import context as _context
from tensorflow.python.ops import resource_variable_ops as _resource_variable_ops
from tensorflow.python.ops import variable_scope as _variable_scope
from tensorflow.python.trackable import autotrackable as _autotrackable

from tf1clip.contrib import forward
from tf1clip.contrib.eager_network import Network, Sequential

enable_eager_execution = _tf.compat.v1.enable_eager_execution
executing_eagerly = _context.executing_eagerly
in_eager_mode = _context.executing_eagerly
num_gpus = _context.num_gpus

Variable = _resource_variable_ops.ResourceVariable
GradientTape = _backprop.GradientTape
implicit_gradients = _backprop.implicit_grad
implicit_value_and_gradients = _backprop.implicit_val_and_grad
gradients_function = _backprop.gradients_function
value_and_gradients_function = _backprop.val_and_grad_function
custom_gradient = _tf.custom_gradient

Iterator = _iterator_ops.OwnedIterator
Checkpoint = _tf.compat.v1.train.Checkpoint
Checkpointable = _autotrackable.AutoTrackable
EagerVariableStore = _variable_scope.EagerVariableStore
TensorSpec = _tf.TensorSpec
py_func = _tf.py_function
make_template = _tf.compat.v1.make_template
function = _tf.function

set_execution_mode = _context.set_execution_mode
execution_mode = _context.execution_mode
async_wait = _context.async_wait
async_clear_error = _context.async_clear_error
SYNC = _context.SYNC
ASYNC = _context.ASYNC
DEVICE_PLACEMENT_EXPLICIT = _context.DEVICE_PLACEMENT_EXPLICIT
DEVICE_PLACEMENT_WARN = _context.DEVICE_PLACEMENT_WARN
DEVICE_PLACEMENT_SILENT = _context.DEVICE_PLACEMENT_SILENT


def defun(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
          experimental_relax_shapes=False):
    """TF 1.15's `defun`: a traced graph function, now `tf.function` (same tracing rules)."""
    return _tf.function(func, input_signature=input_signature, autograph=autograph,
                        experimental_autograph_options=experimental_autograph_options,
                        reduce_retracing=experimental_relax_shapes)


def list_devices():
    """The names of the devices eager execution can use (TF 1.15: `context.list_devices()`)."""
    return [device.name for device in _tf.config.list_logical_devices()]


__getattr__ = forward(__name__, "tf.contrib.eager", hints={
    "metrics": "use tf.keras.metrics (update_state / result)",
    "save_network_checkpoint": "use tfe.Checkpoint(model=network).save(prefix)",
    "restore_network_checkpoint": "use tfe.Checkpoint(model=network).restore(path)",
    "Saver": "use tf.train.Checkpoint (tfe.Checkpoint)",
    "restore_variables_on_create": "use tf.train.Checkpoint(...).restore, which restores on creation",
    "seterr": "use tf.debugging.enable_check_numerics",
    "add_execution_callback": "use tf.debugging.enable_check_numerics",
    "run_test_in_graph_and_eager_modes": "TF 2 tests run eagerly; use tf.test.TestCase",
})
