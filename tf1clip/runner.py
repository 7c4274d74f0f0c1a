"""`tf1clip run SCRIPT [ARGS...]`: run an unmodified TF 1.x script on TF 2.21 in graph mode.

The script is executed as `__main__` the way `python SCRIPT` would (sys.argv, sys.path[0],
exit status). While it runs, `import tensorflow...` written in the user's own files (not in
installed libraries, which keep the real TensorFlow; `--include PACKAGE` makes an installed
package the user's) resolves to the TF 1.x face `tf1clip.v1`: `tensorflow` (and
`tensorflow.compat.v1`) is the face, `tensorflow.contrib.X` is `tf1clip.contrib.X`,
`tensorflow.estimator.X` is `tf1clip.estimator.X`, `tensorflow.examples.X` is
`tf1clip.examples.X`, anything else (`tensorflow.python...`) is the real module. `import numpy`
in the same files gives NumPy with the NumPy 1.x names NumPy 2 removed (tf1clip.legacy_numpy).
Sessions place ops softly (tf1clip.placement); a narrow NumPy integer (NumPy 2's uint8 where
NumPy 1.x made int64) is taken as a shape (tf1clip.numpy_shapes). The face adds no graph ops, so graph-level seeds
give the script's own numbers.
"""
from __future__ import annotations

import builtins
import importlib
import os
import sys
import sysconfig
import traceback
import types

from tf1clip._source import SourceProblem, check_source, decode_source
from tf1clip.arguments import UsageError
from tf1clip.tracebacks import print_user_traceback

_HERE = os.path.dirname(os.path.abspath(__file__))

USAGE = """\
usage: tf1clip run [--steps N] [--include PACKAGE]... SCRIPT [ARGS...]

  --steps N          stop the script before its update N + 1 (an optimizer update, or with no
                     optimizer a Session.run that writes a model variable); exit 0 with one line
  --include PACKAGE  treat an installed package (e.g. a TF 1.x project pip-installed into
                     site-packages) as the user's code: it gets the TF 1.x face too (repeatable)
"""


class _UserCode:
    """Decides whether an importing module is the user's (gets the face) or a library's.

    By location: files outside the standard library and site-packages are the user's. The
    packages named in `include` (and their submodules) are the user's wherever installed."""

    def __init__(self, include=()):
        self._include = tuple(include)
        self._include_prefixes = tuple(p + "." for p in self._include)
        self._include_dirs = tuple(d.rstrip(os.sep) + os.sep for d in _package_dirs(self._include))
        prefixes = {_HERE}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                prefixes.add(os.path.realpath(path))
        for path in sys.path:  # site-packages of other layouts (user site, --target dirs)
            if path and os.path.basename(path) in ("site-packages", "dist-packages"):
                prefixes.add(os.path.realpath(path))
        self._prefixes = tuple(p.rstrip(os.sep) + os.sep for p in prefixes)
        self._cache: dict[str, bool] = {}

    def __call__(self, module_globals) -> bool:
        if not module_globals:
            return False
        if self._include:
            name = module_globals.get("__name__") or ""
            if name in self._include or name.startswith(self._include_prefixes):
                return True
        filename = module_globals.get("__file__")
        if not filename:
            return module_globals.get("__name__") == "__main__"
        verdict = self._cache.get(filename)
        if verdict is None:
            verdict = not os.path.realpath(filename).startswith(self._prefixes)
            self._cache[filename] = verdict
        return verdict

    def is_user_file(self, filename: str) -> bool:
        if self._include_dirs and os.path.realpath(filename).startswith(self._include_dirs):
            return True
        return self({"__file__": filename})


def _package_dirs(packages) -> list[str]:
    """The folders of the importable `packages` (a module: its file's folder); UsageError if one
    cannot be found."""
    import importlib.util

    dirs = []
    for package in packages:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise UsageError(f"run: --include {package}: no such importable package")
        locations = list(spec.submodule_search_locations or [])
        if not locations and spec.origin:
            locations = [os.path.dirname(spec.origin)]
        dirs.extend(os.path.realpath(d) for d in locations)
    return dirs


