"""``harness new-plugin``: a name too long for a suite is refused in one line."""

from __future__ import annotations

from harness import cli


def _call(registry, capsys, *args: str) -> tuple[int, str, str]:
    """``harness ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    code = 0
    try:
        cli.main(args, registry=registry)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_new_plugin_with_a_300_character_name_exits_2_in_one_line(registry, capsys, tmp_path):
    code, _, err = _call(registry, capsys, "new-plugin", "a" * 300, "--dir", str(tmp_path))
    assert code == 2 and "Traceback" not in err
    assert "is 300 characters; use at most 100" in " ".join(err.split())
    assert not list(tmp_path.iterdir())
