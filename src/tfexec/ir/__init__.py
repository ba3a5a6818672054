"""The TileFoundry HIR: dtypes, dims, types, nodes, ops and modules."""
