"""Records in an external launcher's store are signed with the run's secret; a record that
is not is refused, naming its key and the rank it claims to come from. No launch needed:
the coordinator runs against a store of this process."""

import json
import os
import stat
import time
from datetime import timedelta
from pathlib import Path

import pytest
import torch.distributed as dist

from tfexec import EvalError
from tfexec.mesh._coordinator import Coordinator
from tfexec.mesh._secret import SECRET_FILE_VARIABLE, SECRET_VARIABLE, Signer, UnsignedRecord, run_secret

SECRET = b"0123456789abcdef-test"


def test_a_signed_record_opens_and_a_forged_one_is_refused_and_named() -> None:
    signer = Signer(SECRET, "tfexec-mesh/0")
    record = signer.sign("fail/1", '{"message": "boom"}')
    assert signer.open("fail/1", record.encode(), 1) == '{"message": "boom"}'
    with pytest.raises(UnsignedRecord, match=r"key tfexec-mesh/0/fail/1 \(claimed to be written by rank 1\) is not signed"):
        signer.open("fail/1", b'{"message": "INJECTED"}', 1)
    tampered = record.replace("boom", "INJECTED").encode()
    with pytest.raises(UnsignedRecord, match="carries a signature this run's secret did not make"):
        signer.open("fail/1", tampered, 1)
    with pytest.raises(UnsignedRecord):  # a record moved to another key (another rank's) is refused too
        signer.open("fail/0", record.encode(), 0)
    with pytest.raises(UnsignedRecord):  # as is one signed with another secret
        Signer(b"another-secret-0123456", "tfexec-mesh/0").open("fail/1", record.encode(), 1)


def test_the_secret_comes_from_the_environment_or_a_private_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SECRET_VARIABLE, raising=False)
    monkeypatch.delenv(SECRET_FILE_VARIABLE, raising=False)
    with pytest.raises(EvalError, match="no secret is set: give every participant the same secret"):
        run_secret()
    monkeypatch.setenv(SECRET_VARIABLE, "short")
    with pytest.raises(EvalError, match="has 5 characters, fewer than 16"):
        run_secret()
    monkeypatch.setenv(SECRET_VARIABLE, "x" * 20)
    assert run_secret() == b"x" * 20
    monkeypatch.delenv(SECRET_VARIABLE)
    path = tmp_path / "secret"
    path.write_text("y" * 32 + "\n")
    os.chmod(path, 0o644)
    monkeypatch.setenv(SECRET_FILE_VARIABLE, str(path))
    with pytest.raises(EvalError, match=r"other users may read or write it \(mode 0644\): chmod 600"):
        run_secret()
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    assert run_secret() == b"y" * 32
    monkeypatch.setenv(SECRET_FILE_VARIABLE, str(tmp_path / "missing"))
    with pytest.raises(EvalError, match="cannot open it"):
        run_secret()


def test_a_forged_failure_report_in_the_store_stops_the_run_with_the_refusal() -> None:
    """A client without the secret writes rank 0's failure report: rank 0's monitor refuses
    it, and the run's one error is the refusal (never the forged words)."""
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=30), wait_for_workers=False)  # type: ignore[attr-defined]
    coordinator = Coordinator(store, "tfexec-mesh/0", 0, 1, 60.0, SECRET)
    try:
        store.set("tfexec-mesh/0/fail/0", json.dumps({"job": 0, "node": None, "message": "INJECTED", "time": time.time()}))
        store.add("tfexec-mesh/0/failed", 1)
        verdict = coordinator.outcome()
    finally:
        coordinator.close()
    assert isinstance(verdict, EvalError) and "INJECTED" not in str(verdict)
    assert str(verdict).startswith(
        "the launcher's store holds a record tfexec refuses: key tfexec-mesh/0/fail/0 (claimed to be written by rank 0) is not signed"
    )
