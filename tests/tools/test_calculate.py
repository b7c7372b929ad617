"""calculate: exact decimal arithmetic over an ast whitelist (no eval), and the errors it refuses with."""

from __future__ import annotations

from decimal import Decimal

import pytest
from langchain_core.messages import ToolMessage

from stratagraph.tools.calculate import (
    MAX_EXPONENT,
    CalculationError,
    apply,
    calculate_tool,
    evaluate,
    format_decimal,
    to_decimal,
)


def value(expression: str) -> str:
    return format_decimal(evaluate(expression))


@pytest.fixture(scope="module")
def tool():
    return calculate_tool(None)  # calculate reads no store


def call(tool, **args) -> ToolMessage:
    msg = tool.invoke({"name": "calculate", "args": args, "id": "c1", "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    return msg


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("0.1 + 0.2", "0.3"),
        ("1.1 * 3", "3.3"),
        ("(1250.5 - 980) / 980 * 100", "27.60204081632653061224489795918367"),
        ("-2 ** 2", "-4"),
        ("(-2) ** 2", "4"),
        ("2 ** -2", "0.25"),
        ("2 ** 0.5", "1.414213562373095048801688724209698"),
        ("7 % 3", "1"),
        ("-7 % 3", "2"),  # floor modulo, as in Python
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("+5 - -5", "10"),
        ("1_000 * 3", "3000"),
        ("1e3 + 0.5", "1000.5"),
        ("1 / 3", "0.3333333333333333333333333333333333"),
        ("10 / 4", "2.5"),
        ("100.00 - 0.50", "99.5"),
        ("3 - 3.0", "0"),
        ("10 ** 30", "1000000000000000000000000000000"),
        ("10 ** 50", "1E+50"),
    ],
)
def test_arithmetic_is_exact(expression, expected):
    assert value(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("sum([1.1, 2.2, 3.3])", "6.6"),
        ("sum(1, [2, 3], [[4]])", "10"),
        ("sum([])", "0"),
        ("mean([1, 2, 3, 4])", "2.5"),
        ("min([3, 1.5], 2)", "1.5"),
        ("max(3, [7.25, -1])", "7.25"),
        ("count([1, 2], [3])", "3"),
        ("round(2.675, 2)", "2.68"),  # half up, on the exact decimal (a float would give 2.67)
        ("round(2.5)", "3"),
        ("round(1234.5, -2)", "1200"),
        ("abs(-3.5)", "3.5"),
        ("pct_change(80, 100)", "25"),
        ("pct_change(100, 80)", "-20"),
        ("pct_change(-50, -25)", "50"),  # relative to |old|: a rise is positive
        ("ratio(1, 8)", "0.125"),
        ("ratio(sum([1, 2]), count([1, 2]))", "1.5"),
    ],
)
def test_functions_over_numbers_and_lists(expression, expected):
    assert value(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", "unknown function '__import__'"),
        ("__import__('os').system('true')", "attribute access"),
        ("(1).real", "attribute access"),
        ("x + 1", "unknown name 'x'"),
        ("os", "unknown name 'os'"),
        ("(lambda: 1)()", "lambda not allowed; only calls to the functions"),
        ("lambda: 1", "lambda not allowed"),
        ("[1, 2][0]", "indexing"),
        ("1 < 2", "comparisons"),
        ("'1' + 1", "text"),
        ("True + 1", "bool"),
        ("1j * 2", "complex"),
        ("[x for x in [1]]", "comprehensions"),
        ("sum([1], start=2)", "positional arguments only"),
        ("open('f')", "unknown function 'open'"),
        ("sum.__class__", "attribute access"),
        ("1 / 0", "division by zero"),
        ("1 % 0", "modulo by zero"),
        ("ratio(1, 0)", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("pct_change(0, 5)", "pct_change from 0"),
        ("10 ** 100000", "too large"),
        ("9 ** 9 ** 9", "too large"),
        ("2 ** 1001", f"at most {MAX_EXPONENT}"),
        ("(10 ** 500) ** 500", "too large"),
        ("(-8) ** 0.5", "fractional power"),
        ("[1, 2] + 1", "cannot apply + to a list"),
        ("[1, 2]", "gives a list"),
        ("1, 234", "gives a list"),
        ("mean([])", "mean() of no numbers"),
        ("round(1.5, 0.5)", "whole number"),
        ("abs(1, 2)", "abs() takes 1 arguments"),
        ("15% of 200", "cannot parse"),
        ("", "empty"),
        ("1 +" + " 1 +" * 1500 + " 1", "longer than"),
        ("-" * 1500 + "1", "too long|nested too deeply"),
    ],
)
def test_refuses_everything_else_with_a_clear_message(expression, message):
    with pytest.raises(CalculationError) as err:
        evaluate(expression)
    assert any(m in str(err.value) for m in message.split("|")), str(err.value)


def test_numbers_from_values():
    assert to_decimal(0.1) == Decimal("0.1")  # floats by their shortest repr
    assert to_decimal("1,234.50") == Decimal("1234.50")
    assert to_decimal("$12") == Decimal(12)
    for bad in ("12 apples", "nan", "inf", True, None, "1,23"):
        with pytest.raises(CalculationError):
            to_decimal(bad)
    assert format_decimal(apply("sum", [[0.1, 0.2], "0.3"])) == "0.6"
    assert format_decimal(apply("pct_change", [980, "1,250.5"])) == "27.60204081632653061224489795918367"
    with pytest.raises(CalculationError, match="takes numbers here, not a list"):
        apply("abs", [[1, 2]])


def test_tool_returns_result_and_artifact(tool):
    msg = call(tool, expression="0.1 + 0.2")
    assert msg.status == "success" and msg.content == "0.1 + 0.2 = 0.3"
    assert msg.artifact == {"expression": "0.1 + 0.2", "result": "0.3"}
    msg = call(tool, operation="sum", values=[[1.5, 2.25], 3])
    assert msg.artifact["result"] == "6.75" and msg.content == "sum([1.5, 2.25], 3) = 6.75"
    msg = call(tool, operation="pct_change", values=[80, 100])
    assert msg.artifact["result"] == "25"
    assert tool.invoke({"expression": "2 * 21"}) == "2 * 21 = 42"
    assert tool.invoke("mean([1, 2])") == "mean([1, 2]) = 1.5"


def test_tool_errors_are_messages_not_exceptions(tool):
    for args, message in [
        ({"expression": "__import__('os').system('echo hacked')"}, "cannot calculate: attribute access"),
        ({"expression": "(lambda: 1)()"}, "cannot calculate: lambda not allowed"),
        ({"expression": "2 ** 99999"}, "cannot calculate: exponent 99999 is too large"),
        ({"expression": "1 / (2 - 2)"}, "cannot calculate: division by zero"),
        ({"expression": "1 + 1", "operation": "sum", "values": [1]}, "either 'expression' or 'operation'"),
        ({}, "either 'expression' or 'operation'"),
        ({"operation": "pow", "values": [2, 3]}, "operation"),
        ({"operation": "sum", "values": ["ten"]}, "'ten' is not a number"),
    ]:
        msg = call(tool, **args)
        assert msg.status == "error", args
        assert message in msg.content, (args, msg.content)
