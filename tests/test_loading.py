"""Readings, ``LoadedModule``, ``save_module`` and ``load_module`` (hir.md §modules).

Every kind of bad file is a ``ModuleLoadError`` naming the file and the tensor; constants
are read lazily, at most once per loaded module; a file truncated after loading fails at
first use with ``ModuleLoadError`` rather than a crash.

Saving and loading a module directory writes and parses the module text with
``tfexec.text`` (``print_ir``, ``parse``).
"""

import hashlib
import json
import os
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import safetensors
import torch

from tfexec import (
    ConstTensor,
    DimVar,
    EvalError,
    Function,
    IRModule,
    LoadedModule,
    ModuleLoadError,
    Var,
    evaluate,
    f16,
    f32,
    ops,
)
from tfexec.loading import load_module, save_module

from shared_helpers import CountingReading


# -- modules and readings used throughout -------------------------------------------------


def _module(entry: str | None = "forward") -> IRModule:
    """forward(x) = x @ w + b; scale(y) = y * s; child block: forward(y) = y * g."""
    x = Var("x", f32[2, 3])
    fwd = Function("forward", (x,), ops.add(ops.matmul(x, ConstTensor("w", f32[3, 4])), ConstTensor("b", f32[4])))
    y = Var("y", f32[4])
    scale = Function("scale", (y,), ops.mul(y, ConstTensor("s", f32[4])))
    z = Var("z", f32[4])
    block = IRModule({"forward": Function("forward", (z,), ops.mul(z, ConstTensor("g", f32[4])))}, {"g": f32[4]}, entry="forward")
    return IRModule(
        {"forward": fwd, "scale": scale}, {"w": f32[3, 4], "b": f32[4], "s": f32[4]}, entry=entry, children={"block": block}
    )


def _weights() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "w": torch.randn(3, 4, generator=g),
        "b": torch.randn(4, generator=g),
        "s": torch.randn(4, generator=g),
        "block.g": torch.randn(4, generator=g),
    }


def _x() -> torch.Tensor:
    return torch.arange(6, dtype=torch.float32).reshape(2, 3)


def _expected(weights: Mapping[str, torch.Tensor]) -> torch.Tensor:
    return _x() @ weights["w"] + weights["b"]


def _write_safetensors(path: Path, tensors: Mapping[str, torch.Tensor]) -> Path:
    kept = {k: v.contiguous() for k, v in tensors.items()}
    specs = {
        k: safetensors.TensorSpec(
            dtype=str(v.dtype).removeprefix("torch."), shape=list(v.shape), data_ptr=v.data_ptr(),
            data_len=v.numel() * v.element_size(),
        )
        for k, v in kept.items()
    }
    safetensors.serialize_file(specs, path)
    return path


def _header(path: Path) -> tuple[int, dict[str, object]]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    assert isinstance(header, dict)
    return n, header


