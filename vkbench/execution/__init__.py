"""Executing lowered programs: one layer for every workload, backend and runner.

Read in this order:

* :mod:`~vkbench.execution.outcome` — :class:`Outcome`, the one result (seconds,
  ladder rung, versioned JSON that also reads older forms);
* :mod:`~vkbench.execution.bundle` — a workload (``many/<n>``, ``probe/<name>`` or a policy entry)
  built, run eagerly and lowered per backend, in memory or saved to a folder;
* :mod:`~vkbench.execution.runners` — the Python runtime and the C++ ``pte_runner``,
  each ``ready(backend)`` / ``run(pte, inputs)``;
* :mod:`~vkbench.execution.measure` — bundle × runners -> outcomes, in this process
  or in an isolated child (:mod:`~vkbench.execution.child`);
* :mod:`~vkbench.execution.step_limit` — the largest ``Many(n)`` that executes;
* :mod:`~vkbench.execution.record` — what the asv runtime benchmarks record per commit;
* :mod:`~vkbench.execution.device` — runtime backends, Vulkan devices, texture limits;
* :mod:`~vkbench.execution.legacy` — asv results recorded by the classes this layer replaced.
"""
