"""Fail when a product file (mxlite/**/*.py) is over 800 lines: split it along its seams.

Usage: python .ci/check_sizes.py [root]   (root: the repository, by default this one)
"""
import os
import sys

LIMIT = 800

# Files over the limit that are being split right now, each with why. An entry whose
# file is back under the limit is reported, so that it can be removed.
PENDING = {}


def oversized(root):
    """``(path, lines)`` of every mxlite/**/*.py over LIMIT lines, path relative to root."""
    out = []
    for folder, dirs, files in os.walk(os.path.join(root, "mxlite")):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    n = sum(1 for _ in f)
                if n > LIMIT:
                    out.append((os.path.relpath(path, root).replace(os.sep, "/"), n))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    big = oversized(root)
    failed = [(p, n) for p, n in big if p not in PENDING]
    for p, n in big:
        if p in PENDING:
            print("check_sizes: %s has %d lines (over %d), allowed while %s"
                  % (p, n, LIMIT, PENDING[p]))
    for p in sorted(set(PENDING) - {p for p, _ in big}):
        print("check_sizes: %s is no longer over %d lines; remove it from PENDING in %s"
              % (p, LIMIT, os.path.relpath(__file__, root)))
    for p, n in failed:
        print("check_sizes: %s has %d lines, over the limit of %d: split it along its seams "
              "(one module per op family / class group), keeping its import paths"
              % (p, n, LIMIT), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
