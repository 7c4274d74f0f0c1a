"""One generic test runs every codemod's own before/after examples (Fixit style).

Each command in `codemods.COMPAT_TIER` carries `VALID` (must stay byte-for-byte) and
`INVALID` (must become `expected`) examples; every rewrite applied twice equals applied once.
Real libcst, no mocks. Also: each command runs standalone through `python -m libcst.tool codemod`.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import codemods  # noqa: E402
from codemods._base import NOTES_KEY  # noqa: E402

COMMANDS = list(codemods.COMPAT_TIER)


def _apply(cls, code: str) -> tuple[str, CodemodContext]:
    context = CodemodContext(filename="example.py")
    return cls(context).transform_module(cst.parse_module(code)).code, context


def _cases(kind: str):
    for cls in COMMANDS:
        for i, example in enumerate(getattr(cls, kind)):
            yield pytest.param(cls, example, id=f"{cls.RULE}-{kind.lower()}-{i}")


@pytest.mark.parametrize("cls, example", list(_cases("VALID")))
def test_valid_example_is_left_unchanged(cls, example):
    out, _ = _apply(cls, example.code)
    assert out == example.code


@pytest.mark.parametrize("cls, example", list(_cases("INVALID")))
def test_invalid_example_is_rewritten_and_twice_equals_once(cls, example):
    once, context = _apply(cls, example.code)
    assert once == example.expected
    twice, _ = _apply(cls, once)
    assert twice == once
    changes = [n for n in context.scratch.get(NOTES_KEY, []) if n.kind == "change"]
    assert changes and all(n.rule == cls.RULE and n.line >= 1 for n in changes), changes


@pytest.mark.parametrize("cls", COMMANDS, ids=lambda c: c.RULE)
def test_every_command_documents_itself(cls):
    module = sys.modules[cls.__module__]
    assert cls.RULE == module.__name__.rsplit(".", 1)[1], "the rule id is the module name"
    assert cls.DESCRIPTION and cls.DESCRIPTION != "No description."
    assert module.__doc__ and len(cls.VALID) >= 1 and len(cls.INVALID) >= 1


def test_whole_tier_on_every_example_is_idempotent():
    """The tier (all rules in order) applied to every example, twice, equals once."""
    from tf1clip.migrate.engine import migrate_text

    for cls in COMMANDS:
        for example in [*cls.VALID, *cls.INVALID]:
            once = migrate_text(example.code).text
            assert migrate_text(once).text == once, (cls.RULE, example.code)


def test_unknown_contrib_name_is_reported_for_a_human():
    code = "import tensorflow as tf\n\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 0.5)\n"
    out, context = _apply(codemods.ContribSymbolsCommand, code)
    assert out == code
    (note,) = context.scratch[NOTES_KEY]
    assert note.kind == "human" and note.line == 3 and "tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper" in note.message
    assert any("line 3" in w for w in context.warnings)  # what libcst.tool prints standalone


@pytest.mark.parametrize("source, expected_line", [
    ("import tensorflow as tf1\nopt = tf1.contrib.estimator.clip_gradients_by_norm(o, clip_norm=5.0)\n", 2),
    ("from tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt\n"
     "import tensorflow as tf\nopt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n", 1),
    ("from tensorflow import contrib\nimport tensorflow as tf\n\nopt = contrib.estimator.clip_gradients_by_norm(o, 5.0)\n", 4),
])
def test_aliases_resolve_through_qualified_names(source, expected_line):
    out, context = _apply(codemods.ContribSymbolsCommand, source)
    assert "contrib" not in out.replace("tf1clip", "")
    (note,) = context.scratch[NOTES_KEY]
    assert note.runtime == "tf1clip.clip_gradients_by_norm" and note.line == expected_line


def test_codemod_runs_standalone_with_libcst_tool(tmp_path):
    target = tmp_path / "tree"
    target.mkdir()
    (target / "model.py").write_bytes(b"import tensorflow as tf\r\n\r\ncell = tf.contrib.rnn.GRUCell(4)\r\n")
    shutil.copy(ROOT / "fixtures" / "migrate" / "tree" / "utils.py", target / "utils.py")
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "contrib_symbols.ContribSymbolsCommand", str(target)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (target / "model.py").read_bytes() == b"import tensorflow as tf\r\n\r\ncell = tf.compat.v1.nn.rnn_cell.GRUCell(4)\r\n"
    assert (target / "utils.py").read_bytes() == (ROOT / "fixtures/migrate/tree/utils.py").read_bytes()
