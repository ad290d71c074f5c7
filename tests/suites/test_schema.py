"""The suite format: a mapping without suite keys is refused without quoting it; a timeout too
large for a timestamp is refused."""

from __future__ import annotations

import pytest
from helpers import SUITE, run_args


def test_a_yaml_mapping_without_suite_keys_is_refused_without_quoting_it(harness_main, tmp_path):
    """Before: 'unknown key 'password'', 'unknown key 'api_token'' (a line each)."""
    (tmp_path / "other.yaml").write_text("user: admin\npassword: hunter2-7f3a\napi_token: t\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\ninclude: [other.yaml]\n")
    code, out, err = harness_main("validate", str(suite))
    assert code == 2, out + err
    assert "other.yaml: not a suite" in err and "has 3 keys and none of name" in err
    assert "password" not in err and "api_token" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("timeout", ["99999999999999999h", "9000h"])
def test_a_timeout_too_large_for_a_timestamp_is_refused(timeout, harness_main, tmp_path):
    """Before: '99999999999999999h' ran and crashed in setitimer ("timestamp out of range
    for platform time_t"); '9000h' was taken."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    store = tmp_path / "store" / "mlflow.db"
    args = [*run_args(suite, f"sqlite:///{store}", tmp_path / "r"), "--timeout", timeout]
    code, out, err = harness_main(*args)
    assert code == 2, (code, out, err)
    assert "a timeout is at most 365 days (31,536,000 s)" in err
    assert not store.parent.exists()
