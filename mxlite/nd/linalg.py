"""``mx.nd.linalg``: filled from the operator registry (ops named linalg*)."""