class FaceImporter:
    """Wraps builtins.__import__ so that users' `import tensorflow...` gets the TF 1.x face."""

    _OWN = {"contrib": "tf1clip.contrib", "examples": "tf1clip.examples", "estimator": "tf1clip.estimator"}

    def __init__(self, face: types.ModuleType, user_code: _UserCode):
        self.face = face
        self.user_code = user_code
        self._original = None
        self._numpy = None  # the NumPy 1.x view (tf1clip.legacy_numpy), made at the first user import

    def install(self):
        self._original = builtins.__import__
        builtins.__import__ = self

    def uninstall(self):
        if self._original is not None:
            builtins.__import__ = self._original
            self._original = None

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.startswith(("tensorflow", "numpy")) and self.user_code(globals):
            if name == "tensorflow" or name.startswith("tensorflow."):
                return self._face_import(name, fromlist)
            if name == "numpy" or (name.startswith("numpy.") and not fromlist):
                return self._numpy_import(name, fromlist)
        return self._original(name, globals, locals, fromlist, level)

    def _numpy_import(self, name, fromlist):
        """`import numpy [as np]`, `from numpy import X`, `import numpy.sub`: the view of the
        top-level module; `from numpy.sub import X` stays the real submodule's."""
        self._original(name, None, None, fromlist, 0)  # the real module (and submodule) loaded
        if self._numpy is None:
            from tf1clip.legacy_numpy import numpy_view

            self._numpy = numpy_view()
        return self._numpy

    def _face_import(self, name, fromlist):
        from tf1clip.errors import UnsupportedImport, UnsupportedSymbol

        parts = name.split(".")
        if parts[1:3] == ["compat", "v1"]:  # the face is tf.compat.v1 plus what TF 2 dropped
            parts = [parts[0], *parts[3:]]
        if len(parts) == 1:
            target = self.face
        elif parts[1] in self._OWN:
            try:
                target = self._resolve_own(parts)
                for item in fromlist or ():
                    if item != "*":
                        self._child(target, item, parts)
            except UnsupportedSymbol as exc:
                raise UnsupportedImport(exc.symbol.replace("tf.", "tensorflow.", 1), exc.hint, exc.reason) from None
        else:
            target = self._original(name, None, None, fromlist, 0)
        return target if fromlist else self.face

    def _resolve_own(self, parts):
        target = importlib.import_module(self._OWN[parts[1]])
        for depth, part in enumerate(parts[2:], start=2):
            target = self._child(target, part, parts[:depth])
        return target

    @staticmethod
    def _child(module, name, parent_parts):
        """module.name, importing it as a submodule if need be; else UnsupportedSymbol."""
        from tf1clip.errors import UnsupportedSymbol

        try:
            return getattr(module, name)
        except UnsupportedSymbol:
            raise
        except AttributeError:
            try:
                return importlib.import_module(f"{module.__name__}.{name}")
            except ModuleNotFoundError:
                raise UnsupportedSymbol("tf." + ".".join([*parent_parts[1:], name])) from None


def main(argv: list[str], debug: bool = False) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    steps, include, argv = _options(argv)
    if not argv:
        raise UsageError("run: give the script to run")
    script, args = argv[0], argv[1:]
    if not os.path.exists(script):
        raise UsageError(f"{script}: no such file")
    if os.path.isdir(script):
        raise UsageError(f"{script}: is a directory; give the script to run")
    with open(script, "rb") as handle:
        data = handle.read()
    if script.endswith(".ipynb"):
        from tf1clip.notebook_run import load_notebook

        text = problem = load_notebook(script, data)
        if not isinstance(problem, SourceProblem):
            problem = None
    else:
        problem = check_source(script, data)
        text = decode_source(data)[0] if problem is None else None
    if problem is not None:
        print(problem.one_line(), file=sys.stderr)
        return 2
    if steps is None:
        return run_script(script, text, args, debug=debug, include=include)
    return _run_steps(script, text, args, steps, debug, include)


