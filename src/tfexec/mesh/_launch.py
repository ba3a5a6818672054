"""tfexec's own launcher of a mesh run: write, launch, supervise, collect.

``evaluate_mesh_batch`` prepares every job here (``_prepare``: inputs bound and checked as
``evaluate`` does, weights planned, none read from files), writes the programs and tensors
to a private temporary directory, starts one ``tfexec.mesh._participant`` process per mesh
participant against a TCP store it hosts on 127.0.0.1 (an OS-chosen free port), and
watches them: their exit codes, their error reports and their progress slots (positions
and heartbeats, for the stall check of ``_stall``). The first failure stops every
participant; no process outlives the call. The run directory is locked while the caller
lives and swept by a later run when the caller was killed (``_rundir``).
"""

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import IO

import torch
import torch.distributed as dist
from safetensors import safe_open

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.types import Mesh
from tfexec.loading import write_tensors
from tfexec.mesh import _progress
from tfexec.mesh._failures import FailureWords, Report, exit_how
from tfexec.mesh._prepare import Prepared, choose_mesh, prepare
from tfexec.mesh._progress import Beat, Phase, Position
from tfexec.mesh._rundir import make_run_dir
from tfexec.mesh._session import build_value
from tfexec.mesh._stall import Stall, StallWatch
from tfexec.mesh._results import DEFAULT_TIMEOUT, STARTUP_TIMEOUT, MeshJob, MeshOutcome, MeshResult, check_timeout

_GRACE = 2.0  # after a failure, how long the others get to report before they are stopped
_POLL = 0.01
_NUMPY_WARNING = "ignore:Failed to initialize NumPy:UserWarning"  # torch's import-time warning without numpy


def _store(seconds: float) -> "tuple[object, int]":
    """The run's TCP store, listening on 127.0.0.1 only, on a port the OS chose; and that port.

    TCPStore would listen on every interface; given a socket bound to loopback, it listens
    there (and owns the descriptor: it closes it when it is destroyed)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        store = dist.TCPStore(  # type: ignore[attr-defined]
            "127.0.0.1", port, None, True, timedelta(seconds=seconds), wait_for_workers=False,
            master_listen_fd=listener.fileno(),
        )
    except BaseException:
        listener.close()
        raise
    listener.detach()
    return store, port


def loopback_interface() -> str | None:
    """The name of this machine's loopback network interface (``lo``, ``lo0``), if any."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    for name in ("lo", "lo0"):
        if name in names:
            return name
    return None


