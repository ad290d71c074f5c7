"""One dataset configuration per cell: ``NOOP_CELLS`` values of ``size`` (default 10)."""

import os

from benchopt import BaseDataset


class Dataset(BaseDataset):
    name = "numbers"
    parameters = {  # noqa: RUF012 (benchopt reads a class attribute)
        "size": list(range(1, int(os.environ.get("NOOP_CELLS", "10")) + 1))
    }

    def get_data(self):
        return dict(value=float(self.size))
