"""The subset of Go's ``text/template`` that kube's scheduler_perf templates use.

kube renders every node, pod, PodGroup and ``createAny`` object from a YAML file through
``text/template`` with its own functions (``getTemplateFuncs`` in
``test/integration/scheduler_perf/operations.go``): ``AddInt``, ``DivideInt``, ``Mod``,
``Int``, ``JSON``, ... The runner reads those files from the pinned module as they are, so
it renders them the way Go does: actions ``{{pipeline}}``, ``{{if}}/{{else}}/{{end}}``,
``{{range}}`` (over an integer as Go 1.22 allows, or a list), variables (``$x := ...``,
block-scoped), pipes (``x | F``), parenthesised pipelines and the builtins ``or``, ``and``,
``not``, ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge`` and ``len``. A missing map key is
Go's zero value: false in ``if``, ``<no value>`` when printed.

Neighbours: :mod:`bench.scheduler_perf.gofuncs` (values and functions);
:mod:`bench.scheduler_perf.objects` renders templates into API objects.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bench.scheduler_perf.gofuncs import FUNCTIONS, MISSING, TemplateError, Value, go_print, truth

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

_ACTION = re.compile(r"\{\{(.*?)\}\}", re.S)
_TOKEN = re.compile(
    r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*")
    |(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
    |(?P<declare>:=)
    |(?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+|\.)
    |(?P<variable>\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<punct>[()|])
    )""",
    re.X,
)

# -- syntax tree ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Operand:
    kind: str  # field, variable, literal, func, pipeline
    value: object


@dataclass(frozen=True, slots=True)
class _Pipeline:
    declare: tuple[str, ...]
    commands: tuple[tuple[_Operand, ...], ...]


@dataclass(slots=True)
class _Block:
    """A list of nodes: text (str), an action (_Pipeline), or an _If/_Range."""

    nodes: list[object] = field(default_factory=list)


@dataclass(slots=True)
class _If:
    condition: _Pipeline
    then: _Block
    otherwise: _Block


@dataclass(slots=True)
class _Range:
    over: _Pipeline
    body: _Block
    otherwise: _Block


class _Scope:
    """Variables of the enclosing blocks; a block's declarations end with the block."""

    def __init__(self, root: Value) -> None:
        self.frames: list[dict[str, Value]] = [{"$": root}]

    def get(self, name: str) -> Value:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        raise TemplateError(f"undefined variable {name!r}")

    def declare(self, name: str, value: Value) -> None:
        self.frames[-1][name] = value


@dataclass(frozen=True)
class Template:
    """A parsed template; :meth:`render` executes it against a data map."""

    name: str
    root: _Block

    @classmethod
    def parse(cls, text: str, *, name: str = "template") -> Template:
        block, rest = _parse_block(_lex(text, name), 0, name, top=True)
        assert rest is None
        return cls(name, block)

    def render(self, data: Mapping[str, Value]) -> str:
        out: list[str] = []
        scope = _Scope(dict(data))
        try:
            _execute(self.root, dict(data), scope, out)
        except TemplateError as exc:
            raise TemplateError(f"{self.name}: {exc}") from None
        except (TypeError, ZeroDivisionError) as exc:
            raise TemplateError(f"{self.name}: {exc}") from None
        return "".join(out)


def _lex(text: str, name: str) -> list[tuple[str, str]]:
    """Text and action pieces in order: ("text", s) or ("action", inside)."""
    pieces: list[tuple[str, str]] = []
    pos = 0
    for match in _ACTION.finditer(text):
        if match.start() > pos:
            pieces.append(("text", text[pos : match.start()]))
        inside = match.group(1)
        if inside.startswith("-") or inside.endswith("-") or inside.lstrip().startswith("/*"):
            raise TemplateError(f"{name}: trim markers and comments are not supported")
        pieces.append(("action", inside.strip()))
        pos = match.end()
    if "{{" in text[pos:]:
        raise TemplateError(f"{name}: unclosed action")
    if pos < len(text):
        pieces.append(("text", text[pos:]))
    return pieces


