"""Credentials moved out of tracking URIs and masked in everything printed; long values cut
with their length stated; invisible and look-alike characters shown escaped."""

from __future__ import annotations

import os
import socket
import string
import subprocess

import pytest
from helpers import HARNESS, SUITE


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# Every printable ASCII character but the space, in a password written as is (not
# percent-encoded): the URI parser must find where the password ends whatever it holds.
PASSWORDS = [f"pw{c}7f3a{c}x" for c in string.punctuation] + ["p@ss/w#r?d@", "a:b@c%zz"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_password_holding_any_character_is_read_whole_and_masked(password, monkeypatch):
    """Before: a '#', '/', '?' or '@' in the password ended it early: part of it stayed in
    the masked text and in the URI given to MLflow, the rest was taken for the host."""
    from harness import redaction

    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    uri = f"postgresql://ann:{password}@db.example.org:5432/mlflow"
    text = f"error: cannot open '{uri}': refused"
    assert redaction.mask(text) == (
        "error: cannot open 'postgresql://ann:***@db.example.org:5432/mlflow': refused"
    )
    moved = redaction.move_http_credentials(f"http://ann:{password}@mlflow.example.org:5000/x")
    assert moved == "http://mlflow.example.org:5000/x"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == password
    assert redaction.split_uri(uri)[2] == password  # the one parser


def test_a_database_password_is_percent_encoded_for_its_driver():
    """Before: postgresql://ann:p@ss@host/db went to the driver as is; it took 'ss@host'
    for the host and printed it."""
    from harness.redaction import move_http_credentials

    uri = move_http_credentials("postgresql://ann:p@ss/9c1d@127.0.0.1:5432/db")
    assert uri == "postgresql://ann:p%40ss%2F9c1d@127.0.0.1:5432/db"
    assert move_http_credentials(uri) == uri  # already encoded: kept


@pytest.mark.parametrize(
    "uri",
    [
        "http://ann:pa#ss-7f3a@127.0.0.1:{port}",
        "postgresql://ann:p@ss-9c1d@127.0.0.1:{port}/mlflow",
    ],
    ids=["http-hash", "postgresql-at"],
)
def test_a_password_with_url_special_characters_never_reaches_the_terminal(uri, toy_env, tmp_path):
    """Before: the http URI ended in a traceback ("nonnumeric port: 'pa'"); the PostgreSQL
    one in "failed to resolve host 'ss-9c1d@127.0.0.1'" (part of the password)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    result = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", uri.format(port=_closed_port())],
        env=toy_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    for part in ("pa#ss", "ss-7f3a", "ss-9c1d", "p@ss"):
        assert part not in output, output
    assert ":***@" in output or "http://127.0.0.1" in output


def test_long_values_are_cut_and_their_length_stated(harness_main, tmp_path):
    """Before: the 600,000-character name and the 100,000-character option came back
    whole in one error line."""
    suite = tmp_path / "big.yaml"
    name = "x" * 600_000
    suite.write_text(f"name: big\nruns:\n  - {{task: toy, datasets: [noise], methods: [{name}]}}\n")
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and "(600,000 characters) for task 'toy'" in err and len(err) < 1_000
    value = "y" * 100_000
    suite.write_text(
        "name: big\nruns:\n  - {task: toy, datasets: [noise],"
        f" methods: [{{name: mean, params: {{shift: {value}}}}}]}}\n"
    )
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and "expected float, got 'yyy" in err and len(err) < 1_000, err[:2000]
    small = tmp_path / "s.yaml"
    small.write_text(SUITE)
    for option in ("--method", "--add-method", "--dataset", "--seeds", "--timeout"):
        code, _, err = harness_main("validate", str(small), option, "z" * 100_000)
        assert code == 2 and "(100,000 characters)" in err and len(err) < 1_000, (option, err)
    code, _, err = harness_main("validate", str(small), "--set", "dataset.n=" + "z" * 100_000)
    assert code == 2 and "characters)" in err and len(err) < 1_000, err[:2000]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("no\u200bise", r"'no\u200bise'"),  # a zero-width space
        ("n\u043eise", r"'n\u043eise'"),  # a Cyrillic o
        ("noise\u202e", r"'noise\u202e'"),  # a right-to-left override
    ],
)
def test_invisible_and_look_alike_characters_are_shown_escaped(name, shown, harness_main, tmp_path):
    """Before: "Unknown dataset 'no​ise' ... Known: noise", two names that look the same."""
    suite = tmp_path / "s.yaml"
    suite.write_text(f"name: s\nruns:\n  - {{task: toy, datasets: ['{name}'], methods: [mean]}}\n")
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and f"Unknown dataset {shown} for task 'toy'" in err, err
    suite.with_name("t.yaml").write_text(SUITE)
    code, _, err = harness_main("validate", str(suite.with_name("t.yaml")), "--method", name)
    assert code == 2 and name not in err and shown.strip("'") in err, err