def _rewrite_header(path: Path, header: dict[str, object]) -> None:
    """Replace the header, padded to its old length so the data section stays where it was."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    text = json.dumps(header, separators=(",", ":")).encode()
    assert len(text) <= n, "the new header must fit the old one"
    path.write_bytes(raw[:8] + text.ljust(n, b" ") + raw[8 + n :])


def _weights_file(saved: Path) -> Path:
    (only,) = saved.glob("*.safetensors")
    return only


# -- mapping readings ---------------------------------------------------------------------


def test_mapping_reading_is_lazy_and_reads_each_constant_at_most_once() -> None:
    reading = CountingReading(_weights())
    loaded = LoadedModule.from_reading(_module(), reading)
    assert reading.lookups == [] and loaded.reads() == {}
    for _ in range(3):
        out = evaluate(loaded, _x())
    assert torch.equal(out, _expected(reading.data))  # type: ignore[arg-type]
    assert sorted(reading.lookups) == ["b", "w"]
    assert loaded.reads() == {"w": 1, "b": 1}
    evaluate(loaded.function("scale"), torch.ones(4))
    evaluate(loaded.child("block"), torch.ones(4))
    evaluate(loaded.child("block"), torch.ones(4))
    assert loaded.reads() == {"w": 1, "b": 1, "s": 1, "block.g": 1}


def test_constant_of_wrong_dtype_refused_at_first_read_naming_declared_and_found() -> None:
    weights = _weights() | {"w": torch.zeros(3, 4, dtype=torch.float16)}
    reading = CountingReading(weights)
    loaded = LoadedModule.from_reading(_module(), reading)  # nothing is checked before first use
    with pytest.raises(ModuleLoadError, match=r"^constant w: declared f32\[3, 4\], found f16\[3, 4\] in the reading$"):
        loaded.constant("w")
    with pytest.raises(EvalError, match=r"const_tensor w: f32\[3, 4\]: constant w: declared f32\[3, 4\], found f16\[3, 4\]") as info:
        evaluate(loaded, _x())
    assert isinstance(info.value.__cause__, ModuleLoadError)
    assert reading.lookups.count("w") == 1 and loaded.reads()["w"] == 1  # a failed read is not retried


def test_constant_of_wrong_shape_refused_at_first_read() -> None:
    loaded = LoadedModule.from_reading(_module(), _weights() | {"b": torch.zeros(5)})
    with pytest.raises(EvalError, match=r"constant b: declared f32\[4\], found f32\[5\] in the reading"):
        evaluate(loaded, _x())


def test_constant_that_is_not_a_tensor_is_refused() -> None:
    loaded = LoadedModule.from_reading(_module(), {**_weights(), "w": [[1.0] * 4] * 3})  # type: ignore[dict-item]
    with pytest.raises(ModuleLoadError, match=r"constant w: declared f32\[3, 4\], but the reading holds a list, not a tensor"):
        loaded.constant("w")


def test_missing_constant_named() -> None:
    weights = _weights()
    del weights["b"]
    loaded = LoadedModule.from_reading(_module(), weights)
    with pytest.raises(EvalError, match=r"constant b is missing from the reading"):
        evaluate(loaded, _x())


def test_reference_type_must_agree_with_the_module_declaration() -> None:
    loaded = LoadedModule.from_reading(_module(), _weights())
    with pytest.raises(ModuleLoadError, match=r"constant w: the reference declares f16\[3, 4\] but the module declares f32\[3, 4\]"):
        loaded.constant("w", f16[3, 4])
    with pytest.raises(ModuleLoadError, match=r"constant nope is not declared by the module"):
        loaded.constant("nope")


def test_undeclared_constant_uses_the_reference_type() -> None:
    x = Var("x", f32[2])
    fn = Function("forward", (x,), ops.add(x, ConstTensor("bias", f32[2])))
    loaded = LoadedModule.from_reading(IRModule({"forward": fn}, entry="forward"), {"bias": torch.ones(2)})
    assert torch.equal(evaluate(loaded, torch.zeros(2)), torch.ones(2))  # type: ignore[arg-type]


def test_symbolic_constant_dims_bind_consistently_across_constants() -> None:
    d = DimVar("D")
    x = Var("x", f32[2, 4])
    fn = Function("forward", (x,), ops.matmul(ops.matmul(x, ConstTensor("up", f32[4, d])), ConstTensor("down", f32[d, 4])))
    module = IRModule({"forward": fn}, {"up": f32[4, d], "down": f32[d, 4]}, entry="forward")
    ok = LoadedModule.from_reading(module, {"up": torch.ones(4, 8), "down": torch.ones(8, 4)})
    assert tuple(evaluate(ok, torch.ones(2, 4)).shape) == (2, 4)  # type: ignore[union-attr]
    bad = LoadedModule.from_reading(module, {"up": torch.ones(4, 8), "down": torch.ones(6, 4)})
    with pytest.raises(EvalError, match=r"constant down: declared f32\[D, 4\], found f32\[6, 4\]"):
        evaluate(bad, torch.ones(2, 4))


def test_dotted_reference_reaches_a_child_constant() -> None:
    y = Var("y", f32[4])
    top = IRModule(
        {"forward": Function("forward", (y,), ops.add(y, ConstTensor("block.g", f32[4])))},
        entry="forward", children={"block": _module().child("block")},
    )
    loaded = LoadedModule.from_reading(top, {"block.g": torch.full((4,), 2.0)})
    assert torch.equal(evaluate(loaded, torch.ones(4)), torch.full((4,), 3.0))  # type: ignore[arg-type]
    assert torch.equal(evaluate(loaded.child("block"), torch.ones(4)), torch.full((4,), 2.0))  # type: ignore[arg-type]
    assert loaded.reads() == {"block.g": 1}  # one read, shared by both selections


def test_state_dict_of_a_torch_linear_is_a_reading() -> None:
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 4)
    x = Var("x", f32[2, 3])
    body = ops.add(ops.matmul(x, ops.transpose(ConstTensor("weight", f32[4, 3]), perm=(1, 0))), ConstTensor("bias", f32[4]))
    module = IRModule({"forward": Function("forward", (x,), body)}, {"weight": f32[4, 3], "bias": f32[4]}, entry="forward")
    loaded = LoadedModule.from_reading(module, lin.state_dict())
    with torch.no_grad():
        want = lin(_x())
    assert torch.allclose(evaluate(loaded, _x()), want)  # type: ignore[arg-type]


def test_mapping_reading_moved_to_the_requested_device_and_refused_at_first_use() -> None:
    loaded = LoadedModule.from_reading(_module(), _weights(), device="meta")
    assert loaded.device == torch.device("meta")
    with pytest.raises(EvalError, match=r"weight w is on meta but the inputs are on cpu"):
        evaluate(loaded, _x())


def test_function_and_child_selection_errors_list_what_exists() -> None:
    loaded = LoadedModule.from_reading(_module(), _weights())
    assert loaded.function("scale").entry is _module_function(loaded, "scale")
    with pytest.raises(ModuleLoadError, match=r"module: no function 'run' in this module \(functions: forward, scale\)"):
        loaded.function("run")
    with pytest.raises(ModuleLoadError, match=r"no child module 'mlp' in 'mlp' \(children: block\)"):
        loaded.child("mlp")


def _module_function(loaded: LoadedModule, name: str) -> Function:
    return loaded.module.functions[name]


def test_module_with_no_entry_refused_as_having_no_default_step() -> None:
    loaded = LoadedModule.from_reading(_module(entry=None), _weights())
    with pytest.raises(EvalError, match=r"loaded module 'module' has no entry, so it has no default step"):
        evaluate(loaded, _x())
    assert torch.equal(evaluate(loaded.function("forward"), _x()), _expected(_weights()))  # type: ignore[arg-type]


def test_reading_of_the_wrong_kind_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"a reading is a Mapping\[str, torch.Tensor\] or a path"):
        LoadedModule.from_reading(_module(), 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"from_reading needs an IRModule, got dict"):
        LoadedModule.from_reading({}, {})  # type: ignore[arg-type]
    with pytest.raises(ModuleLoadError, match=r"unknown device 'gpu0'"):
        LoadedModule.from_reading(_module(), {}, device="gpu0")


# -- a bare safetensors file as a reading -------------------------------------------------


def test_safetensors_file_reading_is_lazy(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    loaded = LoadedModule.from_reading(_module(), path)
    assert loaded.reads() == {} and loaded.device == torch.device("cpu")
    assert torch.equal(evaluate(loaded, _x()), _expected(_weights()))  # type: ignore[arg-type]
    assert torch.equal(evaluate(loaded.child("block"), torch.ones(4)), _weights()["block.g"])  # type: ignore[arg-type]
    assert loaded.reads() == {"w": 1, "b": 1, "block.g": 1}


def test_safetensors_reading_round_trips_every_hir_dtype(tmp_path: Path) -> None:
    from tfexec import DType, TensorType

    tensors = {
        d.value: (torch.arange(6).reshape(2, 3) % 2).to(d.torch) if d is DType.bool else torch.arange(6).reshape(2, 3).to(d.torch)
        for d in DType
    }
    tensors["scalar"] = torch.tensor(2.5)
    tensors["empty"] = torch.zeros(0, 3)
    consts = {name: TensorType(tuple(t.shape), DType.from_torch(t.dtype)) for name, t in tensors.items()}
    path = _write_safetensors(tmp_path / "all.safetensors", tensors)
    loaded = LoadedModule.from_reading(IRModule({}, consts), path)
    for name, t in tensors.items():
        got = loaded.constant(name)
        assert got.dtype == t.dtype and torch.equal(got, t), name


def test_safetensors_reading_checks_declared_constants_at_bind(tmp_path: Path) -> None:
    weights = _weights()
    path = _write_safetensors(tmp_path / "w.safetensors", {k: v for k, v in weights.items() if k != "s"})
    with pytest.raises(ModuleLoadError, match=r"constant s: declared f32\[4\], but .*w.safetensors has no tensor s"):
        LoadedModule.from_reading(_module(), path)
    path = _write_safetensors(tmp_path / "h.safetensors", weights | {"w": weights["w"].half()})
    with pytest.raises(ModuleLoadError, match=r"constant w: declared f32\[3, 4\], found f16\[3, 4\] in .*h.safetensors"):
        LoadedModule.from_reading(_module(), path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"the weights file is empty"),
        (b"\x01\x02\x03", r"not a safetensors file: only 3 bytes"),
        (b"garbage! " * 40, r"not a safetensors file, or truncated: its header claims \d+ bytes but the file has 360"),
        (struct.pack("<Q", 6) + b"not js", r"not a safetensors file: its header is not JSON"),
        (struct.pack("<Q", 2) + b"[]", r"not a safetensors file: its header is a list, not an object"),
    ],
    ids=["empty", "tiny", "garbage", "not-json", "not-object"],
)
def test_malformed_safetensors_file_refused_naming_it(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModuleLoadError, match=r"bad\.safetensors: " + message):
        LoadedModule.from_reading(_module(), path)


def test_truncated_safetensors_refused_at_bind(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    raw = path.read_bytes()
    path.write_bytes(raw[:-5])
    with pytest.raises(ModuleLoadError, match=r"w\.safetensors: truncated: its header describes \d+ bytes but the file has \d+"):
        LoadedModule.from_reading(_module(), path)


def test_trailing_bytes_after_the_data_refused(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    path.write_bytes(path.read_bytes() + b"\0" * 4)
    with pytest.raises(ModuleLoadError, match=r"w\.safetensors: 4 trailing bytes that its header does not describe"):
        LoadedModule.from_reading(_module(), path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"dtype": "Q7"}, r"tensor b: unknown dtype 'Q7'"),
        ({"dtype": 7}, r"tensor b: its header entry has no dtype"),
        ({"shape": [4, -1]}, r"tensor b: its shape \[4, -1\] is not a list of sizes"),
        ({"data_offsets": [16, 8]}, r"tensor b: its data_offsets \[16, 8\] are not a \[begin, end\] byte range"),
        ({"shape": [2]}, r"tensor b: its data_offsets \[\d+, \d+\] hold 16 bytes, but f32\[2\] needs 8"),
    ],
    ids=["unknown-dtype", "no-dtype", "bad-shape", "bad-offsets", "size-mismatch"],
)
def test_bad_header_entry_refused_naming_file_and_tensor(tmp_path: Path, edit: dict[str, object], message: str) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    _, header = _header(path)
    entry = header["b"]
    assert isinstance(entry, dict)
    entry.update(edit)
    _rewrite_header(path, header)
    with pytest.raises(ModuleLoadError, match=r"w\.safetensors: " + message):
        LoadedModule.from_reading(_module(), path)


def test_overlapping_offsets_refused(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", {"a": torch.zeros(4), "b": torch.ones(4)})
    _, header = _header(path)
    header["b"] = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    _rewrite_header(path, header)
    with pytest.raises(ModuleLoadError, match=r"tensor [ab]: its data starts at byte 0 of the data section, expected 16"):
        LoadedModule.from_reading(IRModule({}), path)


def test_duplicate_header_key_refused(tmp_path: Path) -> None:
    entry = b'{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    header = b'{"b":' + entry + b',"b":' + entry + b"}"
    path = tmp_path / "dup.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    with pytest.raises(ModuleLoadError, match=r"dup\.safetensors: not a safetensors file: its header is not JSON \(duplicate key 'b'\)"):
        LoadedModule.from_reading(IRModule({}), path)


def test_lazy_mapping_failure_is_a_module_load_error() -> None:
    class Broken(Mapping[str, torch.Tensor]):
        def __getitem__(self, key: str) -> torch.Tensor:
            raise OSError("disk on fire")

        def __iter__(self) -> Iterator[str]:
            return iter(())

        def __len__(self) -> int:
            return 0

    loaded = LoadedModule.from_reading(_module(), Broken())
    with pytest.raises(ModuleLoadError, match=r"constant w: the reading failed to produce it: OSError: disk on fire"):
        loaded.constant("w")


def test_file_rewritten_to_another_size_after_binding_is_refused(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    loaded = LoadedModule.from_reading(_module(), path)
    with open(path, "ab") as f:
        f.write(b"\0" * 8)
    with pytest.raises(ModuleLoadError, match=r"tensor w: the file changed since it was loaded \((\d+) bytes then, \d+ now\)$"):
        loaded.constant("w")


def test_non_hir_dtype_refused_at_first_use_naming_file_and_tensor(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights() | {"extra": torch.zeros(2, dtype=torch.float32)})
    _, header = _header(path)
    entry = header["extra"]
    assert isinstance(entry, dict)
    entry.update({"dtype": "U32"})
    _rewrite_header(path, header)
    loaded = LoadedModule.from_reading(IRModule({}, {}), path)  # an unused tensor does not matter
    with pytest.raises(ModuleLoadError, match=r"w\.safetensors: tensor extra has dtype U32, which HIR cannot hold"):
        loaded.constant("extra", f32[2])


def test_bool_bytes_other_than_0_and_1_refused(tmp_path: Path) -> None:
    from tfexec import b1

    path = _write_safetensors(tmp_path / "w.safetensors", {"m": torch.tensor([True, False])})
    raw = bytearray(path.read_bytes())
    raw[-1] = 7
    path.write_bytes(bytes(raw))
    loaded = LoadedModule.from_reading(IRModule({}, {"m": b1[2]}), path)
    with pytest.raises(ModuleLoadError, match=r"tensor m is corrupt: a bool byte is neither 0 nor 1"):
        loaded.constant("m")


def test_file_truncated_after_binding_fails_at_first_use_not_a_crash(tmp_path: Path) -> None:
    path = _write_safetensors(tmp_path / "w.safetensors", _weights())
    loaded = LoadedModule.from_reading(_module(), path)
    size = path.stat().st_size
    os.truncate(path, size - 20)
    with pytest.raises(EvalError, match=r"w\.safetensors: tensor \w+: the file changed since it was loaded \(\d+ bytes then, \d+ now; truncated\)"):
        evaluate(loaded, _x())


def test_missing_safetensors_file_refused(tmp_path: Path) -> None:
    with pytest.raises(ModuleLoadError, match=r"nope\.safetensors: cannot read the weights file: No such file"):
        LoadedModule.from_reading(_module(), tmp_path / "nope.safetensors")


# -- save_module / load_module: the weights layer -----------------------------------------


def test_save_then_load_is_lazy_and_evaluates_like_the_weights(tmp_path: Path) -> None:
    weights = _weights()
    saved = save_module(_module(), weights, tmp_path / "m")
    assert saved == tmp_path / "m" and saved.is_dir()
    loaded = load_module(saved)
    assert loaded.reads() == {} and loaded.name == "m"
    direct = LoadedModule.from_reading(_module(), weights)
    assert torch.equal(evaluate(loaded, _x()), evaluate(direct, _x()))  # type: ignore[arg-type]
    assert loaded.reads() == {"w": 1, "b": 1}
    evaluate(loaded, _x())
    assert torch.equal(evaluate(loaded.child("block"), torch.ones(4)), weights["block.g"])  # type: ignore[arg-type]
    assert torch.equal(evaluate(loaded.function("scale"), torch.ones(4)), weights["s"])  # type: ignore[arg-type]
    assert loaded.reads() == {"w": 1, "b": 1, "block.g": 1, "s": 1}


def test_both_routes_share_one_read_of_each_constant(tmp_path: Path) -> None:
    from tfexec import check_equivalence

    loaded = load_module(save_module(_module(), _weights(), tmp_path / "m"))
    report = check_equivalence(loaded, _x())
    assert report.ok and report.compared > 0
    assert loaded.reads() == {"w": 1, "b": 1}


def test_manifest_records_entry_and_each_tensor(tmp_path: Path) -> None:
    weights = _weights()
    saved = save_module(_module(), weights, tmp_path / "m")
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["format"] == "tfexec-module" and manifest["version"] == 1 and manifest["entry"] == "forward"
    assert sorted(p.name for p in saved.iterdir()) == ["manifest.json", "module.tf.py", "weights.safetensors"]
    assert manifest["module"] == "module.tf.py"
    w = manifest["tensors"]["w"]
    assert w["dtype"] == "f32" and w["shape"] == [3, 4] and w["file"] == "weights.safetensors"
    assert len(w["sha256"]) == 64
    assert set(manifest["tensors"]) == set(weights)


def test_manifest_sha256_is_the_hash_of_the_tensor_bytes(tmp_path: Path) -> None:
    weights = {"w": torch.arange(12, dtype=torch.float32).reshape(3, 4), "b": torch.zeros(4), "s": torch.ones(4), "block.g": torch.ones(4)}
    saved = save_module(_module(), weights, tmp_path / "m")
    manifest = json.loads((saved / "manifest.json").read_text())
    raw = struct.pack("<12f", *range(12))
    assert manifest["tensors"]["w"]["sha256"] == hashlib.sha256(raw).hexdigest()


def test_state_dict_saved_and_loaded(tmp_path: Path) -> None:
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 4)
    x = Var("x", f32[2, 3])
    body = ops.add(ops.matmul(x, ops.transpose(ConstTensor("weight", f32[4, 3]), perm=(1, 0))), ConstTensor("bias", f32[4]))
    module = IRModule({"forward": Function("forward", (x,), body)}, {"weight": f32[4, 3], "bias": f32[4]}, entry="forward")
    saved = save_module(module, lin.state_dict(), tmp_path / "lin")
    with torch.no_grad():
        want = lin(_x())
    assert torch.allclose(evaluate(load_module(saved), _x()), want)  # type: ignore[arg-type]


def test_non_contiguous_and_shared_weights_are_saved_by_value(tmp_path: Path) -> None:
    base = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    weights = {"w": base.t(), "b": base[0, :].clone().repeat(2)[:4], "s": base[1, :].clone().repeat(2)[:4], "block.g": base.reshape(-1)[:4]}
    weights["s"] = weights["b"]  # the same tensor under two names (tied weights)
    saved = save_module(_module(), weights, tmp_path / "m")
    loaded = load_module(saved)
    for name, t in weights.items():
        assert torch.equal(loaded.constant(name), t), name


def test_sharded_save_round_trips(tmp_path: Path) -> None:
    weights = _weights()
    saved = save_module(_module(), weights, tmp_path / "m", shard_bytes=20)
    files = sorted(p.name for p in saved.glob("*.safetensors"))
    assert len(files) > 1 and files[0] == f"weights-00001-of-{len(files):05d}.safetensors"
    loaded = load_module(saved)
    assert torch.equal(evaluate(loaded, _x()), _expected(weights))  # type: ignore[arg-type]


def test_load_on_meta_refuses_the_weight_at_first_use(tmp_path: Path) -> None:
    saved = save_module(_module(), _weights(), tmp_path / "m")
    loaded = load_module(saved, device="meta")
    # the prefix is describe_expr of the constant: its declaration in module.tf.py (or, with
    # the stand-in text form, its structure)
    with pytest.raises(EvalError, match=r"^(.*module\.tf\.py:\d+:\d+ w = const\(\)|const_tensor w: f32\[3, 4\]): weight w is on meta but the inputs are on cpu"):
        evaluate(loaded, _x())
    assert loaded.constant("b").device.type == "meta"


def test_loaded_module_with_no_entry_refused_as_having_no_default_step(tmp_path: Path) -> None:
    saved = save_module(_module(entry=None), _weights(), tmp_path / "m")
    loaded = load_module(saved)
    with pytest.raises(EvalError, match=r"loaded module 'm' has no entry, so it has no default step"):
        evaluate(loaded, _x())
    assert torch.equal(evaluate(loaded.function("forward"), _x()), _expected(_weights()))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: w.pop("s"), r"constant s: declared f32\[4\], missing from the weights"),
        (lambda w: w.update(extra=torch.zeros(2)), r"weight extra \(f32\[2\]\) is not a declared constant of the module"),
        (lambda w: w.update(w=w["w"].double()), r"constant w: declared f32\[3, 4\], found f64\[3, 4\] in the weights"),
        (lambda w: w.update({"block.g": torch.zeros(4, 1)}), r"constant block.g: declared f32\[4\], found f32\[4, 1\] in the weights"),
        (lambda w: w.update(b=torch.zeros(4, device="meta")), r"constant b: a torch.strided tensor on meta has no data to save"),
    ],
    ids=["missing", "extra", "dtype", "shape", "meta"],
)
def test_save_validates_weights_against_declared_constants(
    tmp_path: Path, change: object, message: str
) -> None:
    weights = _weights()
    assert callable(change)
    change(weights)
    with pytest.raises(ModuleLoadError, match=r"^cannot save the module: .*" + message):
        save_module(_module(), weights, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_save_refuses_an_existing_non_empty_path(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "keep.txt").write_text("mine")
    with pytest.raises(ModuleLoadError, match=r"m: already exists; save_module writes a new directory"):
        save_module(_module(), _weights(), tmp_path / "m")
    assert (tmp_path / "m" / "keep.txt").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    save_module(_module(), _weights(), tmp_path / "empty")  # an empty directory is fine
    assert (tmp_path / "empty" / "manifest.json").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_saved_directory_is_also_a_reading(tmp_path: Path) -> None:
    saved = save_module(_module(), _weights(), tmp_path / "m")
    loaded = LoadedModule.from_reading(_module(), saved)
    assert torch.equal(evaluate(loaded, _x()), _expected(_weights()))  # type: ignore[arg-type]


# -- integrity: every corrupt module is a ModuleLoadError naming file and tensor ----------


def _saved(tmp_path: Path) -> Path:
    return save_module(_module(), _weights(), tmp_path / "m")


def test_flipped_byte_caught_by_sha256_at_first_read(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    wfile = _weights_file(saved)
    n, header = _header(wfile)
    entry = header["w"]
    assert isinstance(entry, dict)
    offset = 8 + n + entry["data_offsets"][0] + 5
    raw = bytearray(wfile.read_bytes())
    raw[offset] ^= 0x40
    wfile.write_bytes(bytes(raw))
    loaded = load_module(saved)  # headers are fine: the load succeeds
    with pytest.raises(EvalError, match=r"weights\.safetensors: tensor w is corrupt: its bytes hash to SHA-256 [0-9a-f]{64}, the manifest records [0-9a-f]{64}"):
        evaluate(loaded, _x())
    unchecked = load_module(saved, verify=False)
    assert not torch.equal(unchecked.constant("w"), _weights()["w"])  # opted out: the flipped value is read


def test_swapped_offsets_caught_by_sha256(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    wfile = _weights_file(saved)
    _, header = _header(wfile)
    b, s = header["b"], header["s"]
    assert isinstance(b, dict) and isinstance(s, dict)
    b["data_offsets"], s["data_offsets"] = s["data_offsets"], b["data_offsets"]
    _rewrite_header(wfile, header)
    loaded = load_module(saved)
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: tensor b is corrupt: its bytes hash to SHA-256"):
        loaded.constant("b")
    assert torch.equal(load_module(saved, verify=False).constant("b"), _weights()["s"])


def test_truncated_weights_file_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    wfile = _weights_file(saved)
    os.truncate(wfile, wfile.stat().st_size - 1)
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: truncated: its header describes \d+ bytes but the file has \d+"):
        load_module(saved)


def test_truncated_after_load_fails_at_first_use_not_sigbus(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    loaded = load_module(saved)
    wfile = _weights_file(saved)
    os.truncate(wfile, 16)
    with pytest.raises(EvalError, match=r"weights\.safetensors: tensor \w+: the file changed since it was loaded .*; truncated\)") as info:
        evaluate(loaded, _x())
    assert isinstance(info.value.__cause__, ModuleLoadError)


def test_tensor_read_before_truncation_stays_usable(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    loaded = load_module(saved)
    w = loaded.constant("w")  # copied out of the file, not mapped
    b = loaded.constant("b")
    os.truncate(_weights_file(saved), 0)
    assert torch.equal(evaluate(loaded, _x()), _x() @ w + b)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"the weights file is empty"),
        (os.urandom(64), r"not a safetensors file"),
    ],
    ids=["empty", "garbage"],
)
def test_empty_or_garbage_weights_file_fails_at_load(tmp_path: Path, content: bytes, message: str) -> None:
    saved = _saved(tmp_path)
    _weights_file(saved).write_bytes(content)
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: " + message):
        load_module(saved)


def _edit_manifest(saved: Path, edit: "object") -> None:
    manifest = json.loads((saved / "manifest.json").read_text())
    assert callable(edit)
    edit(manifest)
    (saved / "manifest.json").write_text(json.dumps(manifest))


def test_mislabelled_dtype_in_manifest_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    _edit_manifest(saved, lambda m: m["tensors"]["w"].update(dtype="f16"))
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: tensor w is f32\[3, 4\] in the file but f16\[3, 4\] in the manifest"):
        load_module(saved)


def test_mislabelled_dtype_in_header_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    wfile = _weights_file(saved)
    _, header = _header(wfile)
    entry = header["b"]
    assert isinstance(entry, dict)
    entry.update(dtype="I32")  # same width: the header alone is self-consistent
    _rewrite_header(wfile, header)
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: tensor b is i32\[4\] in the file but f32\[4\] in the manifest"):
        load_module(saved)


def test_swapped_shard_files_fail_at_load(tmp_path: Path) -> None:
    saved = save_module(_module(), _weights(), tmp_path / "m", shard_bytes=20)
    first, second = sorted(saved.glob("*.safetensors"))[:2]
    tmp = saved / "swap"
    first.rename(tmp)
    second.rename(first)
    tmp.rename(second)
    with pytest.raises(ModuleLoadError, match=r"weights-0000[12]-of-\d+\.safetensors: (the manifest records \d+ bytes but the file has \d+|tensor \S+, which the manifest places in this file, is missing from it)"):
        load_module(saved)


def test_tensor_missing_from_the_file_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    _edit_manifest(saved, lambda m: m["tensors"].update(ghost={**m["tensors"]["b"]}))
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: tensor ghost, which the manifest places in this file, is missing from it"):
        load_module(saved)


def test_tensor_in_the_file_but_not_the_manifest_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    _edit_manifest(saved, lambda m: m["tensors"].pop("s"))
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: tensor s is in the file but the manifest does not place it there"):
        load_module(saved)


def test_declared_constant_without_a_saved_tensor_fails_at_load(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    wfile = _weights_file(saved)
    _write_safetensors(wfile, {k: v for k, v in _weights().items() if k != "s"})  # a consistent file without s

    def drop_s(m: dict[str, dict[str, object]]) -> None:
        m["tensors"].pop("s")
        m["files"][wfile.name] = {"bytes": wfile.stat().st_size}

    _edit_manifest(saved, drop_s)
    with pytest.raises(ModuleLoadError, match=r"constant s: declared f32\[4\], but .*m has no tensor s"):
        load_module(saved)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(version=99), r"format version 99 is not supported"),
        (lambda m: m.update(format="other"), r"format is not 'tfexec-module'"),
        (lambda m: m.pop("tensors"), r"manifest has no 'tensors'"),
        (lambda m: m["tensors"]["w"].update(dtype="f8"), r"tensors\['w'\]: unknown dtype 'f8'"),
        (lambda m: m["tensors"]["w"].update(sha256="abc"), r"tensors\['w'\]\.sha256 is not a SHA-256 hex digest"),
        (lambda m: m["tensors"]["w"].update(file="other.safetensors"), r"tensors\['w'\]\.file 'other.safetensors' is not one of the files"),
        (lambda m: m.update(module="../escape.tf.py"), r"'\.\./escape\.tf\.py' is not a plain file name"),
        (lambda m: m["files"].update({"a/b.safetensors": {"bytes": 1}}), r"'a/b\.safetensors' is not a plain file name"),
        (lambda m: m["tensors"]["w"].update(shape=[3, -4]), r"tensors\['w'\]\.shape must be a list of sizes"),
        (lambda m: m.update(entry=7), r"manifest\.entry must be a string or null"),
    ],
    ids=["version", "format", "no-tensors", "dtype", "sha", "file", "escape", "file-escape", "shape", "entry"],
)
def test_malformed_manifest_fails_at_load(tmp_path: Path, edit: object, message: str) -> None:
    saved = _saved(tmp_path)
    _edit_manifest(saved, edit)
    with pytest.raises(ModuleLoadError, match=r"manifest\.json: malformed manifest: .*" + message):
        load_module(saved)


@pytest.mark.parametrize(("content", "message"), [(b"", r"not JSON"), (b"\xff\xfe", r"not JSON")], ids=["empty", "binary"])
def test_garbage_manifest_fails_at_load(tmp_path: Path, content: bytes, message: str) -> None:
    saved = _saved(tmp_path)
    (saved / "manifest.json").write_bytes(content)
    with pytest.raises(ModuleLoadError, match=r"manifest\.json: not a tfexec manifest: " + message):
        load_module(saved)


def test_missing_pieces_fail_at_load(tmp_path: Path) -> None:
    with pytest.raises(ModuleLoadError, match=r"nowhere: not a saved module directory \(it does not exist\)"):
        load_module(tmp_path / "nowhere")
    saved = _saved(tmp_path)
    (saved / "module.tf.py").unlink()
    with pytest.raises(ModuleLoadError, match=r"module\.tf\.py: module text named by the manifest is missing"):
        load_module(saved)
    _weights_file(saved).unlink()
    with pytest.raises(ModuleLoadError, match=r"weights\.safetensors: weights file named by the manifest is missing"):
        load_module(saved)
    (saved / "manifest.json").unlink()
    with pytest.raises(ModuleLoadError, match=r"m: not a saved module: it has no manifest\.json"):
        load_module(saved)


def test_entry_in_text_and_manifest_must_agree(tmp_path: Path) -> None:
    saved = _saved(tmp_path)
    _edit_manifest(saved, lambda m: m.update(entry="scale"))
    with pytest.raises(ModuleLoadError, match=r"module\.tf\.py: the text's entry 'forward' disagrees with the manifest's 'scale'"):
        load_module(saved)


def test_declared_types_with_symbolic_dims_and_layouts_round_trip(tmp_path: Path) -> None:
    from tfexec import DType, Layout, Mesh, Replicate, ShardLayout, Split, TensorType

    d = DimVar("D")
    shard = ShardLayout(Mesh((2, 2), ("dp", "tp")), (Replicate(), Split(1)), Layout((4, 2)))
    consts = {
        "sym": f32[d, d * 2 + 1],
        "tiled": TensorType((4, 4), DType.float32, Layout((2, 8))),
        "sharded": TensorType((4, 4), DType.float32, shard),
    }
    weights = {"sym": torch.zeros(2, 5), "tiled": torch.zeros(4, 4), "sharded": torch.ones(4, 4)}
    saved = save_module(IRModule({}, consts), weights, tmp_path / "m")
    loaded = load_module(saved)
    assert dict(loaded.module.constants) == consts
    assert torch.equal(loaded.constant("sharded"), torch.ones(4, 4))
    with pytest.raises(ModuleLoadError, match=r"constant sym: declared f32\[D, D \* 2 \+ 1\], found f32\[2, 4\] in the weights"):
        save_module(IRModule({}, consts), weights | {"sym": torch.zeros(2, 4)}, tmp_path / "bad")


# -- the text round trip ------------------------------------------------------------------


def test_text_round_trip_save_load_evaluate(tmp_path: Path) -> None:
    weights = _weights()
    saved = save_module(_module(), weights, tmp_path / "m")
    text = (saved / "module.tf.py").read_text()
    assert "def forward" in text and "def scale" in text
    loaded = load_module(saved)
    assert sorted(loaded.module.functions) == ["forward", "scale"]
    assert sorted(loaded.module.children) == ["block"]
    direct = LoadedModule.from_reading(_module(), weights)
    assert torch.equal(evaluate(loaded, _x()), evaluate(direct, _x()))  # type: ignore[arg-type]
    y = torch.linspace(-1, 1, 4)
    assert torch.equal(evaluate(loaded.function("scale"), y), evaluate(direct.function("scale"), y))  # type: ignore[arg-type]
    assert torch.equal(evaluate(loaded.child("block"), y), evaluate(direct.child("block"), y))  # type: ignore[arg-type]


def test_text_errors_name_the_saved_file(tmp_path: Path) -> None:
    from tfexec import ParseError

    saved = save_module(_module(), _weights(), tmp_path / "m")
    (saved / "module.tf.py").write_text("def forward(x: f32[2, 3]) -> f32[2, 4]:\n    return nosuchop(x)\n")
    with pytest.raises(ParseError, match=r"module\.tf\.py:2"):
        load_module(saved)


# -- memory: only what a run touches is read ----------------------------------------------


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="resident memory is read from /proc")
def test_running_one_function_reads_only_its_weight(tmp_path: Path) -> None:
    # scaled down from bench/loading_memory.py: 64 MiB of weights, one 1 MiB weight used
    n, size = 64, 256 * 1024  # 64 tensors of 256Ki f32 = 1 MiB each
    consts = {f"w{i}": f32[size] for i in range(n)}
    x = Var("x", f32[size])
    fn = Function("forward", (x,), ops.add(x, ConstTensor("w7", f32[size])))
    module = IRModule({"forward": fn}, consts, entry="forward")
    saved = save_module(module, {name: torch.full((size,), float(i)) for i, name in enumerate(consts)}, tmp_path / "big")
    warm = load_module(saved)
    evaluate(warm.function("forward"), torch.zeros(size))  # warm up torch and the allocator
    del warm
    before = _rss_bytes()
    loaded = load_module(saved)
    out = evaluate(loaded, torch.zeros(size))
    grown = _rss_bytes() - before
    assert torch.equal(out, torch.full((size,), 7.0))  # type: ignore[arg-type]
    assert loaded.reads() == {"w7": 1}
    assert grown < 32 * 2**20, f"resident memory grew by {grown / 2**20:.1f} MiB for one 1 MiB weight of 64"


# -- sharded weights: one block per mesh participant (manifest version 2) -------------------

from tfexec import Mesh, Replicate, ShardLayout, Split  # noqa: E402
from tfexec.loading.sources import open_weights  # noqa: E402

GRID_MESH = Mesh((2, 3), ("dp", "tp"))
BLOCK_LAYOUTS = {
    "rows": ShardLayout(GRID_MESH, (Split(0), Replicate())),
    "columns": ShardLayout(GRID_MESH, (Replicate(), Split(-1))),
    "both": ShardLayout(GRID_MESH, (Split(0), Split(1))),
    "one-axis-twice": ShardLayout(GRID_MESH, (Split(1), Split(1))),
}


def _sharded_module(layout: ShardLayout, shape: tuple[int, ...]) -> IRModule:
    t = f32[shape] @ layout
    x = Var("x", f32[shape])
    return IRModule({"forward": Function("forward", (x,), ops.add(x, ConstTensor("w", t)))}, {"w": t}, entry="forward")


def _expected_block(w: torch.Tensor, layout: ShardLayout, coord: tuple[int, int]) -> torch.Tensor:
    """The participant's shard the way DTensor cuts it: mesh axes in order, the first outermost."""
    block = w
    for mesh_axis, placement in enumerate(layout.attrs):
        if isinstance(placement, Split):
            block = block.chunk(GRID_MESH.shape[mesh_axis], dim=placement.tensor_axis % w.dim())[coord[mesh_axis]]
    return block


