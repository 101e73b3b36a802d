"""The asv suite: its catalogue of benchmarks and tiers, and how it is run (ledger, upstream mirror)."""
