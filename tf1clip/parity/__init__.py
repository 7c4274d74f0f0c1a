"""The parity harness: record OLD (TF1, compat runtime) and NEW (TF2) by hooks, compare."""
