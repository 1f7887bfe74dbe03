"""``app.input_file``: YAML input files read as kube's tools read them, or one-line errors."""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

import pytest

from scheduler.app.input_file import MAX_DEPTH, InputFileError, decode, parse_documents
from scheduler.app.input_file import read_documents as read

if TYPE_CHECKING:
    from pathlib import Path

TEXT = "kind: Pod\nmetadata:\n  name: caf\u00e9\n"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        pytest.param(TEXT.encode("utf-16"), "is UTF-16 (byte-order mark)", id="utf-16-bom"),
        pytest.param(codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "is UTF-16", id="utf-16-be"),
        pytest.param(TEXT.encode("utf-32"), "is UTF-32 (byte-order mark)", id="utf-32-bom"),
        pytest.param(TEXT.encode("latin-1"), "byte 0xE9 at line 3, column 12", id="latin-1"),
        pytest.param(b"a\xc3(", "not UTF-8 text: byte 0xC3 at line 1, column 2", id="junk"),
    ],
)
def test_only_utf8_is_accepted_and_the_bad_byte_is_located(data: bytes, needle: str) -> None:
    with pytest.raises(InputFileError) as caught:
        decode(data, "f.yaml")
    assert str(caught.value).startswith("f.yaml: ")
    assert needle in str(caught.value)


def test_utf8_with_or_without_bom_decodes() -> None:
    assert decode(TEXT.encode(), "f") == TEXT
    assert decode(codecs.BOM_UTF8 + TEXT.encode(), "f") == TEXT


def test_timestamps_stay_strings() -> None:
    """As sigs.k8s.io/yaml leaves them: the model checks them, YAML does not convert them."""
    [doc] = parse_documents("a: 2020-01-02T03:04:05Z\nb: 2020-13-45\nc: 2020-01-02\n", "f")
    assert doc == {"a": "2020-01-02T03:04:05Z", "b": "2020-13-45", "c": "2020-01-02"}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), id="flow-lists"),
        pytest.param("a: " + "{b: " * (MAX_DEPTH + 1) + "}" * (MAX_DEPTH + 1), id="flow-maps"),
        pytest.param(
            "".join(f"{' ' * i}k{i}:\n" for i in range(MAX_DEPTH + 1)) + " " * 200 + "v\n",
            id="block-maps",
        ),
        pytest.param("[" * 20_000, id="unterminated-20000"),
    ],
)
def test_nesting_is_limited_without_recursion_error(text: str) -> None:
    with pytest.raises(InputFileError) as caught:
        parse_documents(text, "f")
    assert "\n" not in str(caught.value)
    assert "nested deeper than" in str(caught.value) or "not valid YAML" in str(caught.value)


def test_nesting_at_the_limit_loads() -> None:
    depth = MAX_DEPTH - 1  # the document's own mapping is one level
    [doc] = parse_documents("a: " + "[" * depth + "]" * depth, "f")
    assert isinstance(doc, dict)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param("a: 1\na: 2\n", "line 2, column 1: key 'a' appears twice", id="dup-key"),
        pytest.param("a: [1\n", "line 2, column 1:", id="unclosed"),
        pytest.param("a: b: c\n", "line 1, column 5: mapping values are not allowed", id="mv"),
        pytest.param("a: \x07\n", "character U+0007 at line 1, column 4 is not allowed", id="bel"),
        pytest.param("a: *nope\n", "found undefined alias", id="alias"),
        pytest.param(
            "a: !!python/object:os.system x\n", "could not determine a constructor", id="tag"
        ),
    ],
)
def test_yaml_errors_are_one_line_with_position(text: str, needle: str) -> None:
    with pytest.raises(InputFileError) as caught:
        parse_documents(text, "f.yaml")
    message = str(caught.value)
    assert message.startswith("f.yaml: not valid YAML: ")
    assert "\n" not in message
    assert needle in message


def test_merge_keys_are_not_duplicates() -> None:
    [doc] = parse_documents("base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  x: 3\n", "f")
    assert doc["over"] == {"x": 3, "y": 2}  # type: ignore[index]


def test_read_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(InputFileError, match=r"missing.yaml: cannot read: No such file"):
        read(missing)
    two = tmp_path / "two.yaml"
    two.write_text("a: 1\n---\nb: 2\n")
    assert read(two) == [{"a": 1}, {"b": 2}]
    with pytest.raises(InputFileError, match=r"two.yaml: not valid YAML: .*single document"):
        read(two, single=True)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read(empty, single=True) == [None]
