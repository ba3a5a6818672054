"""The dump format (docs/dump-format.md): written by tfexec, readable from any runtime's files."""

import json
import re
from pathlib import Path

import pytest
import torch

from tfexec.compare import FORMAT, VERSION, DumpError, entry_for, index_path, read_dump, write_dump
from tfexec.loading import write_tensors


def _write(tmp_path: Path) -> Path:
    tensors = {"f/h": torch.ones(2, 3), "f/acc.0": torch.zeros(4, dtype=torch.int64), "f/acc.1": torch.ones(1)}
    entries = [
        entry_for("f/h", "f/h", tensors["f/h"], "matmul", "f.tf.py:2:9"),
        entry_for("f/acc.0", "f/acc", tensors["f/acc.0"], "grid", "f.tf.py:3:5"),
        entry_for("f/acc.1", "f/acc", tensors["f/acc.1"], "grid", "f.tf.py:3:5"),
    ]
    path = tmp_path / "run.safetensors"
    write_dump(path, tensors, entries, program="f")
    return path


def test_the_index_sits_next_to_the_tensors_and_keeps_topological_order(tmp_path: Path) -> None:
    path = _write(tmp_path)
    assert index_path(path) == tmp_path / "run.index.json"
    document = json.loads(index_path(path).read_text())
    assert document["format"] == FORMAT and document["version"] == VERSION == 1
    assert document["tensors"] == "run.safetensors" and document["program"] == "f"
    assert [e["key"] for e in document["entries"]] == ["f/h", "f/acc.0", "f/acc.1"]
    assert document["entries"][1] == {
        "key": "f/acc.0", "node": "f/acc", "op": "grid", "location": "f.tf.py:3:5", "shape": [4], "dtype": "i64",
    }


def test_a_dump_reads_back_in_index_order_from_either_file(tmp_path: Path) -> None:
    path = _write(tmp_path)
    for given in (path, index_path(path), str(path)):
        dump = read_dump(given)
        assert list(dump.tensors) == ["f/h", "f/acc.0", "f/acc.1"]
        assert dump.entries["f/h"].op == "matmul" and dump.program == "f"
        assert torch.equal(dump.tensors["f/acc.0"], torch.zeros(4, dtype=torch.int64))


def test_another_runtime_may_write_tensors_alone(tmp_path: Path) -> None:
    path = tmp_path / "theirs.safetensors"
    write_tensors({"f/b": torch.ones(1), "f/a": torch.zeros(1)}, path)
    dump = read_dump(path)
    assert dump.entries == {} and set(dump.tensors) == {"f/a", "f/b"}


def _index(tmp_path: Path, **changes: object) -> Path:
    path = _write(tmp_path)
    document = json.loads(index_path(path).read_text())
    document.update(changes)
    index_path(path).write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": "other"}, "not a tfexec dump index"),
        ({"version": 2}, "dump format version 2 is newer than this tfexec reads (1)"),
        ({"version": "1"}, "\"version\" must be a positive integer"),
        ({"entries": {}}, "\"entries\" must be a list"),
        ({"entries": [{"key": "f/h", "shape": [2, 3], "dtype": "f64"}]}, "entry 'f/h' says f64[2, 3] but the tensor is f32[2, 3]"),
        ({"entries": [{"key": "f/h", "shape": [3], "dtype": "f32"}]}, "says f32[3] but the tensor is f32[2, 3]"),
        ({"entries": [{"key": "f/nope", "shape": [1], "dtype": "f32"}]}, "entry 'f/nope' has no tensor"),
        ({"entries": [{"key": "f/h", "shape": [2, 3], "dtype": "float"}]}, "\"dtype\" must be one of"),
        ({"entries": [{"key": "f/h", "shape": [-1], "dtype": "f32"}]}, "\"shape\" must be a list of non-negative"),
        ({"entries": [7]}, "entry 0 must be an object"),
    ],
)
def test_a_bad_index_is_a_dump_error_naming_the_problem(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    path = _index(tmp_path, **changes)
    with pytest.raises(DumpError, match=re.escape(message)):
        read_dump(path)


def test_unreadable_files_are_dump_errors(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="cannot read dump: no such file"):
        read_dump(tmp_path / "missing.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a safetensors file")
    with pytest.raises(DumpError, match="cannot read dump"):
        read_dump(junk)
    path = _write(tmp_path)
    index_path(path).write_text("{oops")
    with pytest.raises(DumpError, match="cannot read the dump index"):
        read_dump(path)


def test_the_index_must_list_exactly_the_tensors_written(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="unlisted"):
        write_dump(tmp_path / "x.safetensors", {"a": torch.ones(1)}, [])
