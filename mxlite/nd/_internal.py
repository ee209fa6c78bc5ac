"""``mx.nd._internal``: filled from the operator registry (ops named _internal*)."""
