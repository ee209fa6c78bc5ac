"""Processes started as MXNet parameter servers or schedulers.

MXNet's ``tools/launch.py`` starts, besides the workers, processes with
``DMLC_ROLE=server`` or ``DMLC_ROLE=scheduler`` that run ps-lite when they import
mxnet. mxlite's distributed stores need no servers (the workers are MPI ranks that
reduce among themselves), so such a process explains that and exits with status 0
when it imports mxlite; the workers carry on.
"""
import os
import sys

__all__ = ["KVStoreServer"]


class KVStoreServer:
    """MXNet's server loop, which mxlite does not need.

    MXNet runs one in each ``DMLC_ROLE=server`` process. mxlite's distributed stores
    reduce among the workers themselves, so :meth:`run` has nothing to serve: it
    says so and returns at once.

    Parameters
    ----------
    kvstore : KVStoreBase
        The store it would serve (kept as ``kvstore``).
    """

    def __init__(self, kvstore):
        self.kvstore = kvstore
        self.init_logginig = False        # (sic) MXNet's attribute name

    def run(self):
        """Return at once: there are no server processes in mxlite."""
        sys.stderr.write("mxlite: KVStoreServer.run() has nothing to serve; mxlite's "
                         "distributed kvstores need no servers\n")


def _init_kvstore_server_module():
    """Exit (status 0) with a note when this process was started as a server/scheduler."""
    role = os.environ.get("DMLC_ROLE", "").strip().lower()
    if role not in ("server", "scheduler"):
        return
    sys.stderr.write(
        "mxlite: this process was started with DMLC_ROLE=%s, as an MXNet parameter %s. "
        "mxlite's distributed kvstores need no servers or scheduler: the workers are MPI "
        "ranks that reduce among themselves. Exiting with status 0; launch the workers "
        "with mpirun -n N python script.py or python -m mxlite.launch -n N python "
        "script.py.\n" % (role, role))
    sys.stderr.flush()
    sys.exit(0)
