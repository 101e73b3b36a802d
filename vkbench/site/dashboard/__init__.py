"""``html/index.html``: the dashboard, a page to look at rather than read.

The asv sites answer "how did benchmark X move?"; what a visitor wants first
is the state of the Vulkan backend at a glance. This page shows, from the
recorded results only (nothing is measured here), six things, each under a
headline that states the takeaway in numbers:

1. per-policy Vulkan share: delegated nodes, CPU nodes by partitioner reason,
   and the stage that blocks the entries that never reach the partitioner
   (``results/policies/*.json``, written by ``vkbench policies``);
2. the top blockers: CPU ops by nodes left on the CPU, and the entries each
   would fully delegate alone (same file);
3. the partition scaling curve: ``Blocks(n)`` partition time on log-log axes
   with the fitted exponent, and its split by partitioner phase (the asv
   results of ``bench_partition`` under ``results/releases/``), with the
   ``fusable_patterns`` share per size and the bug row behind it;
4. coverage across the recorded upstream commits: one step chart per probe
   and per policy entry (asv results under ``results/upstream/``);
5. ``Many(n)`` step limits per device and event-tracer setting, and
6. how far each policy entry and probe gets on the runtime ladder (the runtime
   rows of :mod:`vkbench.site.runtime_page`).

Everything comes from the publish's :class:`~vkbench.site.data.SiteData`. Selecting
what a section shows (:mod:`.views`, ``load_*``) is kept apart from drawing
(:mod:`.plots`, matplotlib's SVG backend without pyplot), from the sentences
(:mod:`.headlines`) and from the HTML (:mod:`.page`).
"""

from __future__ import annotations

from vkbench.site.dashboard.dashboard_page import PAGE

__all__ = ["PAGE"]
