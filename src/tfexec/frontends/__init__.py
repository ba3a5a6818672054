"""Frontends: import programs written in other frameworks into HIR.

* ``tfexec.frontends.torch`` — a PyTorch ``nn.Module`` or function, through
  ``torch.export``, as a loaded module whose weights are the module's ``state_dict``.

A frontend is imported on demand (``from tfexec.frontends.torch import import_module``);
importing ``tfexec`` does not import any of them.
"""
