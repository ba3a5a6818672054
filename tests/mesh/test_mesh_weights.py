"""Each participant reads its own share of a module's weights, from the module's files: its
block of a weight typed with a ``ShardLayout`` that splits it, the whole of any other; the
caller reads none. All jobs run in one launch; the last ones fail on purpose.
"""

import json
import struct
from pathlib import Path

import pytest
import torch
from mesh_cases import data

import tfexec
from tfexec import (
    ConstTensor,
    EvalError,
    Function,
    IRModule,
    LoadedModule,
    Mesh,
    ShardLayout,
    Split,
    Var,
    describe_expr,
    f32,
    load_module,
    ops,
    save_module,
)
from tfexec.mesh import MeshJob, MeshOutcome, evaluate_mesh_batch

TP = Mesh((2,), ("tp",))
COLUMNS = ShardLayout(TP, (Split(1),))
ROWS = ShardLayout(TP, (Split(0),))
W1 = ConstTensor("w1", f32[8, 16] @ COLUMNS)
W2 = ConstTensor("w2", f32[16, 8] @ ROWS)
B = ConstTensor("b", f32[8])
WEIGHTS = {"w1": data(8, 16), "w2": data(16, 8, seed=1), "b": data(8, seed=2)}
X = data(4, 8, seed=3)


def _mlp_module() -> IRModule:
    """x @ w1 (columns split) -> gelu -> @ w2 (rows split: a partial sum) + b (replicated)."""
    x = Var("x", f32[4, 8])
    body = ops.add(ops.matmul(ops.gelu(ops.matmul(x, W1)), W2), B)
    x2 = Var("x", f32[4, 8])
    shards = Function("shards", (x2,), tfexec.Tuple((ops.local(W1), ops.local(W2), ops.add(B, 4.0))))
    types = {"w1": W1.type, "w2": W2.type, "b": B.type}
    return IRModule({"mlp": Function("mlp", (x,), body), "shards": shards}, types, entry="mlp")


def _flip_a_byte_of(saved: Path, name: str, byte: int) -> None:
    (wfile,) = saved.glob("*.safetensors")
    raw = bytearray(wfile.read_bytes())
    (n,) = struct.unpack("<Q", raw[:8])
    start = json.loads(raw[8 : 8 + n])[name]["data_offsets"][0]
    raw[8 + n + start + byte] ^= 0x40
    wfile.write_bytes(bytes(raw))


def _as_version_1(saved: Path) -> None:
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["version"] = 1
    for record in manifest["tensors"].values():
        record.pop("blocks", None)
    (saved / "manifest.json").write_text(json.dumps(manifest))


def _nodes(expr: object) -> list[object]:
    """Every node under ``expr`` (operands of calls), for finding one by name."""
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(getattr(node, "args", ()))
    return out


class Run:
    """The loaded modules of the batch and its outcomes, by job name."""

    def __init__(self, root: Path) -> None:
        saved = save_module(_mlp_module(), WEIGHTS, root / "mlp")
        v1 = save_module(_mlp_module(), WEIGHTS, root / "v1")
        _as_version_1(v1)
        corrupt = save_module(_mlp_module(), WEIGHTS, root / "corrupt")
        _flip_a_byte_of(corrupt, "w2", 8 * 8 * 4 + 3)  # in rows 8..15 of w2: rank 1's block only
        self.loaded = {
            "saved": load_module(saved), "v1": load_module(v1), "corrupt": load_module(corrupt),
            "mapping": LoadedModule.from_reading(_mlp_module(), WEIGHTS), "shards": load_module(saved).function("shards"),
        }
        jobs = [MeshJob(self.loaded[n], (X,), return_locals=n == "shards") for n in ("saved", "mapping", "shards", "v1", "corrupt")]
        outcomes = evaluate_mesh_batch(jobs, mesh=TP, timeout=120)
        self.outcomes: dict[str, MeshOutcome] = dict(zip(("saved", "mapping", "shards", "v1", "corrupt"), outcomes))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(tmp_path_factory.mktemp("weights"))