def _options(argv: list[str]) -> tuple[int | None, list[str], list[str]]:
    """`--steps N` and `--include PACKAGE` (repeatable), `--opt V` or `--opt=V`, before SCRIPT
    (what follows the script is the script's)."""
    steps, include = None, []
    while argv and argv[0].startswith("--"):
        option, sep, value = argv[0].partition("=")
        if option not in ("--steps", "--include"):
            raise UsageError(f"run: unknown option {argv[0]}")
        if not sep:
            if len(argv) < 2:
                raise UsageError(f"run: {option} needs a {'number' if option == '--steps' else 'package name'}")
            value, argv = argv[1], argv[2:]
        else:
            argv = argv[1:]
        if option == "--include":
            include.append(value)
            continue
        try:
            steps = int(value)
        except ValueError:
            raise UsageError(f"run: --steps must be a whole number, not {value!r}") from None
        if steps < 1:
            raise UsageError("run: --steps must be >= 1")
    return steps, include, argv


def _run_steps(script: str, text: str, args: list[str], steps: int, debug: bool, include=()) -> int:
    """run_script, stopped before update steps + 1: exit 0 and one line saying so."""
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    importlib.import_module("tf1clip.v1")  # TensorFlow under the legacy-Keras switch first
    from tf1clip.steps import StepsReached, install_step_limit

    install_step_limit(steps)
    try:
        return run_script(script, text, args, debug=debug, passthrough=(StepsReached,), include=include)
    except StepsReached:
        sys.stdout.flush()
        print(f"tf1clip run: {script}: stopped after {steps} updates (--steps {steps})", file=sys.stderr)
        return 0


def run_script(script: str, text: str, args: list[str], debug: bool = False, passthrough=(), include=()) -> int:
    """Execute `text` (the source of `script`) as __main__ with the TF 1.x face installed.

    Exceptions of the `passthrough` types propagate (the parity recorder's stop signal);
    anything else the script raises is reported as `python SCRIPT` would. The packages in
    `include` count as the user's code wherever they are installed.
    """
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    face = importlib.import_module("tf1clip.v1")
    from tf1clip.numpy_shapes import NumpyIntegerShapes
    from tf1clip.placement import SoftPlacement

    user_code = _UserCode(include)
    importer = FaceImporter(face, user_code)
    placement = SoftPlacement(user_code.is_user_file)
    shapes = NumpyIntegerShapes(user_code.is_user_file)
    importer.install()
    placement.install()
    shapes.install()
    try:
        return execute_main(script, text, args, passthrough=passthrough, debug=debug, user_code=user_code)
    finally:
        shapes.uninstall()
        placement.uninstall()
        importer.uninstall()


def execute_main(script: str, text, args: list[str], passthrough=(), debug: bool = False,
                 user_code: _UserCode | None = None) -> int:
    """Run source as the __main__ module like `python SCRIPT`: argv, sys.path[0], exit status.

    `text` is the script's source, or a notebook's cells (`tf1clip.notebook_run.NotebookProgram`),
    which run in order in the one namespace, as a kernel runs them (no `__file__` then)."""
    path = os.path.abspath(script)
    main_module = types.ModuleType("__main__")
    if isinstance(text, str):
        code = compile(text, script, "exec", dont_inherit=True)
        main_module.__file__ = path

        def body(namespace):
            exec(code, namespace)
        hide = (__file__,)
    else:
        body, hide = text.run, (__file__, sys.modules[type(text).__module__].__file__)
    main_module.__builtins__ = builtins
    saved = sys.argv, list(sys.path), sys.modules.get("__main__")
    sys.argv = [script, *args]
    sys.path[0:1] = [os.path.dirname(path)]
    sys.modules["__main__"] = main_module
    try:
        body(main_module.__dict__)
    except SystemExit as exc:
        return _exit_status(exc.code)
    except passthrough:
        raise
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException as exc:  # noqa: BLE001 - the user's script crashed: report it like python does
        if getattr(exc, "tf1clip_unsupported", False) and not debug:
            print(f"{_user_location(exc, user_code or _UserCode(), script)}: {exc}", file=sys.stderr)
            return 2
        print_user_traceback(exc, hide=hide)
        return 1
    finally:
        sys.argv, sys.path[:] = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
        sys.stdout.flush()
    return 0


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_location(exc, user_code: _UserCode, script: str) -> str:
    location = f"{script}:1"
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if os.path.abspath(filename) == os.path.abspath(script) or (
                filename != __file__ and user_code.is_user_file(filename)):
            location = f"{filename}:{lineno}"
    return location
