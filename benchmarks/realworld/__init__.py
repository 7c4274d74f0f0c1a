"""Helpers of benchmarks/realworld.py (the real-world proving ground)."""
