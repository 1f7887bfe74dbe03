"""bench.scheduler_perf.gotemplate renders kube's scheduler_perf templates as Go's
text/template does with kube's template functions."""

from __future__ import annotations

import pytest

from bench.scheduler_perf.gofuncs import TemplateError
from bench.scheduler_perf.gotemplate import Template


@pytest.mark.parametrize(
    ("text", "data", "want"),
    [
        pytest.param("name-{{.Index}}", {"Index": 7}, "name-7", id="field"),
        pytest.param("{{ .Index }}", {"Index": 3}, "3", id="spaces-inside-action"),
        pytest.param("{{.missing}}", {}, "<no value>", id="missing-key-prints-no-value"),
        pytest.param("{{.n}}", {"n": None}, "<nil>", id="nil-value-prints-nil"),
        pytest.param("{{.n}}", {"n": 1000.0}, "1000", id="whole-float-prints-as-go-%v"),
        pytest.param("{{.n}}", {"n": 0.5}, "0.5", id="fraction-prints-shortest"),
        pytest.param("{{.n}}", {"n": 1e21}, "1e+21", id="large-float-uses-exponent"),
        pytest.param("{{.b}}", {"b": True}, "true", id="bool-prints-lowercase"),
        pytest.param(
            "{{if .p}}{{AddInt 0 .p}}{{else}}1000{{end}}",
            {"p": 9999999.0},
            "9999999",
            id="if-set-adds-as-int",
        ),
        pytest.param(
            "{{if .p}}{{AddInt 0 .p}}{{else}}1000{{end}}", {}, "1000", id="if-missing-takes-else"
        ),
        pytest.param("{{if .s}}y{{else}}n{{end}}", {"s": ""}, "n", id="empty-string-is-false"),
        pytest.param(
            '{{if eq .m "single"}}single{{else}}all{{end}}',
            {"m": "single"},
            "single",
            id="eq-on-strings",
        ),
        pytest.param(
            "{{if .a}}a{{else if .b}}b{{else}}c{{end}}", {"b": 1}, "b", id="else-if-chain"
        ),
        pytest.param("{{DivideInt .Index 10}}", {"Index": 19}, "1", id="divide-int-truncates"),
        pytest.param("{{DivideInt 30000 .Count}}", {"Count": 7}, "4285", id="divide-by-count"),
        pytest.param("{{ Mod .Index 12 }}", {"Index": 29}, "5", id="mod"),
        pytest.param(
            "{{AddInt 8000 (Mod .Index (DivideInt .podsCount .nodesCount))}}",
            {"Index": 7, "podsCount": 1000.0, "nodesCount": 100.0},
            "8007",
            id="nested-parentheses",
        ),
        pytest.param("{{MultiplyInt 3 2.5}}", {}, "7", id="multiply-int-truncates"),
        pytest.param("{{SubtractFloat 1 0.25}}", {}, "0.75", id="subtract-float"),
        pytest.param(
            "{{$n := or .numDevices 3}}{{range ($n | Int)}}[{{.}}]{{end}}",
            {},
            "[0][1][2]",
            id="or-default-piped-to-int-ranged-over",
        ),
        pytest.param(
            "{{range $i := 2}}{{$i}}:{{$.Index}} {{end}}",
            {"Index": 9},
            "0:9 1:9 ",
            id="range-variable-and-root",
        ),
        pytest.param("{{$s := (or .selectors nil) | JSON}}{{$s}}", {}, "null", id="json-of-nil"),
        pytest.param(
            "{{$s := .sel | JSON}}{{$s}}",
            {"sel": [{"cel": {"expression": "a < b & c"}}]},
            '[{"cel":{"expression":"a < b & c"}}]',
            id="json-compact-no-html-escape",
        ),
        pytest.param(
            "{{range $i := 3}}{{if ge $i (1 | Int)}}x{{end}}{{end}}", {}, "xx", id="ge-in-range"
        ),
        pytest.param("{{range .none}}x{{else}}empty{{end}}", {}, "empty", id="range-else"),
    ],
)
def test_renders_as_go_text_template(text: str, data: dict[str, object], want: str) -> None:
    """Each construct the suite's templates use renders to what Go would write."""
    assert Template.parse(text).render(data) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{{.a", "unclosed action", id="unclosed"),
        pytest.param("{{if .a}}x", "missing {{end}}", id="missing-end"),
        pytest.param("{{end}}", "unexpected", id="stray-end"),
        pytest.param("{{Nope 1}}", 'function "Nope" not defined', id="unknown-function"),
        pytest.param("{{with .a}}x{{end}}", "not supported", id="with-unsupported"),
    ],
)
def test_bad_templates_are_refused_at_parse(text: str, message: str) -> None:
    """A construct outside the subset is an error naming it, not a wrong rendering."""
    with pytest.raises(TemplateError, match=message):
        Template.parse(text)


def test_execution_errors_name_the_template() -> None:
    """A failing function call reports the template's name."""
    template = Template.parse("{{DivideInt 1 .zero}}", name="pod.yaml")
    with pytest.raises(TemplateError, match=r"pod\.yaml: division by zero"):
        template.render({"zero": 0})
