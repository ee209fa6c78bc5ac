"""``mxlite.contrib``: optional add-ons. ``mxlite.contrib.horovod`` is Horovod's
``horovod.mxnet`` API on MPI (import it explicitly; it needs ``mxlite[dist]``)."""
