"""What is lowered: the op probes, the Blocks/Many graphs, the LeRobot policy entries."""
