"""Model classes in the TF2 tier (codemods/tf2/classes.py): what becomes of a method read inline
at a call on `self`, and of plain-Python tuple assignments to attributes. The conversions
themselves are proven by parity in tests/test_tf2_parity.py (fixtures/tf2/constructs/
methods_passing_tensors.py, model_object_made_in_main.py); here, the text around them."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402

FIXTURE = (ROOT / "fixtures" / "tf2" / "constructs" / "methods_passing_tensors.py").read_text()


def test_a_method_read_inline_leaves_the_class():
    result = convert(FIXTURE, "methods.py")
    assert result.text is not None, result.notes
    assert "def encode" not in result.text and "def add_head" not in result.text
    assert "def build(self):" in result.text
    assert any("method `encode` read where `self.encode(...)` calls it" in n.message for n in result.notes)
    assert convert(result.text, "methods.py").text == result.text


def test_a_method_used_elsewhere_too_stays_and_its_tf1_code_is_refused_not_left():
    text = FIXTURE.replace("model.build()\n", "model.build()\nencoder = model.encode\n")
    result = convert(text, "methods.py")
    assert result.text is None
    assert any("tf.variable_scope" in n.message for n in result.notes if n.kind == "human")


def test_a_tuple_assignment_of_plain_values_to_attributes_is_kept_as_written():
    swap = "        self.n_hidden, self.n_classes = self.n_classes, self.n_hidden\n"
    text = FIXTURE.replace("        self.n_hidden, self.n_classes = n_hidden, n_classes\n",
                           "        self.n_hidden, self.n_classes = n_hidden, n_classes\n" + swap)
    result = convert(text, "methods.py")
    assert result.text is not None, result.notes
    assert swap in result.text
    assert "tf.keras.layers.Dense(self.n_classes)" in result.text
