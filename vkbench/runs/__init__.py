"""Running asv: the installed-release ledger, asv over an upstream mirror, bisection over commit
classes, and the provenance a run stamps beside its results."""
