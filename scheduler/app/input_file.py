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
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MAX_DEPTH", "InputFileError", "decode", "parse_documents", "read_documents"]

MAX_DEPTH = 100
"""Deepest nesting of collections accepted; a pod manifest needs about 12."""

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


class _Loader(yaml.SafeLoader):
    """SafeLoader with timestamps as strings, a depth limit and no duplicate keys."""

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
        return super().construct_mapping(node, deep=deep)


# Implicit resolvers are a class attribute keyed by first character: copy without timestamp.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_documents(path: Path, *, single: bool = False) -> list[object]:
    """Every document of the YAML file at ``path`` (``single``: exactly one, or none)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return parse_documents(decode(data, str(path)), str(path), single=single)


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
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # the reader checks every character here
        if single:
            return [loader.get_single_data()]
        docs: list[object] = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            docs.append(loader.get_data())
        return docs
    except yaml.MarkedYAMLError as exc:
        raise InputFileError(file, f"not valid YAML: {_marked(exc)}") from None
    except yaml.reader.ReaderError as exc:
        line, column = _position(text[: exc.position])
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


def _marked(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    problem = ", ".join(part for part in (exc.context, exc.problem) if part) or "invalid"
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return _one_line(f"{where}{problem}")


def _code(character: object) -> str:
    return f"U+{character:04X}" if isinstance(character, int) else repr(character)


def _position(prefix: str) -> tuple[int, int]:
    """1-based line and column of the character after ``prefix``."""
    return prefix.count("\n") + 1, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _one_line(text: str) -> str:
    return " ".join(text.split())