@pytest.mark.parametrize("name", list(BLOCK_LAYOUTS))
@pytest.mark.parametrize("shape", [(12, 6), (4, 384)], ids=["few-runs", "many-small-runs"])
def test_each_participant_reads_exactly_its_block(tmp_path: Path, name: str, shape: tuple[int, int]) -> None:
    layout = BLOCK_LAYOUTS[name]
    if shape[1] % 36 and name == "one-axis-twice":
        shape = (shape[0], 36)
    w = torch.randn(*shape)
    saved = save_module(_sharded_module(layout, shape), {"w": w}, tmp_path / "m")
    source = open_weights(saved)
    for coord in [(i, j) for i in range(2) for j in range(3)]:
        block = source.fetch_block("w", layout, coord)
        assert block.is_contiguous() and torch.equal(block, _expected_block(w, layout, coord)), coord


def test_manifest_records_one_digest_per_block_of_the_declared_layout(tmp_path: Path) -> None:
    layout = BLOCK_LAYOUTS["both"]
    w = torch.randn(4, 6)
    saved = save_module(_sharded_module(layout, (4, 6)), {"w": w}, tmp_path / "m")
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["version"] == 2  # version 1 when no tensor has blocks (test_manifest_records_entry_and_each_tensor)
    record = manifest["tensors"]["w"]
    assert record["blocks"]["grid"] == [2, 3]
    blocks = [w[i * 2:(i + 1) * 2, j * 2:(j + 1) * 2].contiguous() for i in range(2) for j in range(3)]
    assert record["blocks"]["sha256"] == [hashlib.sha256(_raw(b)).hexdigest() for b in blocks]
    assert record["sha256"] == hashlib.sha256(_raw(w)).hexdigest()  # the whole tensor's digest is kept


