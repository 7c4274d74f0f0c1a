"""Parity for users' own test suites.

    from tf1clip.testing import assert_training_parity
    assert_training_parity("old_train.py", "new_train.py", steps=20)

Raises AssertionError carrying the per-step table when NEW does not train like OLD, or
when the two runs could not be compared (a crash, a timeout, variables that don't match).
"""
from __future__ import annotations

from tf1clip.parity import compare as _cmp


def assert_training_parity(old, new, steps=None, rtol=_cmp.DEFAULT_RTOL, atol=_cmp.DEFAULT_ATOL, args=(),
                           deterministic=False, timeout=600.0, cwd=None):
    """Run OLD under the compat runtime and NEW under TF2 and assert they train alike.

    Returns the comparison (a dict, as `tf1clip parity --json` writes) when they do.
    """
    from tf1clip.parity.cli import ParityError, run_parity

    try:
        outcome = run_parity(str(old), str(new), steps=steps, rtol=rtol, atol=atol, args=list(args),
                             deterministic=deterministic, timeout=timeout, cwd=cwd)
    except ParityError as exc:
        raise AssertionError(f"training parity could not be checked: {exc}") from None
    if not outcome.passed:
        raise AssertionError("training parity failed\n" + outcome.report)
    return outcome.result
