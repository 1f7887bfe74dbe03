"""Read a YAML input file (a ``simulate`` snapshot, a ``--config`` file) or fail in one line.

Whatever the bytes, the result is the parsed documents or an :class:`InputFileError` whose
message is one line naming the file (and the line and column where there is one): never a
traceback. The choices, and why:

* **Encoding**: UTF-8, with or without a byte-order mark, as kube's tools write and read.
  Anything else is rejected with where the first bad byte is; a UTF-16 or UTF-32 file
  (recognised by its byte-order mark) is named as such, so the fix is obvious.
* **Timestamps stay strings**, as sigs.k8s.io/yaml (go-yaml into ``interface{}``) leaves
  them: ``creationTimestamp: 2020-01-02T03:04:05Z`` is text that the model checks as
  RFC 3339, and ``2020-13-45`` is a field error there, not a crash of the YAML library.
* **Nesting depth** is limited (:data:`MAX_DEPTH`): PyYAML composes recursively, and a
  file of ten thousand ``[`` would otherwise end in a RecursionError.
* **Duplicate keys** in a mapping are an error, as in kube's strict decoding (the last
  value silently winning hides typos).
* **Truncated**: an error where the text ends (an unclosed list, a JSON object cut short)
  says the file ends before its document does, the usual sign of a cut-off copy.
* **Speed**: a document that is JSON (what ``kubectl get -o json`` writes) is read by
  :func:`json.loads` under the same rules, 100 times faster than YAML; anything else, or
  JSON that ``json`` refuses (the YAML reader then names the line and column), by PyYAML's
  libyaml parser (``CSafeLoader``) when the installed PyYAML has it, else its pure-Python
  one. Both YAML loaders apply the same three rules above.
* ``-`` is standard input, as for kubectl.
"""

from __future__ import annotations

import codecs
import json
import sys
from typing import TYPE_CHECKING, Any, ClassVar

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_DEPTH",
    "STDIN",
    "InputFileError",
    "decode",
    "display_name",
    "parse_documents",
    "read_documents",
]

MAX_DEPTH = 100
"""Deepest nesting of collections accepted; a pod manifest needs about 12."""

STDIN = "-"
"""The file name that means standard input."""
_STDIN_NAME = "<stdin>"
_TRUNCATED = "the file ends before its document does (truncated?)"

