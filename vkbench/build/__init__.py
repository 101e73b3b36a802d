"""Build modes that put one ExecuTorch commit into an asv environment.

``vkbench build MODE ...`` (parsed in :mod:`vkbench.cli.build`):

* ``aot`` (default, :mod:`vkbench.build.aot`): the commit's Python sources
  overlaid on the native parts of the nearest release wheel; seconds. ``aot``
  runs the steps; each has its module: the package index client and its cache
  (``index``), the base release (``base_release``), wheels in and out
  (``wheels``), the checkout-to-wheel mapping (``overlay``), the smoke import
  (``smoke``), the base interpreter (``interpreters``), the asv env's ``.pth``
  link and ``flatc`` (``envlink``), one-line failures (``messages``).
* ``full`` (:mod:`vkbench.build.full`): the commit's Vulkan backend compiled
  from source into a private venv (``--tracer on|off``); minutes to hours.
* ``asv-build`` / ``asv-install`` (:mod:`vkbench.build.hooks`): what
  ``asv.conf.json`` runs (``python -m vkbench build asv-build ...``); they pick
  the mode from the matrix variables ``VKBENCH_BUILD`` (``aot``|``full``) and
  ``VKBENCH_EVENT_TRACER`` (``ON``|``OFF``, full only).
* ``conf``: write a derived asv config for the ``full`` mode.

This package imports nothing heavy: it runs in asv's bare virtualenv.
"""

#: ``VKBENCH_BUILD`` values (default ``aot``, :mod:`vkbench.settings`).
MODES = ("aot", "full")
