"""Credentials in tracking URIs: moved out of the URI, masked wherever harness prints.

A tracking URI may carry a password (``http://user:secret@host:5000``,
``postgresql://user:secret@host/db``). harness

- moves the user and password of an ``http(s)://`` URI into ``MLFLOW_TRACKING_USERNAME`` /
  ``MLFLOW_TRACKING_PASSWORD`` (MLflow's documented way to send basic-auth credentials), so
  MLflow itself never sees them in the URI and never prints them in a run link;
- masks every password it has seen (and ``MLFLOW_TRACKING_PASSWORD`` /
  ``MLFLOW_TRACKING_TOKEN``) as ``***`` in everything written to ``sys.stdout`` and
  ``sys.stderr`` by this process: harness' own lines, MLflow's, warnings and tracebacks;
- never logs a tracking URI as a param or tag.
"""

from __future__ import annotations

import os
import re
import sys
import urllib.parse
from typing import Any, TextIO

__all__ = ["mask", "move_http_credentials", "watch"]

MASK = "***"
_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*):(?P<pw>[^@/\s]+)@")
_SECRETS: set[str] = set()


def mask(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` and every secret
    registered by :func:`watch` replaced by ``***``.

    >>> mask("see http://ann:pa55@example.org:5000/#/x")
    'see http://ann:***@example.org:5000/#/x'
    """
    text = _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", text)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def move_http_credentials(uri: str) -> str:
    """For an ``http(s)://user:password@host`` URI: set ``MLFLOW_TRACKING_USERNAME`` and
    ``MLFLOW_TRACKING_PASSWORD`` (in this process) and return the URI without them; any
    other URI is returned unchanged.

    >>> move_http_credentials("https://mlflow.example.org:443/")
    'https://mlflow.example.org:443/'
    """
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return uri
    if parts.password is not None:
        password = urllib.parse.unquote(parts.password)
        _remember(password)
        os.environ["MLFLOW_TRACKING_PASSWORD"] = password
    if parts.username:
        os.environ["MLFLOW_TRACKING_USERNAME"] = urllib.parse.unquote(parts.username)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=host))


def watch(uri: str) -> None:
    """Remember the password in ``uri`` and the secrets in MLflow's credential variables,
    and mask them in this process' standard output and error from now on."""
    parts = urllib.parse.urlsplit(uri)
    if parts.password:
        _remember(urllib.parse.unquote(parts.password))
    for name in ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN"):
        if os.environ.get(name):
            _remember(os.environ[name])
    if _SECRETS or _USERINFO.search(uri):
        _mask_standard_streams()


def _remember(secret: str) -> None:
    if len(secret) >= 3:  # masking "a" or "12" would garble every line
        _SECRETS.add(secret)
        _SECRETS.add(urllib.parse.quote(secret, safe=""))


class _Masked:
    """A text stream that masks secrets in what is written to it; everything else is the
    wrapped stream's (``isatty``, ``fileno``, ``encoding``...)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(mask(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _mask_standard_streams() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, _Masked):
            setattr(sys, name, _Masked(stream))
