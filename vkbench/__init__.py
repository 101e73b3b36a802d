"""vkbench: how much of each model the ExecuTorch Vulkan backend takes, and why not the rest."""

__version__ = "0.1.0"
