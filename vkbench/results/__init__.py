"""What was recorded: one model of asv result files and the reports read from it."""
