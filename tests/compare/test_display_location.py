"""Tables show a source location's file relative to where a reader would look for it: the
working directory or the ``sys.path`` entry that holds it (site-packages for a model from
``transformers``); data (dumps, reports' fields) keeps the location as it was recorded."""

import os
import sys

import pytest

from tfexec.ir.span import display_location


def test_a_file_under_a_sys_path_entry_is_shown_from_that_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]) -> None:
    site = os.path.join(str(tmp_path), "venv", "lib", "site-packages")
    monkeypatch.setattr(sys, "path", [site, str(tmp_path)])
    monkeypatch.chdir(tmp_path)
    model = os.path.join(site, "transformers", "models", "llama", "modeling_llama.py")
    assert display_location(f"{model}:64:9") == "transformers/models/llama/modeling_llama.py:64:9".replace("/", os.sep)


def test_the_deepest_root_wins_and_the_working_directory_counts(monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]) -> None:
    monkeypatch.setattr(sys, "path", [os.sep])  # "/" is never a root: every path would shorten
    monkeypatch.chdir(tmp_path)
    mine = os.path.join(str(tmp_path), "models", "mlp.py")
    assert display_location(f"{mine}:3:1") == os.path.join("models", "mlp.py") + ":3:1"
    elsewhere = os.path.join(os.sep, "nowhere-else-xyz", "m.py")
    assert display_location(f"{elsewhere}:3:1") == f"{elsewhere}:3:1"


@pytest.mark.parametrize("location", ["examples/mlp.tf.py:4:9", "<string>:1:1", "", "model.py", "/abs/path/no-line", "C:x:y"])
def test_anything_but_an_absolute_file_line_col_is_shown_as_it_is(location: str) -> None:
    assert display_location(location) == location


def test_the_against_torch_table_shows_site_packages_files_from_the_package() -> None:
    import torch
    from torch import nn

    from tfexec.frontends.torch import check_against_torch

    torch.manual_seed(0)
    report = check_against_torch(nn.Sequential(nn.Linear(4, 4), nn.GELU()).eval(), (torch.randn(2, 4),))
    text = str(report)
    assert report.ok
    assert "torch/nn/modules/linear.py:" in text.replace(os.sep, "/")  # the module's own source, shortened
    assert "site-packages" not in text.split("\n")[2]  # the first row's location column
    assert all(os.path.isabs(r.location.rsplit(":", 2)[0]) for r in report.comparison.rows)  # the data keeps the recorded path
