import pytest


@pytest.fixture(autouse=True)
def _ground_state_cache(tmp_path_factory, monkeypatch):
    """Keep the ground-state cache of every test in pytest's temporary folder."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
