"""One BLAS thread for every test, as the harness's workers run cells (2 shared cores)."""

import pytest

from harness import limit_threads


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    with limit_threads(1):
        yield