@dataclass(slots=True)
class _Run:
    run_dir: Path
    mesh: Mesh
    world: int
    prepared: Sequence[Prepared]
    timeout: float
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[IO[bytes]] = field(default_factory=list)
    stopped: set[int] = field(default_factory=set)

    def positions(self) -> tuple[list[Position], list[Beat]]:
        return _progress.read_all(self.run_dir / "progress.bin", self.world)

    def start(self, port: int) -> None:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([package_root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        loopback = loopback_interface()
        if loopback is not None:
            env["GLOO_SOCKET_IFNAME"] = loopback
        modules = sorted({m for p in self.prepared for m in p.encoded.modules})
        spec = {
            "parent": os.getpid(), "world": self.world, "mesh": [list(self.mesh.shape), list(self.mesh.axis_names)],
            "port": port, "threads": max(1, (os.cpu_count() or 1) // self.world),
            "timeout": self.timeout + STARTUP_TIMEOUT, "sys_path": [p for p in sys.path if p], "imports": modules,
            "jobs": [
                {"records": p.encoded.records, "return_locals": p.job.return_locals, "rounds": p.job.rounds,
                 "weights": p.weights.to_json() if p.weights is not None else None}
                for p in self.prepared
            ],
        }
        for j, p in enumerate(self.prepared):
            write_tensors(p.tensors, self.run_dir / f"job{j}.safetensors")
        (self.run_dir / "run.json").write_text(json.dumps(spec))
        _progress.create(self.run_dir / "progress.bin", self.world)
        for rank in range(self.world):
            log = open(self.run_dir / f"rank{rank}.log", "wb")
            self.logs.append(log)
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-W", _NUMPY_WARNING, "-m", "tfexec.mesh._participant", str(self.run_dir), str(rank)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                )
            )

    def supervise(self) -> "tuple[list[Position], Stall | None] | None":
        """Wait for the participants; when they did not all start, or the run stalled, the
        positions and the stall (None: they did not start); None when neither happened."""
        began = time.monotonic()
        joined: float | None = None
        failed_at: float | None = None
        watch = StallWatch(self.world, self.timeout)
        while True:
            codes = [p.poll() for p in self.procs]
            if all(c == 0 for c in codes):
                return None
            now = time.monotonic()
            positions, beats = self.positions()
            if joined is None and all(pos.phase >= Phase.JOINED or c is not None for pos, c in zip(positions, codes)):
                joined = now
            failed = any(c not in (None, 0) for c in codes) or any(pos.phase == Phase.FAILED for pos in positions)
            if failed and failed_at is None:
                failed_at = now
            if failed_at is not None and (all(c is not None for c in codes) or now - failed_at > _GRACE):
                return None
            if failed_at is None:
                if joined is None and now - began > STARTUP_TIMEOUT:
                    return positions, None
                stall = watch.observe(now, positions, beats, [c == 0 for c in codes]) if joined is not None else None
                if stall is not None:
                    return positions, stall
            time.sleep(_POLL)

    def stop(self) -> None:
        """Kill every participant still running (only those this run started) and reap all."""
        for rank, p in enumerate(self.procs):
            if p.poll() is None:
                self.stopped.add(rank)
                p.kill()
        for p in self.procs:
            p.wait()
        for log in self.logs:
            log.close()

    # -- reading back ---------------------------------------------------------------------

    def completed(self, j: int) -> bool:
        return (self.run_dir / f"out{j}.json").exists() and all(
            (self.run_dir / f"out{j}.{r}.safetensors").exists() for r in range(self.world)
        )

    def result(self, j: int) -> MeshResult:
        meta = json.loads((self.run_dir / f"out{j}.json").read_text())
        files = [_read_all(self.run_dir / f"out{j}.{r}.safetensors") for r in range(self.world)]
        kinds: dict[str, str] = meta["kinds"]
        logical = None if "participant" in kinds.values() else build_value(meta["tree"], "G", files[0])
        locals_ = tuple(build_value(meta["tree"], "L", f) for f in files) if self.prepared[j].job.return_locals else None
        growth = [int(f["M"].item()) for f in files]
        return MeshResult(
            self.mesh, logical, locals_, tuple(float(s) for s in meta["seconds"]),
            tuple(growth) if all(g >= 0 for g in growth) else None,
        )

    def log_tail(self, rank: int) -> str:
        try:
            text = (self.run_dir / f"rank{rank}.log").read_text(errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-6:]
        tail = " | ".join(lines)
        return tail if len(tail) <= 600 else "..." + tail[-597:]

    def failure(self, stopped: "tuple[list[Position], Stall | None] | None") -> tuple[int, EvalError]:
        """The job that failed and the one error to raise for it."""
        words = FailureWords(self.mesh, [(p.fn, p.encoded.nodes) for p in self.prepared], self.timeout)
        if stopped is not None:
            positions, stall = stopped
            return words.not_started(positions) if stall is None else words.stalled(stall, positions)
        final, _ = self.positions()
        codes = [p.returncode for p in self.procs]
        reports: list[Report] = []
        for r in range(self.world):
            path = self.run_dir / f"error.{r}.json"
            if path.exists():
                raw = json.loads(path.read_text())
                reports.append(Report(r, int(raw["job"]), raw["node"], str(raw["message"]), float(raw["time"])))
        reporting = {report.rank for report in reports}
        crashed = [r for r in range(self.world) if r not in reporting and r not in self.stopped and codes[r] not in (0, None)]
        if crashed:
            code = codes[crashed[0]]
            assert code is not None
            return words.died(crashed[0], final[crashed[0]], exit_how(code), self.log_tail(crashed[0]))
        if not reports:
            return 0, EvalError(f"{words.target()}: the mesh run failed without a report (exit codes {codes})")
        return words.reported(reports)


def _read_all(path: Path) -> dict[str, torch.Tensor]:
    with safe_open(path, "pt") as f:
        return {k: f.get_tensor(k).clone() for k in f.keys()}


def evaluate_mesh_batch(
    jobs: Sequence[MeshJob], *, mesh: Mesh | None = None, timeout: float = DEFAULT_TIMEOUT
) -> list[MeshOutcome]:
    """Run several programs on one mesh with one launch of its participants, in order.

    Inputs are bound and checked in the caller first (the errors ``evaluate`` raises, raised
    here). A failing job stops the run: the jobs before it keep their results, it gets the
    error, and the jobs after it an error saying they did not run.
    """
    check_timeout(timeout)
    if not jobs:
        return []
    prepared = [prepare(job) for job in jobs]
    chosen = choose_mesh(prepared, mesh)
    run_dir, lock = make_run_dir()
    run = _Run(run_dir, chosen, math.prod(chosen.shape), prepared, float(timeout))
    try:
        store, port = _store(STARTUP_TIMEOUT + float(timeout))
        try:
            run.start(port)
            stopped = run.supervise()
        finally:
            run.stop()
            del store
        outcomes: list[MeshOutcome] = []
        for j in range(len(prepared)):
            if not run.completed(j):
                break
            outcomes.append(MeshOutcome(run.result(j), None))
        if len(outcomes) < len(prepared):
            failed_job, error = run.failure(stopped)
            outcomes.append(MeshOutcome(None, error))
            for j in range(len(outcomes), len(prepared)):
                outcomes.append(
                    MeshOutcome(None, EvalError(f"{describe_expr(prepared[j].fn)}: not run: job {failed_job} of this mesh batch failed"))
                )
        return outcomes
    finally:
        run.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
        os.close(lock)
