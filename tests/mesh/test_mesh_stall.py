"""The stall check's rule, on observations with a clock of the test's own (no process, no
wall-clock): a participant that stops advancing while another waits for it is named, a run
that advances or one long op computed by all is never stopped, a tie blames no one rank."""

from tfexec.mesh._progress import Beat, Phase, Position
from tfexec.mesh._stall import Stall, StallWatch


def _at(dispatches: int, phase: Phase = Phase.RUNNING) -> Position:
    return Position(phase, 0, dispatches, dispatches)


def _run(watch: StallWatch, steps: list[tuple[float, list[Position], list[Beat]]]) -> Stall | None:
    found = None
    for now, positions, beats in steps:
        found = watch.observe(now, positions, beats)
        if found is not None:
            return found
    return found


def test_a_participant_that_stops_advancing_while_the_other_waits_is_named() -> None:
    watch = StallWatch(2, 10.0)
    steps = [(float(t), [_at(5), _at(3)], [Beat(t, True), Beat(t, False)]) for t in range(0, 12)]
    assert _run(watch, steps) == Stall((1,), (), (0,), 10.0)


def test_the_rank_stalled_is_named_whichever_it_is_even_at_the_same_op() -> None:
    """A tie of positions (both in op 4) is decided by who waits, never by rank order."""
    for stalled, waiting in ((0, 1), (1, 0)):
        watch = StallWatch(2, 10.0)
        steps = []
        for t in range(12):
            beats = [Beat(t, False), Beat(t, False)]
            beats[waiting] = Beat(t, True)
            steps.append((float(t), [_at(4), _at(4)], beats))
        assert _run(watch, steps) == Stall((stalled,), (), (waiting,), 10.0)


def test_a_silent_participant_is_named_as_silent_even_if_it_was_waiting_when_it_stopped() -> None:
    watch = StallWatch(2, 10.0)
    steps = [(float(t), [_at(4), _at(4)], [Beat(t, True), Beat(3, True)]) for t in range(14)]
    stall = _run(watch, steps)
    assert stall is not None and stall.stalled == (1,) and stall.silent == (1,) and stall.waiting == (0,)


def test_a_slow_run_that_advances_is_never_stopped() -> None:
    """Each op takes 9 s of a 10 s timeout, for 100 ops (900 s, 90 times the timeout)."""
    watch = StallWatch(2, 10.0)
    steps = [(float(t), [_at(t // 9), _at(t // 9)], [Beat(t, t % 9 == 8), Beat(t, False)]) for t in range(900)]
    assert _run(watch, steps) is None


def test_one_long_op_computed_by_every_participant_is_not_a_stall() -> None:
    watch = StallWatch(2, 10.0)
    steps = [(float(t), [_at(7), _at(7)], [Beat(t, False), Beat(t, False)]) for t in range(100)]
    assert _run(watch, steps) is None


def test_every_participant_waiting_for_the_others_is_a_deadlock_that_names_no_one() -> None:
    watch = StallWatch(3, 10.0)
    steps = [(float(t), [_at(2), _at(2), _at(2)], [Beat(t, True)] * 3) for t in range(12)]
    assert _run(watch, steps) == Stall((), (), (0, 1, 2), 10.0)


def test_a_finished_participant_waits_and_every_stopped_one_is_named() -> None:
    watch = StallWatch(3, 10.0)
    done = Position(Phase.DONE, 0, -1, 9)
    steps = [(float(t), [done, _at(4), _at(4)], [Beat(-1, False), Beat(2, False), Beat(t, False)]) for t in range(12)]
    assert _run(watch, steps) == Stall((1, 2), (1,), (0,), 10.0)  # both named: rank 1 silent, rank 2 not advancing
