"""``tfexec explain``: writes the page and says what it shows; exit 0 when both routes agree,
1 when the page shows a failure, 2 for bad arguments — one line on stderr, no traceback."""

from pathlib import Path

import pytest

from tfexec.cli import main

from explain_programs import FAILING_LOOP, FLASH, LLAMA


def test_explain_writes_a_page_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "flash.html"
    assert main(["explain", str(FLASH), "--dim", "S=8", "--dim", "T=32", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out} (") and "every one bitwise equal on both routes" in said
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "inputs: q float32[8, 32]" in page and "(random, seed 0)" in page


def test_a_saved_module_with_a_function_and_a_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "block.html"
    assert main(["explain", str(LLAMA), "--function", "block", "--dim", "S=4", "--seed", "3", "-o", str(out)]) == 0
    assert "(random, seed 3)" in out.read_text(encoding="utf-8")
    assert "73 slot(s)" in capsys.readouterr().out


def test_a_failing_program_still_gets_its_page_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "loop.tf.py"
    program.write_text(FAILING_LOOP, encoding="utf-8")
    out = tmp_path / "loop.html"
    assert main(["explain", str(program), "-o", str(out)]) == 1
    said = capsys.readouterr().out
    assert "the program fails at slot %2.4 (f/acc[*]/pa): both routes raise the same error" in said
    assert out.exists()


def test_the_page_can_go_to_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(FLASH), "--dim", "S=2", "--dim", "T=16", "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("<!DOCTYPE html>") and captured.err.startswith("wrote standard output (")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "nowhere.tf.py", "-o", "x.html"], "nowhere.tf.py: no such file or directory"),
        (["explain", str(FLASH), "-o", "{tmp}"], "is a directory; name a file to write"),
        (["explain", str(FLASH), "-o", "{tmp}/missing/dir/page.html"], "no such directory"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv + ["--dim", "S=2", "--dim", "T=16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfexec explain: ") and message in err and "Traceback" not in err


def test_the_page_file_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["explain", str(FLASH)])
    assert exc.value.code == 2 and "-o/--out" in capsys.readouterr().err


def test_a_reader_that_stops_early_is_not_an_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "tfexec", "explain", str(LLAMA), "--dim", "S=8", "-o", "-"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # like `| head -c 0`: nobody reads the page
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=300) == 0 and "Traceback" not in err and "BrokenPipe" not in err