def _parse_block(
    pieces: list[tuple[str, str]], start: int, name: str, *, top: bool = False
) -> tuple[_Block, tuple[int, str] | None]:
    """Nodes from ``start`` up to an ``else`` or ``end`` (returned with its index)."""
    block = _Block()
    i = start
    while i < len(pieces):
        kind, content = pieces[i]
        if kind == "text":
            block.nodes.append(content)
            i += 1
            continue
        word = content.split(None, 1)[0] if content else ""
        if word in ("end", "else"):
            if top:
                raise TemplateError(f"{name}: unexpected {{{{{content}}}}}")
            return block, (i, content)
        if word in ("if", "range"):
            node, i = _parse_control(pieces, i, name, word, content[len(word) :])
            block.nodes.append(node)
            continue
        if word in ("with", "template", "define", "block", "break", "continue"):
            raise TemplateError(f"{name}: {{{{{word}}}}} is not supported")
        block.nodes.append(_parse_pipeline(content, name))
        i += 1
    if not top:
        raise TemplateError(f"{name}: missing {{{{end}}}}")
    return block, None


def _parse_control(
    pieces: list[tuple[str, str]], i: int, name: str, word: str, rest: str
) -> tuple[object, int]:
    pipeline = _parse_pipeline(rest, name)
    then, stop = _parse_block(pieces, i + 1, name)
    assert stop is not None
    j, content = stop
    otherwise = _Block()
    if content.startswith("else"):
        tail = content[len("else") :].strip()
        if tail.startswith("if"):  # {{else if X}}: a nested if that ends with our {{end}}
            node, j = _parse_control(pieces, j, name, "if", tail[len("if") :])
            otherwise.nodes.append(node)
            j -= 1
        else:
            otherwise, stop = _parse_block(pieces, j + 1, name)
            assert stop is not None
            j, content = stop
            if content != "end":
                raise TemplateError(f"{name}: expected {{{{end}}}}, got {{{{{content}}}}}")
    if word == "if":
        return _If(pipeline, then, otherwise), j + 1
    return _Range(pipeline, then, otherwise), j + 1


