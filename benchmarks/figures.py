"""The figures measured by the speed benchmarks, printed as one table at the end."""

from __future__ import annotations

FIGURES: list[tuple[str, str, str]] = []  # (figure, measured, goal)


def record(figure: str, measured: str, goal: str) -> None:
    """Keep one figure of the table for the closing summary."""
    FIGURES.append((figure, measured, goal))
