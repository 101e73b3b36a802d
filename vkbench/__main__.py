"""``python -m vkbench`` is the ``vkbench`` command."""

from vkbench.cli import main

raise SystemExit(main())
