"""One generic test runs every compat rule's own before/after examples (Fixit style).

Each rule in `codemods.COMPAT_RULES` carries `VALID` (must stay byte-for-byte) and `INVALID`
(must become `expected`) examples, applied with the rule alone through the one-pass engine and
through the rule's libcst command (what `python -m libcst.tool codemod` runs); every rewrite
applied twice equals applied once. Real libcst, no mocks.
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
from codemods.engine import apply  # noqa: E402

RULES = list(codemods.COMPAT_RULES)
# what `python -m libcst.tool codemod <module>.<Rule>Command` loads
COMMANDS = {rule: getattr(sys.modules[rule.__module__], f"{rule.__name__}Command") for rule in RULES}


def _apply(rule, code: str):
    result = apply(code, [rule], "example.py")
    return result.text, result.notes


def _command(rule, code: str) -> tuple[str, CodemodContext]:
    context = CodemodContext(filename="example.py")
    return COMMANDS[rule](context).transform_module(cst.parse_module(code)).code, context


def _cases(kind: str):
    for rule in RULES:
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.RULE}-{kind.lower()}-{i}")


@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
def test_valid_example_is_left_unchanged(rule, example):
    assert _apply(rule, example.code)[0] == example.code
    assert _command(rule, example.code)[0] == example.code


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_is_rewritten_and_twice_equals_once(rule, example):
    once, notes = _apply(rule, example.code)
    assert once == example.expected
    assert _apply(rule, once)[0] == once
    changes = [n for n in notes if n.kind == "change"]
    assert changes and all(n.rule == rule.RULE and n.line >= 1 for n in changes), changes
    through_libcst, context = _command(rule, example.code)
    assert through_libcst == example.expected and context.scratch[NOTES_KEY] == notes


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.RULE)
def test_every_rule_documents_itself(rule):
    module = sys.modules[rule.__module__]
    assert rule.RULE == module.__name__.rsplit(".", 1)[1], "the rule id is the module name"
    assert rule.DESCRIPTION and module.__doc__ and len(rule.VALID) >= 1 and len(rule.INVALID) >= 1
    command = getattr(module, f"{rule.__name__}Command")  # what .libcst.codemod.yaml users name
    assert command is COMMANDS[rule] and command.DESCRIPTION == rule.DESCRIPTION
    assert command.__module__ == module.__name__ and command.__name__ == f"{rule.__name__}Command"


def test_whole_tier_on_every_example_is_idempotent():
    """The tier (all rules in one pass) applied to every example, twice, equals once."""
    from tf1clip.migrate.engine import migrate_text

    for rule in RULES:
        for example in [*rule.VALID, *rule.INVALID]:
            once = migrate_text(example.code).text
            assert migrate_text(once).text == once, (rule.RULE, example.code)


def test_unknown_contrib_name_is_reported_for_a_human():
    code = "import tensorflow as tf\n\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 0.5)\n"
    out, context = _command(codemods.ContribSymbols, code)
    assert "_tf1clip_not_provided(" in out and "tf.contrib.seq2seq.Sch" not in out.replace("'tf.contrib.seq2seq.Sch", "")
    (note,) = [n for n in context.scratch[NOTES_KEY] if n.kind == "human"]
    assert note.line == 3 and "tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper" in note.message
    assert any("line 3" in w for w in context.warnings)  # what libcst.tool prints standalone


@pytest.mark.parametrize("source, expected_line", [
    ("import tensorflow as tf1\nopt = tf1.contrib.estimator.clip_gradients_by_norm(o, clip_norm=5.0)\n", 2),
    ("from tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt\n"
     "import tensorflow as tf\nopt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n", 1),
    ("from tensorflow import contrib\nimport tensorflow as tf\n\nopt = contrib.estimator.clip_gradients_by_norm(o, 5.0)\n", 4),
])
def test_aliases_resolve_through_qualified_names(source, expected_line):
    out, notes = _apply(codemods.ContribSymbols, source)
    assert "contrib" not in out.replace("tf1clip", "")
    (note,) = notes
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
