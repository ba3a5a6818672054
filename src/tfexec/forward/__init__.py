"""The lowering route: a forward-only, shape-indexed SSA list of typed closures (Lean ``IRExec``)."""
