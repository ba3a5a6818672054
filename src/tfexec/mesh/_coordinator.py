"""How the participants of an external launcher (torchrun, or any that sets ``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) stay in step, through the rendezvous store.

No process supervises them, so each runs a monitor thread. The evaluation publishes its
position at every op; the monitor publishes a heartbeat saying whether the evaluation waits
in a collective (``_progress``). A participant that fails writes its error report. Every
record tfexec writes is signed with the run's secret and every record it reads is checked
(``_secret``): one it did not sign stops the run, named.

Deciding. Rank 0's monitor decides on a report, a stall (``_stall``: a participant that
stops advancing while others wait for it), a communication error its evaluation met, or
SIGTERM from the launcher. When rank 0 itself stops answering — its heartbeat stops for
``timeout`` seconds (stopped by a signal, frozen), or it is gone when the launcher stops the
run — the other monitors decide in its place; the first to claim ``decider`` does. The
decider sets ``stop``, gives the others ``GRACE`` seconds to say how they ended, words the
one ``EvalError`` (the same words as tfexec's own launcher, ``_failures``) and stores it as
``verdict``; a participant that stopped answering on the decider's host is killed (it
cannot end by itself, and the launcher would wait for it). Rank 0 delivers the verdict
(raises it, or its monitor prints it when its evaluation cannot return), unless rank 0 is
the participant that stopped answering: then the decider prints it. Every other participant ends its process once it sees ``stop``, with the
verdict's exit status (1; 2 for a mistake in the command line) — as tfexec's own launcher
stops its participants, and as torchrun would.

Store keys (under a prefix per call): ``pos/<r>``, ``beat/<r>`` (count, waiting),
``host/<r>`` (host name, pid, start time), ``ready/<r>``, ``fail/<r>`` (a JSON report), ``end/<r>`` (``failed`` or
``stopped``), ``failed`` (an unsigned count: only a hint to read the reports), ``decider``,
``stop`` (trigger, exit status) and ``verdict`` (JSON).
"""

import json
import os
import signal
import socket
import sys
import threading
import time
from typing import NoReturn

from torch._C._distributed_c10d import PrefixStore, Store

from tfexec.errors import EvalError
from tfexec.mesh._failures import FailureWords, Report, Stopped
from tfexec.mesh._progress import Beat, Phase, Position, Progress, waiting_in_collective
from tfexec.mesh._results import STARTUP_TIMEOUT, RunUsageError
from tfexec.mesh._secret import Signer, UnsignedRecord
from tfexec.mesh._stall import Stall, StallWatch

POLL = 0.05
"""Seconds between two looks of a monitor at the store (and between two heartbeats)."""
GRACE = 2.0
"""Seconds the participants get, after ``stop``, to say how they ended."""
STALE = 1.0
"""Seconds without a heartbeat, after ``stop`` (or SIGTERM), for a silent participant to count as gone."""
DELIVER = 3.0
"""Seconds rank 0's evaluation gets to raise a decided failure before its monitor prints it and exits."""
LOST = 10.0
"""Seconds a participant whose own evaluation failed waits for rank 0's heartbeat before deciding in its place."""


class StoreProgress(Progress):
    """A participant's position, written (signed) to the store at every change (a store write
    is a few microseconds: the position a participant dies at is the one its op reached)."""

    def __init__(self, store: PrefixStore, signer: Signer, rank: int) -> None:
        super().__init__()
        self.store, self.signer, self.key = store, signer, f"pos/{rank}"
        self._write()

    def _write(self) -> None:
        self.store.set(self.key, self.signer.sign(self.key, f"{int(self.phase)} {self.job} {self.node} {self.dispatches}"))


def _position(text: str) -> Position:
    phase, job, node, dispatches = (int(x) for x in text.split())
    return Position(Phase(phase), job, node, dispatches)


