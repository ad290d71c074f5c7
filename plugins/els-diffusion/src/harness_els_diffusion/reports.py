"""Reports of the 'els-diffusion' task."""

from __future__ import annotations

from harness import LazyModule, Report

pd = LazyModule("pandas")  # loaded when claims are evaluated, not at start-up

__all__ = ["MethodTable"]

_COLUMNS = [
    "r2-to-trained.median",
    "r2-to-trained.mismatched",
    "nearest-image.train",
    "nearest-image.heldout",
    "nearest-image.copies",
    "mosaic.sources",
    "mosaic.patch_rms",
    "patch-schedule.high_noise",
    "patch-schedule.low_noise",
]


class MethodTable(Report):
    """Every metric's mean over seeds, one row per method configuration.

    Source: this plugin.
    """

    name = "method-table"
    task = "els-diffusion"

    def build(self, results: pd.DataFrame, curves: dict) -> dict[str, pd.DataFrame]:
        ok = results[results["status"] == "ok"].copy()
        patch = ok["method.patch"] if "method.patch" in ok else pd.Series("", index=ok.index)
        ok["configuration"] = ok["method"] + patch.fillna("").map(
            lambda p: f" [patch={p}]" if p not in ("", "nan") else ""
        )
        columns = [c for c in _COLUMNS if c in ok]
        return {"method-table": ok.groupby("configuration")[columns].mean().round(3)}
