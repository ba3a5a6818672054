"""Saving and opening module directories: ``save_module`` and ``load_module``."""

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import safetensors
import torch

from tfexec.api_checks import public
from tfexec.errors import ModuleLoadError
from tfexec.ir.dtypes import DType
from tfexec.ir.module import IRModule
from tfexec.ir.types import ShardLayout, TensorType
from tfexec.loading.blocks import all_blocks, block_bounds, block_grid, layout_axis_error, uneven_axis
from tfexec.loading.declared import check_declared, spell_tensor
from tfexec.loading.loaded import ConstantCache, DeviceLike, LoadedModule, as_device, check_headers
from tfexec.loading.manifest import DEFAULT_SHARD_BYTES, FORMAT, FORMAT_VERSION, MANIFEST, MODULE_TEXT, Manifest, read_manifest
from tfexec.loading.safetensors_io import tensor_bytes
from tfexec.loading.sources import open_saved
from tfexec.text import parse, print_ir

# -- the module text ---------------------------------------------------------------------


def _read_module_text(root: Path, manifest: Manifest) -> IRModule:
    """The module tree parsed from its text; its entry must be the manifest's."""
    file = root / manifest.text
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModuleLoadError(f"{file}: module text named by the manifest is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModuleLoadError(f"{file}: cannot read the module text: {exc}") from exc
    module = parse(text, filename=str(file))
    if module.entry != manifest.entry:
        raise ModuleLoadError(f"{file}: the text's entry {module.entry!r} disagrees with the manifest's {manifest.entry!r}")
    return module


@public
def load_module(path: "str | os.PathLike[str]", device: DeviceLike | None = None, *, verify: bool = True) -> LoadedModule:
    """Open the module directory ``path`` written by ``save_module``.

    The manifest, the module text and every safetensors header are validated now (cheap:
    no tensor data is read), so a truncated or mislabelled file fails here. Each constant's
    data is read when first used, at most once, checked against its SHA-256 (unless
    ``verify=False``) and placed on ``device`` (default CPU).
    """
    root = Path(path)
    if not root.is_dir():
        raise ModuleLoadError(f"{root}: not a saved module directory{' (it does not exist)' if not root.exists() else ''}")
    manifest = read_manifest(root)
    source = open_saved(root, manifest, verify)
    module = _read_module_text(root, manifest)
    declared = module.all_constants()
    dev = as_device(device) or torch.device("cpu")
    cache = ConstantCache(source, dev)
    check_headers(module, source, cache.dims)
    extra = sorted(set(manifest.tensors) - set(declared))
    if extra:
        raise ModuleLoadError(f"{root}: tensors {', '.join(extra)} are saved but the module declares no such constants")
    entry = module.functions[module.entry] if module.entry is not None else None
    return LoadedModule(module, cache, entry, name=root.name)



def _weights_for_saving(module: IRModule, weights: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The weights as contiguous CPU tensors, checked against the declared constants."""
    declared = module.all_constants()
    problems: list[str] = []
    for name, t in declared.items():
        if name not in weights:
            problems.append(f"constant {name}: declared {t}, missing from the weights")
    for name in weights:
        if name not in declared:
            value = weights[name]
            found = spell_tensor(value) if isinstance(value, torch.Tensor) else type(value).__name__
            problems.append(f"weight {name} ({found}) is not a declared constant of the module")
    out: dict[str, torch.Tensor] = {}
    dims: dict[str, int] = {}
    for name, t in declared.items():
        if name not in weights:
            continue
        try:
            value = check_declared(name, t, weights[name], "the weights", dims)
        except ModuleLoadError as exc:
            problems.append(str(exc))
            continue
        if value.device.type == "meta" or value.layout != torch.strided:
            problems.append(f"constant {name}: a {value.layout} tensor on {value.device} has no data to save")
            continue
        out[name] = value.detach().to("cpu").contiguous()
    if problems:
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise ModuleLoadError("cannot save the module: " + "; ".join(problems[:8]) + more)
    return out


def _shards(tensors: dict[str, torch.Tensor], shard_bytes: int) -> list[list[str]]:
    shards: list[list[str]] = [[]]
    size = 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        if shards[-1] and size + n > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += n
    return shards


@public
def save_module(
    module: IRModule,
    weights: Mapping[str, torch.Tensor],
    path: "str | os.PathLike[str]",
    *,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
) -> Path:
    """Write ``module`` and its ``weights`` as the new directory ``path`` and return it.

    ``weights`` maps every declared constant's dotted name to a tensor (a PyTorch
    ``state_dict`` works as is); a missing, extra or mistyped weight is a ``ModuleLoadError``
    naming the constant, declared vs found. The directory holds the module text, the weights
    as safetensors file(s) of at most ``shard_bytes`` each (a larger single tensor gets a
    file of its own), and ``manifest.json`` with each tensor's dtype, shape, SHA-256 and
    file. It is written beside ``path`` and renamed into place, so a failed save leaves
    nothing behind. ``path`` must not exist, or be an empty directory.
    """
    if not isinstance(module, IRModule):
        raise TypeError(f"save_module needs an IRModule, got {type(module).__name__}")
    if not isinstance(weights, Mapping):
        raise TypeError(f"save_module needs weights as a Mapping[str, torch.Tensor], got {type(weights).__name__}")
    tensors = _weights_for_saving(module, weights)
    text = print_ir(module)
    target = Path(path)
    try:
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise ModuleLoadError(f"{target}: already exists; save_module writes a new directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as exc:
        raise ModuleLoadError(f"{target}: cannot create the module directory: {exc.strerror or exc}") from exc
    try:
        manifest = _write_contents(tmp, module, text, tensors, shard_bytes)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if target.exists():
            target.rmdir()
        os.replace(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModuleLoadError(f"{target}: cannot write the module: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _write_contents(
    tmp: Path, module: IRModule, text: str, tensors: dict[str, torch.Tensor], shard_bytes: int
) -> dict[str, object]:
    (tmp / MODULE_TEXT).write_text(text, encoding="utf-8")
    shards = _shards(tensors, shard_bytes)
    fnames = (
        ["weights.safetensors"] if len(shards) == 1
        else [f"weights-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]
    )
    declared = module.all_constants()
    files: dict[str, object] = {}
    records: dict[str, dict[str, object]] = {}
    for fname, names in zip(fnames, shards):
        specs = {}
        for name in names:
            t = tensors[name]
            dtype = DType.from_torch(t.dtype)
            specs[name] = safetensors.TensorSpec(
                dtype=str(t.dtype).removeprefix("torch."), shape=list(t.shape), data_ptr=t.data_ptr(),
                data_len=t.numel() * t.element_size(),
            )
            records[name] = {
                "file": fname, "dtype": dtype.value, "shape": list(t.shape),
                "sha256": hashlib.sha256(tensor_bytes(t)).hexdigest(),
            }
            blocks = _block_digests(t, declared[name])
            if blocks is not None:
                records[name]["blocks"] = blocks
        try:
            safetensors.serialize_file(specs, tmp / fname, metadata={"format": "pt", "writer": "tfexec"})
        except (safetensors.SafetensorError, ValueError, TypeError) as exc:
            raise ModuleLoadError(f"{tmp / fname}: cannot write the weights: {exc}") from exc
        files[fname] = {"bytes": (tmp / fname).stat().st_size}
    # the oldest version that holds what is written: readers of version 1 still read a module without blocks
    version = FORMAT_VERSION if any("blocks" in r for r in records.values()) else 1
    return {
        "format": FORMAT, "version": version, "module": MODULE_TEXT, "entry": module.entry,
        "files": files, "tensors": records,
    }



def _block_digests(t: torch.Tensor, declared: TensorType) -> dict[str, object] | None:
    """The grid and per-block SHA-256s of a weight declared with a ``ShardLayout`` that
    splits it evenly (manifest version 2), so a mesh participant can check its block alone."""
    layout = declared.layout
    if not isinstance(layout, ShardLayout) or not layout.splits or layout_axis_error(layout, t.dim()) is not None:
        return None
    shape = tuple(t.shape)
    grid = block_grid(layout, t.dim())
    if uneven_axis(shape, grid) is not None:
        return None  # a mesh run refuses this weight, naming it; there is no block to check
    digests = []
    for index in all_blocks(grid):
        block = t[tuple(slice(a, b) for a, b in block_bounds(shape, grid, index))].contiguous()
        digests.append(hashlib.sha256(tensor_bytes(block)).hexdigest())
    return {"grid": list(grid), "sha256": digests}