def _raw(t: torch.Tensor) -> bytes:
    return bytes(t.contiguous().view(torch.uint8).reshape(-1).tolist())


def _flip_byte_of_block(saved: Path, row: int) -> None:
    """Flip one byte in row ``row`` of weight w (f32[4, 6], rows-split blocks of 2 rows)."""
    wfile = _weights_file(saved)
    n, header = _header(wfile)
    entry = header["w"]
    assert isinstance(entry, dict)
    raw = bytearray(wfile.read_bytes())
    raw[8 + n + entry["data_offsets"][0] + row * 6 * 4 + 1] ^= 0x40
    wfile.write_bytes(bytes(raw))


def test_a_corrupt_block_is_caught_by_its_own_digest_and_other_blocks_still_read(tmp_path: Path) -> None:
    layout = BLOCK_LAYOUTS["rows"]
    w = torch.randn(4, 6)
    saved = save_module(_sharded_module(layout, (4, 6)), {"w": w}, tmp_path / "m")
    _flip_byte_of_block(saved, row=3)  # in the second block
    source = open_weights(saved)
    assert torch.equal(source.fetch_block("w", layout, (0, 0)), w[:2])  # only the block read is verified
    with pytest.raises(ModuleLoadError, match=r"tensor w is corrupt: the bytes of its block \[\(2, 4\), \(0, 6\)\] hash to SHA-256 [0-9a-f]{64}, the manifest records"):
        source.fetch_block("w", layout, (1, 2))
    with pytest.raises(ModuleLoadError, match=r"tensor w is corrupt: its bytes hash to"):
        source.fetch("w")  # the whole tensor is checked against the whole digest
    assert torch.equal(open_weights(saved, verify=False).fetch_block("w", layout, (1, 0))[0], w[2])


