"""Soft device placement for `tf1clip run`: a `tf.device('/gpu:0')` pin runs on the machine at hand.

TF 1.x users ran GPU-pinned scripts on other machines with `allow_soft_placement=True`;
without it TF 2.21 stops with "Cannot assign a device for operation". While installed, every
`tf.compat.v1` Session (also InteractiveSession and the MonitoredSession family, which build
one) gets `allow_soft_placement=True` on top of the config the script gave, and the first op
pinned to a device this machine lacks is named once on stderr, with the user's line. A
convolution that TF 2.21's oneDNN kernels gave a wrong shape for a batch of 0 rows is named in
one line (tf1clip.empty_batch) instead of TensorFlow's message.
"""
from __future__ import annotations

import sys
import weakref
from typing import Callable, Optional


class SoftPlacement:
    """Installs soft placement on `tensorflow.python.client.session.BaseSession` (and undoes it)."""

    def __init__(self, is_user_file: Callable[[str], bool], stream=None):
        self.is_user_file = is_user_file
        self.stream = stream if stream is not None else sys.stderr
        self.noted = False
        self._seen: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # graph -> ops checked
        self._available: Optional[set] = None
        self._originals: Optional[tuple] = None

    # -- install / uninstall -------------------------------------------------------------------
    def install(self) -> None:
        from tensorflow.python.client import session
        from tensorflow.python.framework import errors

        from tf1clip import empty_batch

        base = session.BaseSession
        init, run = base.__init__, base._run
        placement = self

        def __init__(self, target="", graph=None, config=None):
            init(self, target, graph, placement.soft_config(config))
            placement.check(self.graph)

        def _run(self, handle, fetches, feed_dict, options, run_metadata):
            placement.check(self.graph)
            try:
                return run(self, handle, fetches, feed_dict, options, run_metadata)
            except errors.InvalidArgumentError as exc:
                defect = empty_batch.explain(exc)
                if defect is None:
                    raise
                raise defect from exc

        self._originals = (init, run)
        base.__init__, base._run = __init__, _run

    def uninstall(self) -> None:
        if self._originals is not None:
            from tensorflow.python.client import session

            session.BaseSession.__init__, session.BaseSession._run = self._originals
            self._originals = None

    # -- the config ------------------------------------------------------------------------------
    @staticmethod
    def soft_config(config):
        """`config` (None: TensorFlow's default) with allow_soft_placement on; the script's own
        settings (gpu_options, log_device_placement, ...) kept."""
        from tensorflow.core.protobuf import config_pb2
        from tensorflow.python.eager import context

        if config is None:
            config = context.context().config
        if not isinstance(config, config_pb2.ConfigProto) or config.allow_soft_placement:
            return config  # not a ConfigProto: TensorFlow's own error; already soft: as given
        soft = config_pb2.ConfigProto()
        soft.CopyFrom(config)
        soft.allow_soft_placement = True
        return soft

    # -- the note ----------------------------------------------------------------------------------
    def check(self, graph) -> None:
        """Name the first op of `graph` pinned to a device this machine lacks (once per run)."""
        if self.noted or graph is None:
            return
        version = graph.version
        checked = self._seen.get(graph, 0)
        if version == checked:
            return
        self._seen[graph] = version
        ops = graph.get_operations()
        for op in ops[checked:] if checked <= len(ops) else ops:
            missing = self._missing(op.device)
            if missing:
                self.noted = True
                where = self._user_line(op)
                print(f"tf1clip: {where}ops pinned to {missing} run on the CPU: this machine has no such device "
                      "(soft placement is on, as TF 1.x's allow_soft_placement=True)", file=self.stream)
                return

    def _missing(self, device: str) -> Optional[str]:
        if not device:
            return None
        from tensorflow.python.framework import device_spec

        spec = device_spec.DeviceSpecV2.from_string(device)
        if not spec.device_type:
            return None
        if self._available is None:
            import tensorflow as tf

            self._available = {(d.device_type, int(d.name.rsplit(":", 1)[1])) for d in tf.config.list_logical_devices()}
        if (spec.device_type.upper(), spec.device_index or 0) in self._available:
            return None
        return f"/device:{spec.device_type.upper()}:{spec.device_index or 0}"

    def _user_line(self, op) -> str:
        for frame in reversed(op.traceback or ()):
            if self.is_user_file(frame.filename):
                return f"{frame.filename}:{frame.lineno}: "
        return ""
