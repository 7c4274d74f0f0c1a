"""tf.contrib.opt's most used optimizers with TF 1.15's update rules, as tf.compat.v1 optimizers.

- `LazyAdamOptimizer`: Adam, except that a sparse gradient (IndexedSlices, e.g. of an
  embedding) updates m, v and the variable only at the rows it touches (duplicate rows summed
  first, as every v1 optimizer does); dense gradients get Adam's update.
- `DecoupledWeightDecayExtension`, `AdamWOptimizer`, `MomentumWOptimizer`,
  `extend_with_decoupled_weight_decay`: before each variable's update, var -= weight_decay * var
  (not scaled by the learning rate; only the variables of `decay_var_list` when it is given to
  `apply_gradients`: TF 1.15's `minimize(decay_var_list=...)` lost the list on its way to
  `apply_gradients` and decayed every variable, and so does this, to give TF 1.x's numbers).
"""
import tensorflow as tf

from tf1clip.contrib import forward

_v1 = tf.compat.v1


class LazyAdamOptimizer(_v1.train.AdamOptimizer):
    def _sparse_terms(self, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = tf.cast(beta1_power, dtype), tf.cast(beta2_power, dtype)
        lr_t, beta1_t, beta2_t, epsilon_t = (tf.cast(t, dtype) for t in
                                            (self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        lr = lr_t * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        return lr, beta1_t, beta2_t, epsilon_t

    def _apply_sparse(self, grad, var):
        lr, beta1_t, beta2_t, epsilon_t = self._sparse_terms(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = _v1.scatter_update(m, grad.indices, beta1_t * tf.gather(m, grad.indices) + (1 - beta1_t) * grad.values,
                                 use_locking=self._use_locking)
        v_t = _v1.scatter_update(v, grad.indices,
                                 beta2_t * tf.gather(v, grad.indices) + (1 - beta2_t) * tf.square(grad.values),
                                 use_locking=self._use_locking)
        m_slice, v_slice = tf.gather(m_t, grad.indices), tf.gather(v_t, grad.indices)
        var_update = _v1.scatter_sub(var, grad.indices, lr * m_slice / (tf.sqrt(v_slice) + epsilon_t),
                                     use_locking=self._use_locking)
        return tf.group(var_update, m_t, v_t)

    def _resource_apply_sparse(self, grad, var, indices):
        from tensorflow.python.ops import resource_variable_ops as rvo

        lr, beta1_t, beta2_t, epsilon_t = self._sparse_terms(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_slice = beta1_t * tf.gather(m, indices) + (1 - beta1_t) * grad
        v_slice = beta2_t * tf.gather(v, indices) + (1 - beta2_t) * tf.square(grad)
        m_update = rvo.resource_scatter_update(m.handle, indices, m_slice)
        v_update = rvo.resource_scatter_update(v.handle, indices, v_slice)
        var_update = rvo.resource_scatter_sub(var.handle, indices, lr * m_slice / (tf.sqrt(v_slice) + epsilon_t))
        return tf.group(var_update, m_update, v_update)


class DecoupledWeightDecayExtension:
    """Mixin: decay each variable by weight_decay * var right before the base optimizer's update."""

    def __init__(self, weight_decay, **kwargs):
        self._decay_var_list = None
        self._weight_decay = weight_decay
        self._weight_decay_tensor = None
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=_v1.train.Optimizer.GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        self._decay_var_list = {v.ref() for v in decay_var_list} if decay_var_list else False
        return super().minimize(loss, global_step=global_step, var_list=var_list, gate_gradients=gate_gradients,
                                aggregation_method=aggregation_method,
                                colocate_gradients_with_ops=colocate_gradients_with_ops, name=name,
                                grad_loss=grad_loss)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, decay_var_list=None):
        self._decay_var_list = {v.ref() for v in decay_var_list} if decay_var_list else False
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        weight_decay = self._weight_decay() if callable(self._weight_decay) else self._weight_decay
        self._weight_decay_tensor = tf.convert_to_tensor(weight_decay, name="weight_decay")
        super()._prepare()

    def _decays(self, var):
        return not self._decay_var_list or var.ref() in self._decay_var_list

    def _decay_weights_op(self, var):
        if self._decays(var):
            return _v1.assign_sub(var, self._weight_decay_tensor * var, self._use_locking)
        return tf.no_op()

    def _decay_weights_sparse_op(self, var, indices, scatter_add):
        if self._decays(var):
            return scatter_add(var, indices, -self._weight_decay_tensor * tf.gather(var, indices), self._use_locking)
        return tf.no_op()

    def _apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_weights_op(var)]):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_weights_op(var)]):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies([self._decay_weights_sparse_op(var, grad.indices, _v1.scatter_add)]):
            return super()._apply_sparse(grad, var)

    def _resource_scatter_add(self, x, i, v, _=None):
        from tensorflow.python.ops import resource_variable_ops as rvo

        with tf.control_dependencies([rvo.resource_scatter_add(x.handle, i, v)]):
            return x.value()

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies([self._decay_weights_sparse_op(var, indices, self._resource_scatter_add)]):
            return super()._resource_apply_sparse(grad, var, indices)


def extend_with_decoupled_weight_decay(base_optimizer):
    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        def __init__(self, weight_decay, *args, **kwargs):
            super().__init__(weight_decay, **dict(zip(_init_names(base_optimizer), args)), **kwargs)

    return OptimizerWithDecoupledWeightDecay


def _init_names(cls):
    import inspect

    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


class AdamWOptimizer(DecoupledWeightDecayExtension, _v1.train.AdamOptimizer):
    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="AdamW"):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon,
                         use_locking=use_locking, name=name)


class MomentumWOptimizer(DecoupledWeightDecayExtension, _v1.train.MomentumOptimizer):
    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False, name="MomentumW", use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum, use_locking=use_locking,
                         name=name, use_nesterov=use_nesterov)


__getattr__ = forward(__name__, "tf.contrib.opt")  # hints: tf1clip.contrib.hints