@pytest.mark.parametrize("name", ["saved", "mapping", "v1"])
def test_sharded_weights_compute_the_single_participant_value(run: Run, name: str) -> None:
    result = run.outcomes[name].unwrap()
    single = tfexec.evaluate(LoadedModule.from_reading(_mlp_module(), WEIGHTS), X)
    assert isinstance(result.logical, torch.Tensor) and isinstance(single, torch.Tensor)
    torch.testing.assert_close(result.logical, single)  # a split axis is contracted: the sum reassociates


def test_the_caller_reads_no_weight_of_a_module_on_disk(run: Run) -> None:
    assert run.loaded["saved"].reads() == {} and run.loaded["v1"].reads() == {}
    assert run.loaded["mapping"].reads() == {"w1": 1, "w2": 1, "b": 1}  # an in-memory reading is already read


def test_each_participant_holds_its_block_of_a_split_weight(run: Run) -> None:
    result = run.outcomes["shards"].unwrap()
    assert result.locals is not None
    assert result.rss_growth is None or len(result.rss_growth) == 2
    for rank in range(2):
        w1, w2, b = result.locals[rank]
        assert isinstance(w1, torch.Tensor) and isinstance(w2, torch.Tensor) and isinstance(b, torch.Tensor)
        assert torch.equal(w1, WEIGHTS["w1"][:, 8 * rank : 8 * rank + 8])
        assert torch.equal(w2, WEIGHTS["w2"][8 * rank : 8 * rank + 8])
        assert torch.equal(b, WEIGHTS["b"] + 4)  # a replicated weight: the whole value on each


def test_a_corrupt_block_is_caught_by_the_participant_that_reads_it(run: Run) -> None:
    error = run.outcomes["corrupt"].error
    assert isinstance(error, EvalError)
    message = str(error)
    entry = run.loaded["corrupt"].entry
    assert entry is not None
    (w2,) = [n for n in _nodes(entry.body) if isinstance(n, ConstTensor) and n.name == "w2"]
    assert w2.span is not None  # the module's own node, read back from its text
    assert message.startswith(describe_expr(w2) + ": on mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)):")
    assert "tensor w2 is corrupt: the bytes of its block [(8, 16), (0, 8)] hash to SHA-256" in message


@pytest.mark.parametrize("split", [(Split(1),), (Split(0), Split(1))], ids=["columns", "rows-and-columns"])
def test_a_narrow_split_reads_only_its_block_s_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: tuple[Split, ...]) -> None:
    """A column split of f32[512, 256] over 4 participants is 512 runs of 256 bytes: each
    participant reads exactly its block's bytes (no whole rows), counted at the one reader
    every read of tensor data goes through."""
    from tfexec.loading import safetensors_io
    from tfexec.loading.sources import open_weights

    mesh = Mesh((4,), ("tp",)) if len(split) == 1 else Mesh((2, 2), ("dp", "tp"))
    layout = ShardLayout(mesh, split)
    w = ConstTensor("w", f32[512, 256] @ layout)
    module = IRModule({"f": Function("f", (Var("x", f32[4, 512]),), ops.exp(w))}, {"w": w.type}, entry="f")
    full = data(512, 256)
    saved = save_module(module, {"w": full}, tmp_path / "m")
    read: list[int] = []
    real = safetensors_io._pread

    def counted(f: object, into: memoryview, offset: int) -> int:
        n = real(f, into, offset)  # type: ignore[arg-type]
        read.append(n)
        return n

    monkeypatch.setattr(safetensors_io, "_pread", counted)
    source = open_weights(saved)
    coords = [(r,) for r in range(4)] if len(split) == 1 else [(a, b) for a in range(2) for b in range(2)]
    for coord in coords:
        read.clear()
        block = source.fetch_block("w", layout, coord)
        rows = slice(None) if len(split) == 1 else slice(coord[0] * 256, (coord[0] + 1) * 256)
        cols = coord[-1] * (256 // (4 if len(split) == 1 else 2))
        width = 256 // (4 if len(split) == 1 else 2)
        assert torch.equal(block, full[rows, cols:cols + width])
        assert sum(read) == block.numel() * 4  # read amplification 1: not one byte outside the block