def _tokens(text: str, name: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise TemplateError(f"{name}: cannot parse {text[pos:]!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


def _parse_pipeline(text: str, name: str) -> _Pipeline:
    tokens = _tokens(text, name)
    pipeline, pos = _pipeline_from(tokens, 0, name)
    if pos != len(tokens):
        raise TemplateError(f"{name}: unexpected {tokens[pos][1]!r} in {text!r}")
    return pipeline


def _pipeline_from(tokens: list[tuple[str, str]], pos: int, name: str) -> tuple[_Pipeline, int]:
    declare: tuple[str, ...] = ()
    if pos + 1 < len(tokens) and tokens[pos][0] == "variable" and tokens[pos + 1][0] == "declare":
        declare = (tokens[pos][1],)
        pos += 2
    commands: list[tuple[_Operand, ...]] = []
    command: list[_Operand] = []
    while pos < len(tokens):
        kind, text = tokens[pos]
        if kind == "punct" and text == ")":
            break
        pos += 1
        if kind == "punct" and text == "|":
            if not command:
                raise TemplateError(f"{name}: missing command before |")
            commands.append(tuple(command))
            command = []
        elif kind == "punct" and text == "(":
            inner, pos = _pipeline_from(tokens, pos, name)
            if pos >= len(tokens) or tokens[pos][1] != ")":
                raise TemplateError(f"{name}: unclosed (")
            pos += 1
            command.append(_Operand("pipeline", inner))
        else:
            command.append(_operand(kind, text, name))
    if not command:
        raise TemplateError(f"{name}: empty command")
    commands.append(tuple(command))
    return _Pipeline(declare, tuple(commands)), pos


def _operand(kind: str, text: str, name: str) -> _Operand:
    if kind == "string":
        return _Operand("literal", json.loads(text))
    if kind == "number":
        number = float(text)
        return _Operand("literal", int(text) if re.fullmatch(r"-?\d+", text) else number)
    if kind in ("field", "variable"):
        return _Operand(kind, text)
    if text in ("true", "false"):
        return _Operand("literal", text == "true")
    if text == "nil":
        return _Operand("literal", None)
    if text in FUNCTIONS:
        return _Operand("func", text)
    raise TemplateError(f'{name}: function "{text}" not defined')


# -- execution ------------------------------------------------------------------------------


def _execute(block: _Block, dot: Value, scope: _Scope, out: list[str]) -> None:
    for node in block.nodes:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, _Pipeline):
            value = _evaluate(node, dot, scope)
            if not node.declare:
                out.append(go_print(value))
        elif isinstance(node, _If):
            scope.frames.append({})
            chosen = node.then if truth(_evaluate(node.condition, dot, scope)) else node.otherwise
            _execute(chosen, dot, scope, out)
            scope.frames.pop()
        elif isinstance(node, _Range):
            _execute_range(node, dot, scope, out)


def _execute_range(node: _Range, dot: Value, scope: _Scope, out: list[str]) -> None:
    scope.frames.append({})
    over = _evaluate(_Pipeline((), node.over.commands), dot, scope)
    items: Sequence[Value]
    if isinstance(over, bool):
        raise TemplateError(f"range can't iterate over {go_print(over)}")
    if isinstance(over, int):
        items = range(over)
    elif isinstance(over, list | tuple):
        items = over
    elif isinstance(over, dict):
        items = [over[k] for k in sorted(over)]
    elif over is None or over is MISSING:
        items = []
    else:
        raise TemplateError(f"range can't iterate over {go_print(over)}")
    if not items:
        _execute(node.otherwise, dot, scope, out)
    for item in items:
        scope.frames.append({})
        if node.over.declare:
            scope.declare(node.over.declare[0], item)
        _execute(node.body, item, scope, out)
        scope.frames.pop()
    scope.frames.pop()


def _evaluate(pipeline: _Pipeline, dot: Value, scope: _Scope) -> Value:
    value: Value = MISSING
    for index, command in enumerate(pipeline.commands):
        piped = (value,) if index > 0 else ()
        value = _command(command, dot, scope, piped)
    if pipeline.declare:
        scope.declare(pipeline.declare[0], value)
    return value


def _command(
    command: tuple[_Operand, ...], dot: Value, scope: _Scope, piped: tuple[Value, ...]
) -> Value:
    head = command[0]
    if head.kind == "func":
        assert isinstance(head.value, str)
        args = [_operand_value(op, dot, scope) for op in command[1:]]
        return FUNCTIONS[head.value](*args, *piped)
    if len(command) > 1 or piped:
        raise TemplateError(f"can't give argument to non-function {head.value}")
    return _operand_value(head, dot, scope)


def _operand_value(operand: _Operand, dot: Value, scope: _Scope) -> Value:
    if operand.kind == "literal":
        return operand.value
    if operand.kind == "pipeline":
        assert isinstance(operand.value, _Pipeline)
        return _evaluate(operand.value, dot, scope)
    if operand.kind == "func":
        assert isinstance(operand.value, str)
        return FUNCTIONS[operand.value]()
    text = operand.value
    assert isinstance(text, str)
    if operand.kind == "variable":
        name, *path = text.split(".")
        return _lookup(scope.get(name), path)
    return _lookup(dot, [part for part in text.split(".") if part])


def _lookup(value: Value, path: list[str]) -> Value:
    for part in path:
        if isinstance(value, dict):
            value = value.get(part, MISSING)
        elif value is MISSING or value is None:
            return MISSING
        else:
            raise TemplateError(f"can't evaluate field {part} in {go_print(value)}")
    return value
