"""``harness list``: what a plugin declares is shown as text, never obeyed."""

from __future__ import annotations

from helpers import call_main

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"


def test_list_prints_a_claims_escape_sequences_and_markup_as_text(registry, monkeypatch, capsys):
    from harness.cli.common import console

    claim = registry.get("claim", "toy", "shift-raises-error").cls
    monkeypatch.setattr(claim, "statement", f"Holds [bold]x[/] {ESCAPES}")
    monkeypatch.setattr(console, "width", 600)
    code, out, _ = call_main(registry, capsys, "list")
    assert code == 0
    assert not any(c in out for c in "\x1b\x07\x9b\u202e")
    assert "Holds [bold]x[/] \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil" in out
