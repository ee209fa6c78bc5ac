"""``mx.nd.contrib``: filled from the operator registry (ops named contrib*)."""
