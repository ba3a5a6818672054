"""Loaded modules and weight readings (hir.md §modules).

A *reading* is where a module's constant values live: an in-memory
``Mapping[str, torch.Tensor]`` (looked up lazily by name), a ``.safetensors`` file, or a
module directory written by ``save_module``. ``LoadedModule`` binds an ``IRModule`` to a
reading; each constant is read on first use, at most once per loaded module, checked
against its declared dtype and shape, and placed on the loaded module's device.

Main definitions
----------------
* ``LoadedModule`` — an ``IRModule`` bound to a reading; ``entry`` is what ``evaluate`` runs,
  ``function(name)`` / ``child(path)`` select another function or a child module.
* ``save_module(module, weights, path)`` — write a module directory (text, safetensors
  weights, manifest).
* ``load_module(path, device=None)`` — open one: the manifest and every safetensors header
  are validated at once; tensor data is read only when a constant is first used.

Implementation notes
--------------------
* Safetensors files are read with plain file I/O at the header's offsets: never mapped,
  never unpickled. Each tensor is copied out of the file at its first read, so a file
  truncated after loading fails with ``ModuleLoadError`` rather than killing the process
  with SIGBUS, and memory grows only by the tensors a run actually touches.
* The manifest records each tensor's SHA-256, checked on first read (``verify=False`` opts
  out); it catches flipped bytes and swapped offsets that no header check can. For a
  constant declared with a ``ShardLayout`` that splits it, manifest version 2 also records
  the SHA-256 of each block of that layout, so a mesh participant reading only its block
  (``FileSource.fetch_block``, ``tfexec.loading.blocks``) verifies just those bytes; with a
  version 1 manifest it hashes the whole tensor as it streams past, keeping only its block.
* The module text (``module.tf.py``, children as ``class`` blocks) is written with
  ``tfexec.text.print_ir`` and read back with ``tfexec.text.parse``; its entry must match
  the manifest's, and its declared constants must match the saved tensors.

Directory layout::

    path/
      manifest.json          format, version (2 with block digests, else 1), module text file, entry, files, tensors
      module.tf.py           the module tree in the tfexec text form
      weights.safetensors    or weights-00001-of-0000N.safetensors when sharded
"""

from tfexec.loading.loaded import DeviceLike as DeviceLike, LoadedModule as LoadedModule, Reading as Reading
from tfexec.loading.manifest import (
    DEFAULT_SHARD_BYTES as DEFAULT_SHARD_BYTES,
    FORMAT as FORMAT,
    FORMAT_VERSION as FORMAT_VERSION,
    MANIFEST as MANIFEST,
    MODULE_TEXT as MODULE_TEXT,
)
from tfexec.loading.safetensors_io import write_tensors as write_tensors
from tfexec.loading.saved import load_module as load_module, save_module as save_module

__all__ = [
    "DEFAULT_SHARD_BYTES", "FORMAT", "FORMAT_VERSION", "MANIFEST", "MODULE_TEXT", "DeviceLike", "LoadedModule",
    "Reading", "load_module", "save_module", "write_tensors",
]
