"""ExecuTorch commits as the suite sees them: which files a lowering reads (fingerprints), and the
classes of a range (runs of first-parent commits whose lowering inputs are byte-identical).

Nothing here runs asv; :mod:`vkbench.runs` does, over these classes.
"""
