"""Run a callback once a module is imported: the hooks of a library a script may never use
(Keras 3, tf-keras, their initializers and rnn wrappers) are installed when it is first
imported, not by importing it (Keras 3 alone costs a second and a half of every parity side
that never touches it)."""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys


def after_import(name: str, callback) -> None:
    """Call callback(module) once module `name` is imported (now, if it already is)."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """A finder that lets the others find `name`, then runs a callback after it executes."""

    def __init__(self, name, callback):
        self.name = name
        self.callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, callback = spec.loader, self.callback
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            callback(module)

        loader.exec_module = exec_module
        return spec
