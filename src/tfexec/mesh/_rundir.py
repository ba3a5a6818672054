"""The run directory of tfexec's own launcher (``<tmp>/tfexec-mesh-*``): private (mode 0700,
``mkdtemp``), locked by its caller for as long as that process lives, and removed by the
next run when its caller was killed before it could remove it itself.

The lock is an ``flock`` on ``caller.lock`` inside the directory. The kernel releases it
when the caller's process ends, however it ends, so a directory whose lock can be taken
has no caller: its participants died with it (they are killed when their caller dies).
A run sweeps only directories its own user owns, and only those with a lock file (one
without is being created, or was made by an older tfexec: not this run's to judge).
"""

import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "tfexec-mesh-"
LOCK = "caller.lock"


def make_run_dir() -> tuple[Path, int]:
    """Sweep stale run directories, then make a fresh one; it and the descriptor of its lock,
    held until this process closes it or ends."""
    root = Path(tempfile.gettempdir())
    sweep_stale(root)
    run_dir = Path(tempfile.mkdtemp(prefix=PREFIX))
    fd = os.open(run_dir / ".lock.new", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(run_dir / ".lock.new", run_dir / LOCK)  # visible to a sweeper only once it is held
    return run_dir, fd


def sweep_stale(root: Path) -> list[Path]:
    """Remove the run directories in ``root`` that this user owns and whose caller is gone
    (their lock is free); the directories removed."""
    removed = []
    for run_dir in sorted(root.glob(PREFIX + "*")):
        try:
            info = run_dir.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        try:
            fd = os.open(run_dir / LOCK, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its caller lives
            shutil.rmtree(run_dir, ignore_errors=True)
            removed.append(run_dir)
        finally:
            os.close(fd)
    return removed
