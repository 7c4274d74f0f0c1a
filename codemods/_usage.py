"""Is a module TF 1.x code? The gate every compat-tier codemod shares.

A file is rewritten only when it uses an API that TF 2.21 lacks or that needs TF 1 graph
behaviour (`tf.placeholder`, `tf.Session`, `tf.contrib`, `tf.compat.v1.Session`, ...).
TF 2 code is left alone, and a file that mixes TF 2 eager API (`tf.GradientTape`,
`tf.function`, ...) with TF 1 graph API, without `tf.enable_eager_execution()`, is left for a
human: turning v2 behaviour off would break its eager half.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import libcst as cst
from codemods._base import dotted_name, import_module_names, walk
from codemods._tfapi import V1_ONLY, V2_ONLY

TF = "tensorflow"
V1 = "tensorflow.compat.v1"

# Names under `tf.compat.v1.` that TF 2 code uses too (logging, flags, session config): through
# `tf.compat.v1.` every other v1-only name marks TF 1 code, e.g. tf_upgrade_v2 output, which
# crashes on TF 2.21 without `disable_v2_behavior()`.
NEUTRAL_V1 = frozenset({
    "logging", "flags", "app", "gfile", "resource_loader", "sysconfig", "test", "io",
    "VERSION", "GIT_VERSION", "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION",
    "MONOLITHIC_BUILD", "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER",
    "GRAPH_DEF_VERSION_MIN_PRODUCER", "ConfigProto", "GPUOptions", "GraphOptions",
    "OptimizerOptions", "RunOptions", "RunMetadata", "enable_eager_execution",
    "enable_v2_behavior", "executing_eagerly_outside_functions",
})
# TF 1.x ops that TF 2 has only under `tf.compat.v1.`, stateless, which run unchanged in TF 2 eager
# code and in tf.function (tests/test_kept_v1_ops.py runs each in a TF 1 graph, eagerly and traced,
# and compares): code that calls them there is TF 2 code. The TF2 tier keeps them in that spelling.
KEPT_V1_OPS = frozenset({"where", "div", "nn.xw_plus_b", "nn.relu_layer", "batch_gather", "sparse_to_dense",
                         "nn.depthwise_conv2d_native"})
# TF 2 eager markers (besides every name in V2_ONLY).
TF2_MARKERS = frozenset({"GradientTape", "function", "Module", "autodiff", "compat.v2",
                         "config.run_functions_eagerly"})
EAGER_SWITCH = frozenset({"enable_eager_execution", "enable_v2_behavior"})
# tf.contrib.eager's own switch, before and after the migration names the runtime's module.
EAGER_SWITCH_NAMES = frozenset({"tensorflow.contrib.eager.enable_eager_execution",
                                "tf1clip.contrib.eager.enable_eager_execution"})
# Modules outside TensorFlow that only TF 1 code imports (their rewrite is the migration).
TF1_PACKAGES = ("tensorflow.contrib", "tensorflow.examples.tutorials")
# Packages that import TensorFlow; after migration a file uses the runtime names below and is
# still TF 1 code (so a second run is a no-op).
TF1_RUNTIME = ("tf1clip", "tf_slim")
RUNTIME_TF1 = ("tf_slim", "tf1clip.slim", "tf1clip.contrib", "tf1clip.examples", "tf1clip.estimator",
               "tf1clip.clip_gradients_by_norm")


def has_prefix(rel: str, table) -> bool:
    parts = rel.split(".")
    return any(".".join(parts[:i]) in table for i in range(1, len(parts) + 1))


@dataclass
class Usage:
    imports_tf: bool = False
    tf1: list = field(default_factory=list)        # (line, dotted source) of TF 1-only uses
    tf2: list = field(default_factory=list)        # (line, dotted source) of TF 2 eager uses
    eager: bool = False                            # calls tf.enable_eager_execution()
    disables_v2: bool = False                      # already calls tf.compat.v1.disable_v2_behavior()

    @property
    def verdict(self) -> str:
        """'none' (nothing to do), 'tf1', 'tf1-eager' (TF 1 eager code) or 'mixed'."""
        if not self.imports_tf or not self.tf1:
            return "none"
        if self.eager:
            return "tf1-eager"
        if self.tf2:
            return "mixed"
        return "tf1"

    def mixed_message(self) -> str:
        (l2, s2), (l1, s1) = self.tf2[0], self.tf1[0]
        return (f"mixes TF 2 eager API ({s2}, line {l2}) with TF 1 graph API ({s1}, line {l1}) and "
                "does not call tf.enable_eager_execution(): not rewritten; split it or migrate it by hand")


def classify(module: cst.Module, imported_names: Callable[[cst.CSTNode], set],
             line_of: Callable[[cst.CSTNode], int], nodes: Optional[Iterable[cst.CSTNode]] = None) -> Usage:
    """Classify `module`; `imported_names(node)` gives a node's imported qualified names. `nodes`: the
    module's nodes in source order when the caller has them (else walked here)."""
    usage = Usage()
    for node in walk(module) if nodes is None else nodes:
        kind = type(node)  # (classes without subclasses: `is` is much faster than libcst's abstract isinstance)
        if kind is cst.Import or kind is cst.ImportFrom:
            classify_modules(usage, import_module_names(node), line_of(node))
        elif kind is cst.Name or kind is cst.Attribute:
            for name in imported_names(node):
                _classify_name(usage, name, node, line_of)
    usage.tf1.sort(key=lambda t: t[0])
    usage.tf2.sort(key=lambda t: t[0])
    return usage


def _classify_name(usage: Usage, name: str, node: cst.CSTNode, line_of) -> None:
    source = dotted_name(node)
    if source is None:
        return
    classify_qname(usage, name, source, line_of(node))


def classify_modules(usage: Usage, modules, line: int) -> None:
    """Record the modules an import statement at `line` names (TensorFlow imported, TF 1 packages)."""
    for name in modules:
        if name == TF or name.startswith(TF + ".") or name.startswith(TF1_RUNTIME):
            usage.imports_tf = True
        if name.startswith(TF1_PACKAGES):
            usage.tf1.append((line, name))


def classify_qname(usage: Usage, name: str, source: str, line: int) -> None:
    """Record the use `source` (at `line`) whose imported qualified name is `name`."""
    where = (line, source)
    if name in EAGER_SWITCH_NAMES:
        usage.eager = True
    if name.startswith(RUNTIME_TF1):
        usage.tf1.append(where)
        return
    if not name.startswith(TF + "."):
        return
    if name.startswith(V1 + "."):
        rel = name[len(V1) + 1:]
        if rel in EAGER_SWITCH:
            usage.eager = True
        elif rel == "disable_v2_behavior":
            usage.disables_v2 = True
        if has_prefix(rel, V1_ONLY) and rel.split(".")[0] not in NEUTRAL_V1 and rel not in KEPT_V1_OPS:
            usage.tf1.append(where)
        return
    rel = name[len(TF) + 1:]
    if rel in EAGER_SWITCH:
        usage.eager = True
    elif rel == "disable_v2_behavior":  # TF 1.x's own top-level name for it
        usage.disables_v2 = True
    if rel.startswith(("contrib", "examples.tutorials")) or has_prefix(rel, V1_ONLY):
        usage.tf1.append(where)
    elif has_prefix(rel, V2_ONLY) or has_prefix(rel, TF2_MARKERS):
        usage.tf2.append(where)