class Coordinator:
    """One participant's side of the store protocol, and its monitor thread."""

    def __init__(self, store: Store, prefix: str, rank: int, world: int, timeout: float, secret: bytes) -> None:
        self.rank, self.world, self.timeout = rank, world, timeout
        self.signer = Signer(secret, prefix)
        self.store = PrefixStore(prefix, store)
        self.watch = PrefixStore(prefix, store.clone())  # type: ignore[attr-defined]  # the monitor's own connection
        self.progress = StoreProgress(self.store, self.signer, rank)
        self.words: FailureWords | None = None
        self.terminated = False  # set by the SIGTERM handler
        self.suspect: Report | None = None  # rank 0: a communication error its evaluation met
        self.waiting_since: float | None = None  # when this participant began waiting to be stopped
        self.verdict: BaseException | None = None
        self.decided = threading.Event()
        self.delivered = False
        self._evaluating = threading.get_ident()
        self._stalls = StallWatch(world, timeout)
        self._stall: Stall | None = None
        self._status = 1
        self._kind = "EvalError"
        self._beat = 0
        self._began = time.monotonic()
        self._joined_at: float | None = None
        self._decided_at = 0.0
        self._rank0 = (-2, time.monotonic())
        self._terminated_at: float | None = None  # rank 0's last heartbeat count, and when it changed
        self._closing = threading.Event()
        self._set(self.store, f"host/{rank}", f"{socket.gethostname()} {os.getpid()} {_started(os.getpid())}")
        self._beat_once(self.store)
        self._thread = threading.Thread(target=self._loop, name="tfexec-mesh-monitor", daemon=True)
        self._thread.start()

    # -- signed records -----------------------------------------------------------------------

    def _set(self, store: PrefixStore, key: str, payload: str) -> None:
        store.set(key, self.signer.sign(key, payload))

    def _get(self, key: str, claimed: int | None, store: PrefixStore | None = None) -> str | None:
        """The payload under ``key`` (None when there is none); ``UnsignedRecord`` when it is forged."""
        store = store or self.watch
        if not store.check([key]):
            return None
        return self.signer.open(key, store.get(key), claimed)

    # -- the evaluation's side -------------------------------------------------------------

    def report(self, job: int, node: int | None, message: str, kind: str = "EvalError", status: int = 1) -> None:
        """Record this participant's own error (the decider words the run's failure from it)."""
        record = {"job": job, "node": node, "message": message, "time": time.time(), "kind": kind, "status": status}
        self._set(self.store, f"fail/{self.rank}", json.dumps(record))
        self._set(self.store, f"end/{self.rank}", "failed")
        self.store.add("failed", 1)

    def met_comm_error(self, job: int, node: int | None, message: str) -> None:
        """The evaluation met a communication error: a peer is gone, or was stopped."""
        if self.rank == 0:
            self.suspect = Report(0, job, node, message, time.time())

    def outcome(self) -> BaseException:
        """After a failure: on rank 0, the run's one error (the decision); on any other rank
        this never returns — its monitor ends the process once the run is stopped."""
        self.waiting_since = time.monotonic()
        if self.rank != 0:
            while self._thread.is_alive():  # the monitor ends this process once the run is stopped
                time.sleep(POLL)
            self._give_up("the run failed, and its store can no longer be reached")
        self.decided.wait(GRACE + STALE + LOST)
        self.delivered = True
        return self.verdict or EvalError("the mesh run failed, and no participant said why in time")

    def wait_ready(self) -> None:
        """Wait until every participant is ready to join the process group, or the run failed."""
        self._set(self.store, f"ready/{self.rank}", "1")
        keys = [f"ready/{r}" for r in range(self.world)]
        while not self.store.check(keys):
            if self.decided.is_set() or self.store.check(["stop"]):
                raise Stopped()
            time.sleep(POLL)
        for r, key in enumerate(keys):
            self._get(key, r, self.store)  # each signed by its participant

    def close(self) -> None:
        self._closing.set()
        self._thread.join()

    # -- the monitor --------------------------------------------------------------------------

    def _beat_once(self, store: PrefixStore) -> None:
        """Say this participant is alive (its heartbeat count, one more) and whether it waits in a collective."""
        self._beat += 1
        self._set(store, f"beat/{self.rank}", f"{self._beat} {int(waiting_in_collective(self._evaluating))}")

    def _beat_of(self, rank: int) -> Beat:
        text = self._get(f"beat/{rank}", rank)
        if text is None:
            return Beat(-1, False)
        count, waiting = text.split()
        return Beat(int(count), waiting == "1")

    def _loop(self) -> None:
        while not self._closing.wait(POLL):
            try:
                self._beat_once(self.watch)
                now = time.monotonic()
                if self.rank != 0:
                    beat = self._beat_of(0).count
                    if beat != self._rank0[0]:
                        self._rank0 = (beat, now)
                if self.verdict is not None:  # rank 0, decided: deliver if its evaluation cannot
                    if not self.delivered and now - self._decided_at > DELIVER:
                        self._give_up(str(self.verdict), self._kind, self._status)
                    continue
                stop = self._get("stop", None)
                if stop is not None:
                    self._stopped(int(stop.split()[1]))
                elif self.rank == 0:
                    trigger = self._trigger()
                    if trigger is not None:
                        self._decide(trigger)
                else:
                    self._watch_rank0(now)
            except UnsignedRecord as exc:
                self._refuse(exc)
            except Exception as exc:  # the store is gone
                if self.progress.phase == Phase.DONE or self._closing.is_set():
                    return  # the run is over here; the store went with its host
                self._give_up(f"lost contact with the rendezvous store ({type(exc).__name__}: {exc})")

    def _watch_rank0(self, now: float) -> None:
        """A participant other than rank 0: decide in rank 0's place when it stopped answering."""
        silent_for = now - self._rank0[1]
        if self.terminated:  # the launcher stops the run: one participant ended; if rank 0 is gone, say so
            if self._terminated_at is None:
                self._terminated_at = now
            if silent_for > STALE:
                self._decide("rank0-gone")
            elif now - self._terminated_at > 2 * STALE:
                self._end_here("stopped", 1)
            return
        limit = min(self.timeout, LOST) if self.waiting_since is not None else self.timeout
        if silent_for >= limit:
            positions, beats = self._positions()
            waiting = tuple(r for r in range(1, self.world) if beats[r].waiting or positions[r].phase == Phase.DONE)
            self._stall = Stall((0,), (0,), waiting, silent_for)
            self._decide("rank0-silent")

    def _stopped(self, status: int) -> None:
        """Another participant decided: rank 0 takes up the verdict (to deliver it, unless the
        decider does), every other participant ends here."""
        if self.rank != 0:
            self._end_here("stopped", status)
        deadline = time.monotonic() + GRACE + 2 * STALE + 2.0
        while time.monotonic() < deadline:
            text = self._get("verdict", None)
            if text is not None:
                verdict = json.loads(text)
                if int(verdict["by"]) != 0:
                    self._end_here("stopped", int(verdict["status"]))
                self._take_verdict(str(verdict["message"]), str(verdict["kind"]), int(verdict["status"]))
                return
            time.sleep(POLL)
        self._give_up("the run was stopped, and the participant that stopped it did not say why in time")

    def _take_verdict(self, message: str, kind: str, status: int) -> None:
        self._status, self._kind = status, kind
        self.verdict = RunUsageError(message, kind) if status == 2 else EvalError(message)
        self._decided_at = time.monotonic()
        self.progress.stop(Stopped())
        self.decided.set()

    def _claim(self) -> bool:
        """Whether this participant is the one to decide (the first to claim it)."""
        mine = self.signer.sign("decider", str(self.rank))
        held = self.watch.compare_set("decider", "", mine)
        return int(self.signer.open("decider", held, None)) == self.rank

    def _refuse(self, exc: UnsignedRecord) -> None:
        """A forged record: stop the run with the refusal as its error."""
        try:
            claimed = self._claim()
        except UnsignedRecord:
            claimed = False  # even the decision is forged: say it here, and end
        if not claimed and self.rank == 0:
            self._give_up(str(exc), "EvalError", 1)
        if not claimed:
            self._end_here("stopped", 1)
        self._set(self.watch, "stop", "forged 1")
        self._publish(str(exc), "EvalError", 1)

    def _publish(self, message: str, kind: str, status: int) -> None:
        """Store the verdict and deliver it: rank 0 does, unless it stopped answering (then this decider does)."""
        rank0_alive = self.rank == 0 or time.monotonic() - self._rank0[1] < 2 * STALE
        by = 0 if rank0_alive else self.rank
        self._set(self.watch, "verdict", json.dumps({"message": message, "kind": kind, "status": status, "by": by}))
        if self.rank == 0:
            self._take_verdict(message, kind, status)
        elif by == self.rank:
            self._give_up(message, kind, status)
        else:
            self._end_here("stopped", status)

    def _end_here(self, how: str, status: int) -> NoReturn:
        try:
            if not self.watch.check([f"end/{self.rank}"]):
                self._set(self.watch, f"end/{self.rank}", how)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)

    def _give_up(self, why: str, kind: str | None = None, status: int = 1) -> NoReturn:
        """End this process with one line on stderr: the run's error (``kind`` given), or why this participant stops."""
        head = f"tfexec mesh: {kind}: " if kind else f"tfexec mesh: participant rank {self.rank}: "
        line = head + why + ("" if kind else "; stopping") + "\n"
        sys.stdout.flush()
        os.write(2, line.encode())  # one write: the lines of processes sharing a pipe stay whole
        os._exit(status)

    def _end_frozen(self, rank: int) -> None:
        """Kill a participant that stopped answering (stopped by a signal, frozen) when it runs
        on this host: it cannot end by itself, and the launcher would wait for it. Only the
        process its signed host record names, and only while the same process holds that pid."""
        text = self._get(f"host/{rank}", rank)
        if text is None:
            return
        host, pid, started = (text.split(" ") + ["", "", ""])[:3]
        if host != socket.gethostname() or not pid.isdigit() or not started or _started(int(pid)) != started:
            return
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass

    def _positions(self) -> tuple[list[Position], list[Beat]]:
        """Every participant's position and heartbeat."""
        positions, beats = [], []
        for r in range(self.world):
            text = self._get(f"pos/{r}", r)
            positions.append(_position(text) if text is not None else Position(Phase.LAUNCHED, -1, -1, 0))
            beats.append(self._beat_of(r))
        return positions, beats

    def _reports(self) -> list[Report]:
        reports = []
        for r in range(self.world):
            text = self._get(f"fail/{r}", r)
            if text is not None:
                raw = json.loads(text)
                reports.append(Report(r, int(raw["job"]), raw["node"], str(raw["message"]), float(raw["time"]),
                                      str(raw.get("kind", "EvalError")), int(raw.get("status", 1))))
        return reports

    def _trigger(self) -> str | None:
        now = time.monotonic()
        positions, beats = self._positions()
        if self._joined_at is None and all(p.phase >= Phase.JOINED for p in positions):
            self._joined_at = now
        if self.terminated:
            return "terminated"
        if int(self.watch.add("failed", 0)) > 0 and self._reports():
            return "reported"
        if self.suspect is not None:
            return "suspect"
        if self._joined_at is None and now - self._began > STARTUP_TIMEOUT:
            return "startup"
        if self._joined_at is not None:
            self._stall = self._stalls.observe(now, positions, beats)
            if self._stall is not None:
                return "stall"
        return None

    def _decide(self, trigger: str) -> None:
        """Stop everyone, hear how each ended, word the run's failure and publish it."""
        if not self._claim():
            return  # another participant decides; its stop ends this one
        positions, beats = self._positions()
        reports = self._reports()
        status = 2 if reports and all(r.status == 2 for r in reports) else 1
        self._set(self.watch, "stop", f"{trigger} {status}")
        others = [r for r in range(self.world) if r != self.rank]
        heard_at = {r: time.monotonic() for r in others}
        deadline = time.monotonic() + GRACE
        while True:
            pending = [r for r in others if not self.watch.check([f"end/{r}"])]
            latest, new_beats = self._positions()
            now = time.monotonic()
            for r in pending:
                if new_beats[r].count != beats[r].count:
                    heard_at[r], beats[r] = now, new_beats[r]
                    positions[r] = latest[r]
            if all(now - heard_at[r] > STALE for r in pending) or now > deadline:
                break
            time.sleep(POLL)
        reports = self._reports()
        error = self._word(trigger, positions, pending, reports)
        if self._stall is not None and trigger in ("stall", "rank0-silent"):
            for r in self._stall.silent:
                self._end_frozen(r)
        if isinstance(error, RunUsageError):
            self._publish(str(error), error.kind or "EvalError", 2)
        else:
            self._publish(str(error), "EvalError", 1)

    def _word(self, trigger: str, positions: list[Position], silent: list[int], reports: list[Report]) -> EvalError:
        words = self.words
        if words is None or any(r.job == -2 for r in reports):
            return _before_the_run(reports, self.world)
        hosts = [(self._get(f"host/{r}", r) or "").split(" ")[0] or None for r in range(self.world)]
        if len(set(hosts)) > 1:
            words.hosts = hosts
        if trigger == "startup":
            return words.not_started(positions)[1]
        if trigger in ("stall", "rank0-silent") and self._stall is not None:
            return words.stalled(self._stall, positions)[1]
        if trigger == "rank0-gone":
            return words.died(0, positions[0], "no error report; the launcher stopped the run, and its log gives the exit status")[1]
        if silent and trigger != "rank0-silent":
            how = "no error report; the launcher's log gives its exit status"
            return words.died(silent[0], positions[silent[0]], how)[1]
        if reports:
            return words.reported(reports)[1]
        if trigger == "terminated" or self.suspect is None:
            return EvalError(f"{words.target()}: the launcher stopped the mesh run (SIGTERM) while rank 0 was "
                             f"{words.where(self.progress.position())}")
        return words.reported([self.suspect])[1]


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, Linux ``/proc``), to tell it from a
    later process given the same pid; empty where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _before_the_run(reports: list[Report], world: int) -> EvalError:
    """A failure before the participants joined (the job could not be prepared): its message,
    once when every participant that failed said the same (a usage error keeps its kind)."""
    early = sorted((r for r in reports if r.job == -2), key=lambda r: r.rank) or sorted(reports, key=lambda r: r.rank)
    if not early:
        return EvalError(f"the mesh run of {world} participants failed before it began, and no participant said why")
    first = early[0]
    message = first.message
    if not all(r.message == first.message for r in early):
        message = f"{first.message} (on participant rank {first.rank} of {world}; others failed differently)"
    return RunUsageError(message, first.kind) if first.status == 2 else EvalError(message)
