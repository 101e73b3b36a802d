"""MolmoAct2 (Molmo VLM + action expert): still blocked at build.

``MolmoAct2Policy.__init__`` loads ``checkpoint_path`` (a hub id by default).
"""

from __future__ import annotations

from vkbench.policies.offline_build import hub_entry

hub_entry("molmoact2", "model", "MolmoAct2: Molmo VLM + action expert",
          notes="__init__ loads checkpoint_path (a hub id by default; a local folder would do, but "
          "vkbench does not write a reduced MolmoAct2 checkpoint yet)")
