"""Reading a suite file defensively: bounded UTF-8 text, bounded YAML, nothing echoed.

A suite file is at most :data:`MAX_FILE_BYTES` bytes of UTF-8 text whose name (and the name
of the file a link leads to) ends in ``.yaml`` or ``.yml``; its YAML nests at most
:data:`MAX_YAML_DEPTH` levels, expands (anchors and aliases counted at every use) to at most
:data:`MAX_YAML_NODES` values, holds one document and no duplicate mapping key, and is
built with ``yaml.safe_load`` semantics only. Every error names the file and the line, and
never prints the content of a file that is not a suite.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from harness.errors import SuiteError
from harness.redaction import shown

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "SEE_DOCS",
    "join_place",
    "parse_yaml",
    "read_suite_text",
]

#: A suite file is hand-written text; anything larger is refused before it is parsed.
MAX_FILE_BYTES = 1_000_000
#: Deepest nesting of YAML sequences and mappings (a suite needs about 8).
MAX_YAML_DEPTH = 32
#: Most YAML values a file may expand to, aliases counted at every use ("billion laughs").
MAX_YAML_NODES = 250_000
#: Where suite errors send the reader.
SEE_DOCS = "See docs/design.md, 'Suites'."
_SUFFIXES = (".yaml", ".yml")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_suite_text(path: Path, where: str) -> str:
    """The UTF-8 text of suite file ``path`` (a leading BOM dropped).

    :param where: the including file and ``include[i]``; prefixes the errors about the file.
    :raises SuiteError: when the file (or the file a link leads to) is not named ``.yaml`` or
        ``.yml``, is missing, a directory or not a regular file, is over
        :data:`MAX_FILE_BYTES`, or is not UTF-8; never echoing the content.
    """
    at = f"{where}: " if where else ""
    named = shown(str(path), 200)
    if path.suffix.lower() not in _SUFFIXES:
        raise SuiteError(
            f"{at}{named} is not a suite file: a suite file's name ends in .yaml or .yml."
        )
    try:  # a link is judged by the file it leads to (a.yaml -> /etc/passwd is no suite)
        target = path.resolve()
    except (OSError, ValueError, RuntimeError):  # a loop of links, a NUL: stat() says which
        target = path
    if target.suffix.lower() not in _SUFFIXES:
        raise SuiteError(
            f"{at}{named} is not a suite file: it links to a file whose name does not end in"
            " .yaml or .yml."
        )
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SuiteError(f"{at}suite file {named} does not exist.") from None
    except (OSError, ValueError) as err:  # ValueError: a NUL in the path
        reason = getattr(err, "strerror", None) or str(err)
        raise SuiteError(f"{at}cannot read suite file {named}: {reason}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise SuiteError(f"{at}{named} is a directory, not a suite file.")
    if not stat.S_ISREG(info.st_mode):
        raise SuiteError(f"{at}{named} is not a regular file (a device or a pipe?).")
    if info.st_size > MAX_FILE_BYTES:
        raise SuiteError(
            f"{at}{named} has {info.st_size:,} bytes; a suite file has at most"
            f" {MAX_FILE_BYTES:,}. {SEE_DOCS}"
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SuiteError(f"{at}cannot read suite file {named}: {err.strerror}.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise SuiteError(
            f"{path}: line {line}, column {column}: not UTF-8 text (byte"
            f" 0x{data[err.start]:02x}); save the file as UTF-8."
        ) from None
    return text.removeprefix("\ufeff")


def parse_yaml(label: str, text: str) -> Any:
    """``yaml.safe_load(text)`` with limits: nesting depth, expanded size (aliases counted at
    every use), one document, no duplicate keys.

    :param label: what the text is (a file name, ``--set x=1``); it starts every error.
    :returns: the document (None for an empty one).
    :raises SuiteError: naming ``label``, the line and column and what is wrong.
    """
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):  # events: no recursion, no expansion
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    mark = event.start_mark
                    raise SuiteError(
                        f"{label}: line {mark.line + 1}, column {mark.column + 1}: nested more"
                        f" than {MAX_YAML_DEPTH} levels deep; a suite needs far fewer."
                    )
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_nodes(label, node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = (err.problem or err.context or "").rstrip(".")
        raise SuiteError(f"{label}: {at}not valid YAML: {problem}.") from None
    except yaml.reader.ReaderError as err:  # a control character such as NUL
        line = text.count("\n", 0, err.position) + 1
        column = err.position - text.rfind("\n", 0, err.position)
        raise SuiteError(
            f"{label}: line {line}, column {column}: not valid YAML: character"
            f" #x{err.character:04x} is not allowed ({err.reason})."
        ) from None
    except yaml.YAMLError as err:
        raise SuiteError(f"{label}: not valid YAML: {type(err).__name__}.") from None


def _check_nodes(label: str, root: yaml.Node) -> None:
    """Refuse duplicate mapping keys, self-referencing aliases and documents expanding to
    more than :data:`MAX_YAML_NODES` values. Iterative, each node visited once."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, str, bool]] = [(root, "", False)]
    while stack:
        node, place, done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if done:
            visiting.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                raise SuiteError(
                    f"{label}: {place or 'the document'}: expands to more than"
                    f" {MAX_YAML_NODES:,} values (anchors and aliases repeat their content at"
                    " every use); a suite is far smaller."
                )
            continue
        if key in sizes:
            continue
        if key in visiting:
            line = node.start_mark.line + 1
            raise SuiteError(f"{label}: {place}: an alias refers to itself (line {line}).")
        visiting.add(key)
        stack.append((node, place, True))
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    line = k.start_mark.line + 1
                    if k.value in seen:
                        raise SuiteError(
                            f"{label}: {join_place(place, k.value)}: key {shown(k.value)} is given"
                            f" twice (lines {seen[k.value]} and {line}); keep one."
                        )
                    seen[k.value] = line
                stack.append((k, place, False))
                child = join_place(place, k.value) if isinstance(k, yaml.ScalarNode) else place
                stack.append((v, child, False))
        elif isinstance(node, yaml.SequenceNode):
            stack += [(c, f"{place}[{i}]", False) for i, c in enumerate(node.value)]


def join_place(place: str, key: str) -> str:
    """``place.key`` as messages name a place: invisible and non-ASCII characters of ``key``
    escaped (``run\\u200bs``), a key over 40 characters cut."""
    key = key if key.isascii() and key.isprintable() else ascii(key)[1:-1]  # 'run\u200bs'
    key = key if len(key) <= 40 else key[:37] + "..."
    return f"{place}.{key}" if place else key
