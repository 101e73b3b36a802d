"""The lowering core: one lowering path and the instrumentation inside it."""