_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),  # before UTF-16: its BOM starts with UTF-16 LE's
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class InputFileError(ValueError):
    """An input file we cannot read as YAML; the message is one line naming the file."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message


class _Rules:
    """Duplicate keys refused and timestamps left as strings, for either YAML loader."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                    continue
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise ConstructorError(
                        None, None, f"key {key_node.value!r} appears twice", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

    # Implicit resolvers are a class attribute keyed by first character: without timestamp.
    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


class _PyLoader(_Rules, yaml.SafeLoader):
    """The pure-Python SafeLoader; its composer recurses, so depth is limited as it goes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_CLoader: type[Any] | None = None
if yaml.__with_libyaml__:

    class _CLoader(_Rules, yaml.CSafeLoader):  # type: ignore[no-redef]
        """libyaml's parser and composer (which stop at 1000 levels), the depth limit
        checked on each document's node tree before it is constructed."""

        def construct_document(self, node: Any) -> Any:
            _check_node_depth(node)
            return super().construct_document(node)


def _check_node_depth(root: Any) -> None:
    """ComposerError at the first node nested deeper than MAX_DEPTH (an alias's node is
    checked once, where it is first met, as the pure-Python composer checks it)."""
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if depth > MAX_DEPTH:
            message = f"nested deeper than {MAX_DEPTH} levels"
            raise ComposerError(None, None, message, node.start_mark)
        if isinstance(node, yaml.SequenceNode):
            stack += [(child, depth + 1) for child in node.value]
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += [(key, depth + 1), (value, depth + 1)]


def display_name(path: Path) -> str:
    """How messages name the input: the path, or ``<stdin>`` for ``-``."""
    return _STDIN_NAME if str(path) == STDIN else str(path)


def read_documents(path: Path, *, single: bool = False) -> list[object]:
    """Every document of the YAML (or JSON) file at ``path``, ``-`` for standard input
    (``single``: exactly one, or none)."""
    name = display_name(path)
    try:
        data = sys.stdin.buffer.read() if str(path) == STDIN else path.read_bytes()
    except OSError as exc:
        raise InputFileError(name, f"cannot read: {exc.strerror or exc}") from None
    return parse_documents(decode(data, name), name, single=single)


def decode(data: bytes, file: str) -> str:
    """UTF-8 text (a leading byte-order mark dropped); InputFileError naming the bad byte."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            raise InputFileError(file, f"is {name} (byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data[: exc.start].decode("utf-8", errors="replace"))
        raise InputFileError(
            file,
            f"not UTF-8 text: byte 0x{data[exc.start]:02X} at line {line}, column {column}",
        ) from None
    return text.removeprefix("\ufeff")


def parse_documents(text: str, file: str, *, single: bool = False) -> list[object]:
    """The YAML documents of ``text``; InputFileError with a one-line reason otherwise."""
    if text.lstrip()[:1] == "{":
        doc = _json_document(text, file)
        if doc is not _NOT_JSON:
            return [doc]
    loader_class = _CLoader or _PyLoader
    loader: Any = None
    try:
        loader = loader_class(text)  # the reader checks every character here
        if single:
            return [loader.get_single_data()]
        docs: list[object] = []
        while loader.check_data():
            docs.append(loader.get_data())
        return docs
    except yaml.MarkedYAMLError as exc:
        raise InputFileError(file, f"not valid YAML: {_marked(exc, text)}") from None
    except yaml.reader.ReaderError as exc:
        # libyaml counts the position in UTF-8 bytes, the pure-Python reader in characters
        before = text.encode()[: exc.position].decode(errors="replace") if _CLoader else text
        line, column = _position(before if _CLoader else text[: exc.position])
        raise InputFileError(
            file,
            f"not valid YAML: character {_code(exc.character)} at line {line}, "
            f"column {column} is not allowed",
        ) from None
    except yaml.YAMLError as exc:
        raise InputFileError(file, f"not valid YAML: {_one_line(str(exc))}") from None
    except RecursionError:  # a safety net: the depth limit should make this unreachable
        raise InputFileError(file, f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        if loader is not None:
            loader.dispose()


_NOT_JSON = object()
"""What :func:`_json_document` returns when the YAML reader should have the text."""


def _json_document(text: str, file: str) -> object:
    """The one JSON object of ``text`` under the YAML rules, or ``_NOT_JSON`` for the YAML
    reader to read (YAML that merely starts with ``{``) or to locate what ``json`` refused
    (a duplicate key, ``NaN``). A cut-off JSON object is named truncated here."""
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            line, column = _position(text[: exc.pos])
            raise InputFileError(
                file, f"not valid JSON: line {line}, column {column}: {exc.msg}; {_TRUNCATED}"
            ) from None
        return _NOT_JSON
    except (ValueError, RecursionError):
        return _NOT_JSON
    if _too_deep(doc):  # the YAML reader says where
        return _NOT_JSON
    return doc


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("duplicate key")
    return mapping


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN and Infinity are not JSON, nor YAML numbers


def _too_deep(doc: object) -> bool:
    """Whether a value nests deeper than MAX_DEPTH, counted as the YAML composer counts
    (the document's own collection is level 1, a key or item one below its collection)."""
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if children and depth >= MAX_DEPTH:
            return True
        stack += [(child, depth + 1) for child in children if isinstance(child, dict | list)]
    return False


def _marked(exc: yaml.MarkedYAMLError, text: str) -> str:
    mark = exc.problem_mark or exc.context_mark
    problem = ", ".join(part for part in (exc.context, exc.problem) if part) or "invalid"
    if "exceeded maximum nesting depth" in problem:  # libyaml's own limit (1000 levels)
        problem = f"nested deeper than {MAX_DEPTH} levels"
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    at_end = mark is not None and (mark.line + 1, mark.column + 1) >= _position(text.rstrip())
    return _one_line(f"{where}{problem}" + (f"; {_TRUNCATED}" if at_end else ""))


def _code(character: object) -> str:
    return f"U+{character:04X}" if isinstance(character, int) else repr(character)


def _position(prefix: str) -> tuple[int, int]:
    """1-based line and column of the character after ``prefix``."""
    return prefix.count("\n") + 1, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _one_line(text: str) -> str:
    return " ".join(text.split())
