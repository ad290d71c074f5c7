"""Credentials in tracking URIs and values in messages: what harness may print.

A tracking URI may carry a password (``http://user:secret@host:5000``,
``postgresql://user:secret@host/db``). harness

- reads the user and password of a URI with one parser, :func:`split_uri`, which takes every
  character a password may hold, percent-encoded or not (``p@ss/w#rd?``): the user
  information ends at the *last* ``@`` followed by a host (an ``@`` in a path or query must
  be written ``%40``);
- moves the user and password of an ``http(s)://`` URI into ``MLFLOW_TRACKING_USERNAME`` /
  ``MLFLOW_TRACKING_PASSWORD`` (MLflow's documented way to send basic-auth credentials), so
  MLflow itself never sees them in the URI and never prints them in a run link; a database
  URI gets its user and password percent-encoded, so its driver reads them whole (a raw
  ``@`` made it take part of the password for the host and print it);
- masks every password it has seen (and ``MLFLOW_TRACKING_PASSWORD`` /
  ``MLFLOW_TRACKING_TOKEN``) as ``***`` in everything written to ``sys.stdout`` and
  ``sys.stderr`` by this process: harness' own lines, MLflow's, warnings and tracebacks;
- never logs a tracking URI as a param or tag.

:func:`shown` is how a value from a file or an option appears in a message: quoted, cut to a
length with its size stated, invisible and non-ASCII characters escaped (``'a\\u200bb'``).
"""

from __future__ import annotations

import os
import re
import sys
import urllib.parse
from typing import Any, TextIO

__all__ = ["mask", "move_http_credentials", "shown", "split_uri", "watch"]

MASK = "***"
_SCHEME = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://")
# A host with an optional port (a name, an IPv4 address or an [IPv6] literal), then the
# path, query or fragment, the end, or what closes a URI quoted in text ('uri', (uri), uri,).
_HOST = re.compile(
    r"(?:\[[0-9A-Za-z:.%]*\]|[A-Za-z0-9._~%-]+)(?::[0-9]*)?(?=[/?#'\"`<>()\[\],;]|$)"
)
# Characters a URI may hold unencoded in its user information (RFC 3986 3.2.1).
_ENCODED = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*")
_TOKEN_END = re.compile(r"\s")
_SECRETS: set[str] = set()


def split_uri(uri: str) -> tuple[str, str | None, str | None, str]:
    """``(scheme://, user, password, rest)`` of ``uri``, user and password as written (still
    percent-encoded if they were), ``None`` when absent; ``rest`` is ``host[:port][/path]``.
    The one parser of credentials in harness.

    >>> split_uri("postgresql://ann:p@ss/w#rd@db.example.org:5432/mlflow")
    ('postgresql://', 'ann', 'p@ss/w#rd', 'db.example.org:5432/mlflow')
    >>> split_uri("http://localhost:5000")
    ('http://', None, None, 'localhost:5000')
    """
    match = _SCHEME.match(uri)
    if not match:
        return "", None, None, uri
    head, body = match.group(), uri[match.end() :]
    at = len(body)
    while (at := body.rfind("@", 0, at)) >= 0:
        if _HOST.match(body, at + 1):
            user, sep, password = body[:at].partition(":")
            return head, user, password if sep else None, body[at + 1 :]
    return head, None, None, body


def _raw(part: str) -> str:
    """``part`` decoded when it is percent-encoded user information, else as written."""
    return urllib.parse.unquote(part) if _ENCODED.fullmatch(part) else part


def shown(value: Any, limit: int = 60) -> str:
    r"""``value`` as a message shows it: ``repr`` with every non-ASCII or invisible character
    escaped (two names that look alike print differently), cut to ``limit`` characters with
    the length of a longer string stated.

    >>> shown("probe\u200b-numbers")
    "'probe\\u200b-numbers'"
    >>> shown("x" * 100, limit=12)
    "'xxxxxxxx... (100 characters)"
    """
    text = ascii(value) if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return text[: limit - 3] + "..." + size


def mask(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` in it (as
    :func:`split_uri` reads it, up to the next space) and every secret registered
    by :func:`watch` replaced by ``***``.

    >>> mask("see http://ann:pa55@example.org:5000/#/x")
    'see http://ann:***@example.org:5000/#/x'
    >>> mask("postgresql://ann:p@ss@db/mlflow failed")
    'postgresql://ann:***@db/mlflow failed'
    """
    out, end = [], 0
    for match in _SCHEME.finditer(text):
        if match.start() < end:  # inside the URI just masked
            continue
        stop = _TOKEN_END.search(text, match.end())
        token_end = stop.start() if stop else len(text)
        head, user, password, rest = split_uri(text[match.start() : token_end])
        if password is None:
            continue
        out += [text[end : match.start()], f"{head}{user}:{MASK}@{rest}"]
        end = token_end
    text = "".join(out) + text[end:]
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def move_http_credentials(uri: str) -> str:
    """For an ``http(s)://user:password@host`` URI: set ``MLFLOW_TRACKING_USERNAME`` and
    ``MLFLOW_TRACKING_PASSWORD`` (in this process) and return the URI without them. For any
    other URI with a password (a database's): the URI with its user and password
    percent-encoded, so that a driver reads them whole. Any other URI unchanged.

    >>> move_http_credentials("https://mlflow.example.org:443/")
    'https://mlflow.example.org:443/'
    >>> move_http_credentials("postgresql://ann:p@ss@db/mlflow")
    'postgresql://ann:p%40ss@db/mlflow'
    """
    head, user, password, rest = split_uri(uri)
    if user is None:
        return uri
    if password is not None:
        _remember(_raw(password))
        _remember(password)
    if head.lower() not in ("http://", "https://"):
        if password is None:
            return uri
        encoded = urllib.parse.quote(_raw(password), safe="")
        return f"{head}{urllib.parse.quote(_raw(user), safe='')}:{encoded}@{rest}"
    if password is not None:
        os.environ["MLFLOW_TRACKING_PASSWORD"] = _raw(password)
    if user:
        os.environ["MLFLOW_TRACKING_USERNAME"] = _raw(user)
    return f"{head}{rest}"


def watch(uri: str) -> None:
    """Remember the password in ``uri`` and the secrets in MLflow's credential variables,
    and mask them in this process' standard output and error from now on."""
    _, _, password, _ = split_uri(uri)
    if password:
        _remember(_raw(password))
        _remember(password)
    for name in ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN"):
        if os.environ.get(name):
            _remember(os.environ[name])
    if _SECRETS or password is not None:
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
