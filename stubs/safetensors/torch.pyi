# Typed stub for safetensors.torch (used by cli.py). Note: save_file needs numpy at run time.
import os
from collections.abc import Mapping

import torch

def save_file(
    tensors: Mapping[str, torch.Tensor], filename: str | os.PathLike[str], metadata: Mapping[str, str] | None = None
) -> None: ...
def load_file(filename: str | os.PathLike[str], device: str | int = "cpu") -> dict[str, torch.Tensor]: ...
