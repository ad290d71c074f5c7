"""The command's shared console: text from a plugin, a suite or a store is printed, never
obeyed (escape sequences, markup), and the command's own styles are kept."""

from __future__ import annotations

import io

from helpers import call_main

import harness

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"


def test_an_error_holding_escape_sequences_is_printed_escaped(registry, monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise harness.errors.HarnessError(f"plugin says {ESCAPES}")

    monkeypatch.setattr("harness.cli.listing.get_registry", fail)
    code, out, err = call_main(registry, capsys, "list")
    assert code == 1
    assert not any(c in out + err for c in "\x1b\x07\x9b\u202e")
    assert "plugin says \\x1b]0;pwned" in err


def test_the_console_escapes_what_a_caller_printed_raw_and_keeps_its_own_styles():
    from harness.cli.common import ShownConsole

    buffer = io.StringIO()
    shown = ShownConsole(file=buffer, force_terminal=True, color_system="standard")
    shown.print(f"[red]{ESCAPES}[/]", highlight=False)
    text = buffer.getvalue()
    assert "\\x1b]0;pwned" in text and "\\u202eevil" in text and "\u202e" not in text
    assert text.count("\x1b") == 2  # rich's own colour on and off
