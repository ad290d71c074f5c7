"""Installing plugins for subprocess tests without pip: a fake ``.dist-info`` with an entry
point, on a folder that goes on PYTHONPATH."""

from __future__ import annotations

from pathlib import Path


def install_fake_plugin(site: Path, entry: str, module: str, source: str) -> None:
    """Make ``site`` hold an installed plugin: a ``.dist-info`` whose entry point
    ``entry`` names the module ``module``, written from ``source``."""
    info = site / f"harness_{entry.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    name = f"harness-{entry}"
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[harness]\n{entry} = {module}\n")
    (site / f"{module}.py").write_text(source)


def toy_environment(site: Path) -> dict[str, str]:
    """``os.environ`` for a subprocess that sees only the toy plugin, installed in ``site``
    (more fake plugins may be added there with :func:`install_fake_plugin`)."""
    import os
    from importlib.metadata import entry_points

    source = (Path(__file__).parent / "toy_plugin.py").read_text()
    install_fake_plugin(site, "toy", "toy_plugin", source)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    others = {ep.name for ep in entry_points(group="harness")} - {"toy"}
    env["HARNESS_DISABLE_PLUGINS"] = ",".join(sorted(others))  # only the toy plugin loads
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


def harness(env: dict[str, str], *args: str, cwd: Path | None = None):
    """``harness ARGS`` in a subprocess with ``env`` (:func:`toy_environment`): the
    completed process, its output captured as text."""
    import subprocess
    import sys

    command = str(Path(sys.executable).parent / "harness")
    return subprocess.run(
        [command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
