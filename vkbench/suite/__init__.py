"""The asv suite: its catalogue of benchmarks (names and fixed grids), its tiers, and its identity.

What the suite is, not how it runs (that is :mod:`vkbench.runs`): :mod:`~vkbench.suite.identity` is
the digest of the vkbench code each benchmark module's records run (its asv ``version``), over
the files :mod:`~vkbench.suite.suite_inputs` found by running them under :mod:`~vkbench.suite.reads`'
audit hook.
"""
