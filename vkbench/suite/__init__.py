"""The asv suite: its catalogue of benchmarks (names and fixed grids) and its tiers.

What the suite is, not how it runs (that is :mod:`vkbench.runs`).
"""
