"""``harness new-plugin``: a name too long for a suite is refused in one line."""

from __future__ import annotations

from helpers import call_main


def test_new_plugin_with_a_300_character_name_exits_2_in_one_line(registry, capsys, tmp_path):
    code, _, err = call_main(registry, capsys, "new-plugin", "a" * 300, "--dir", str(tmp_path))
    assert code == 2 and "Traceback" not in err
    assert "is 300 characters; use at most 100" in " ".join(err.split())
    assert not list(tmp_path.iterdir())
