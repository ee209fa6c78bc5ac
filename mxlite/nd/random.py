"""``mx.nd.random``: random sampling (filled in by the random ops module)."""