def _as_version_1(saved: Path) -> None:
    def downgrade(m: dict[str, object]) -> None:
        m["version"] = 1
        tensors = m["tensors"]
        assert isinstance(tensors, dict)
        for record in tensors.values():
            record.pop("blocks", None)

    _edit_manifest(saved, downgrade)


def test_a_version_1_manifest_is_read_and_a_block_is_verified_against_the_whole_tensor(tmp_path: Path) -> None:
    layout = BLOCK_LAYOUTS["rows"]
    w = torch.randn(4, 6)
    saved = save_module(_sharded_module(layout, (4, 6)), {"w": w}, tmp_path / "m")
    _as_version_1(saved)
    loaded = load_module(saved)
    assert torch.equal(evaluate(loaded, torch.zeros(4, 6)), w)  # type: ignore[arg-type]
    assert torch.equal(open_weights(saved).fetch_block("w", layout, (1, 1)), w[2:])
    _flip_byte_of_block(saved, row=3)
    with pytest.raises(ModuleLoadError, match=r"tensor w is corrupt: its bytes hash to"):
        open_weights(saved).fetch_block("w", layout, (0, 0))  # the block itself is intact: the whole is not


def test_a_block_of_a_plain_safetensors_file_is_read_unverified(tmp_path: Path) -> None:
    w = torch.randn(4, 6)
    path = _write_safetensors(tmp_path / "w.safetensors", {"w": w})
    assert torch.equal(open_weights(path).fetch_block("w", BLOCK_LAYOUTS["columns"], (1, 2)), w[:, 4:])


