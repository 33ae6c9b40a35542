"""Benchmarks: each ``bench_*.py`` module times the package against a baseline in
the same run and prints ratios. Run all with ``make bench`` or one with
``.venv/bin/python -m benchmarks conformal``.
"""