def test_an_uneven_or_misplaced_split_is_refused_naming_the_weight(tmp_path: Path) -> None:
    w = torch.randn(5, 6)
    path = _write_safetensors(tmp_path / "w.safetensors", {"w": w})
    with pytest.raises(ModuleLoadError, match=r"constant w: axis 0 \(size 5\) of f32\[5, 6\] does not split into 2 equal parts"):
        open_weights(path).fetch_block("w", BLOCK_LAYOUTS["rows"], (0, 0))
    far = ShardLayout(GRID_MESH, (Split(2), Replicate()))
    with pytest.raises(ModuleLoadError, match=r"constant w: Split\(2\) names no axis of a rank-2 value"):
        open_weights(path).fetch_block("w", far, (0, 0))
    saved = save_module(_sharded_module(BLOCK_LAYOUTS["rows"], (5, 6)), {"w": w}, tmp_path / "m")
    assert "blocks" not in json.loads((saved / "manifest.json").read_text())["tensors"]["w"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda b: b.update(grid=[2]), r"blocks\.grid \[2\] does not cut a tensor of shape \[4, 6\] into equal blocks"),
        (lambda b: b.update(grid=[4, 4]), r"blocks\.grid \[4, 4\] does not cut"),
        (lambda b: b["sha256"].pop(), r"blocks\.sha256 must be a list of 2 SHA-256 hex digests, one per block"),
        (lambda b: b["sha256"].__setitem__(0, "xyz"), r"blocks\.sha256\[0\] is not a SHA-256 hex digest"),
    ],
    ids=["rank", "uneven", "count", "digest"],
)
def test_malformed_block_digests_fail_at_load(tmp_path: Path, edit: object, message: str) -> None:
    saved = save_module(_sharded_module(BLOCK_LAYOUTS["rows"], (4, 6)), {"w": torch.randn(4, 6)}, tmp_path / "m")
    assert callable(edit)
    _edit_manifest(saved, lambda m: edit(m["tensors"]["w"]["blocks"]))
    with pytest.raises(ModuleLoadError, match=r"malformed manifest: tensors\['w'\]\." + message):
        load_module(saved)


def test_an_empty_tensor_file_reads_back(tmp_path: Path) -> None:
    """A program with no parameters has an inputs file with no tensors (a fuzzer's reduced
    repro, say): it must be a valid safetensors file, with or without metadata."""
    from safetensors.torch import load_file

    from tfexec.loading import write_tensors

    for metadata in (None, {}, {"origin.x": "input x"}):
        path = tmp_path / f"empty{len(metadata or {})}{metadata is None}.safetensors"
        write_tensors({}, path, metadata=metadata)
        assert load_file(str(path)) == {}
