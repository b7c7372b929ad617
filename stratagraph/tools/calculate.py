"""``calculate``: exact decimal arithmetic for a model, so sums and comparisons are computed, never guessed
(DESIGN.md: "numbers are first-class ... computed exactly, never by an LLM"; KAG §2.3's ``Math`` operator of
the logical form).

An expression is parsed with :mod:`ast` and evaluated by walking a whitelist of node types; nothing is ever
passed to ``eval`` or ``exec``. Allowed:

* numbers (read from their source text, so ``0.1`` is exactly one tenth), lists ``[1, 2, 3]``;
* ``+ - * / // % **``, parentheses, unary ``-`` and ``+``; ``%`` and ``//`` are floor modulo and floor
  division as in Python;
* the functions ``sum mean min max count`` (over numbers and lists, flattened), ``round(x, places=0)``
  (half up), ``abs(x)``, ``pct_change(old, new)`` = ``(new - old) / |old| * 100`` and ``ratio(a, b)`` =
  ``a / b``, ``difference(a, b)`` = ``a - b``.

Everything else (names, attributes, subscripts, comparisons, lambdas, strings, keyword arguments, unknown
functions) is refused with a message saying what is allowed; so are division by zero, exponents above
``MAX_EXPONENT`` and results beyond ``MAX_RESULT_DIGITS`` digits. Arithmetic runs at ``PRECISION``
significant digits (IEEE decimal128), so ``1/3`` is rounded there and everything short is exact.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from decimal import (
    ROUND_FLOOR,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    DecimalException,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    localcontext,
)
from typing import Literal, Union

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field, model_validator

from stratagraph.retrieval import RetrievalContext
from stratagraph.tools.common import ToolOutput, build_tool

PRECISION = 34
MAX_EXPRESSION_CHARS = 2000
MAX_NODES = 1000  # AST nodes in one expression
MAX_EXPONENT = 1000  # |y| in x ** y
MAX_RESULT_DIGITS = 10_000  # decimal exponent of any intermediate result
MAX_ROUND_PLACES = PRECISION

Value = Union[Decimal, list["Value"]]  # noqa: UP007 - a recursive alias


class CalculationError(ValueError):
    """An expression that cannot be computed; the message says why and what is allowed."""


ALLOWED = (
    "numbers, lists [..], + - * / // % **, parentheses and the functions "
    "sum, mean, min, max, count, round, abs, pct_change, ratio, difference"
)


def _context() -> Context:
    return Context(
        prec=PRECISION,
        rounding=ROUND_HALF_EVEN,
        Emax=MAX_RESULT_DIGITS,
        Emin=-MAX_RESULT_DIGITS,
        traps=[InvalidOperation, DivisionByZero, Overflow],
    )


# ------------------------------------------------------------------------------------------ numbers

_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_CURRENCY = "$€£¥"


def to_decimal(value: object) -> Decimal:
    """A number given as int, float (its shortest repr: ``0.1`` stays one tenth), Decimal or numeric text
    (``"1,234.5"``, ``"$12"``)."""
    if isinstance(value, bool):
        raise CalculationError(f"{value!r} is not a number")
    if isinstance(value, Decimal):
        out = value
    elif isinstance(value, int):
        out = Decimal(value)
    elif isinstance(value, float):
        out = Decimal(repr(value))
    elif isinstance(value, str):
        text = value.strip().strip(_CURRENCY).strip().replace(" ", "")
        if _GROUPED.match(text):
            text = text.replace(",", "")
        try:
            out = Decimal(text)
        except InvalidOperation:
            raise CalculationError(f"{value!r} is not a number") from None
    else:
        raise CalculationError(f"{value!r} is not a number")
    if not out.is_finite():
        raise CalculationError(f"{value!r} is not a finite number")
    return out


def format_decimal(value: Decimal) -> str:
    """Plain notation without trailing zeros (``0.30`` -> ``0.3``, ``1E+2`` -> ``100``); scientific beyond
    40 digits either side of the point."""
    if value.is_zero():
        return "0"
    norm = value.normalize(_context())
    if -40 < norm.adjusted() < 40:
        return format(norm, "f")
    return str(norm)


# ------------------------------------------------------------------------------------------ functions


def _flatten(values: Sequence[Value]) -> list[Decimal]:
    out: list[Decimal] = []
    for v in values:
        if isinstance(v, list):
            out.extend(_flatten(v))
        else:
            out.append(v)
    return out


def _number(name: str, value: Value) -> Decimal:
    if isinstance(value, list):
        raise CalculationError(f"{name} takes numbers here, not a list")
    return value


def _arity(name: str, args: Sequence[Value], low: int, high: int) -> None:
    if not low <= len(args) <= high:
        want = str(low) if low == high else f"{low} to {high}"
        raise CalculationError(f"{name}() takes {want} arguments, got {len(args)}")


def _sum(*args: Value) -> Decimal:
    return sum(_flatten(args), Decimal(0))


def _nonempty(name: str, args: Sequence[Value]) -> list[Decimal]:
    values = _flatten(args)
    if not values:
        raise CalculationError(f"{name}() of no numbers is undefined")
    return values


def _mean(*args: Value) -> Decimal:
    values = _nonempty("mean", args)
    return sum(values, Decimal(0)) / Decimal(len(values))


def _min(*args: Value) -> Decimal:
    return min(_nonempty("min", args))


def _max(*args: Value) -> Decimal:
    return max(_nonempty("max", args))


def _count(*args: Value) -> Decimal:
    return Decimal(len(_flatten(args)))


def _round(*args: Value) -> Decimal:
    _arity("round", args, 1, 2)
    x = _number("round", args[0])
    places = _number("round", args[1]) if len(args) == 2 else Decimal(0)
    if places != places.to_integral_value() or abs(places) > MAX_ROUND_PLACES:
        raise CalculationError(f"round() places must be a whole number from -{MAX_ROUND_PLACES} to {MAX_ROUND_PLACES}")
    try:
        return x.quantize(Decimal(1).scaleb(-int(places)), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        raise CalculationError(f"cannot round {format_decimal(x)} to {int(places)} places within {PRECISION} digits") from None


def _abs(*args: Value) -> Decimal:
    _arity("abs", args, 1, 1)
    return abs(_number("abs", args[0]))


def _pct_change(*args: Value) -> Decimal:
    _arity("pct_change", args, 2, 2)
    old, new = _number("pct_change", args[0]), _number("pct_change", args[1])
    if old.is_zero():
        raise CalculationError("pct_change from 0 is undefined")
    return (new - old) / abs(old) * Decimal(100)


def _difference(*args: Value) -> Decimal:
    _arity("difference", args, 2, 2)
    return _number("difference", args[0]) - _number("difference", args[1])


def _ratio(*args: Value) -> Decimal:
    _arity("ratio", args, 2, 2)
    return _divide(_number("ratio", args[0]), _number("ratio", args[1]))


FUNCTIONS: dict[str, Callable[..., Decimal]] = {
    "sum": _sum,
    "mean": _mean,
    "min": _min,
    "max": _max,
    "count": _count,
    "round": _round,
    "abs": _abs,
    "pct_change": _pct_change,
    "ratio": _ratio,
    "difference": _difference,
}


# ------------------------------------------------------------------------------------------ operators


def _divide(a: Decimal, b: Decimal) -> Decimal:
    if b.is_zero():
        raise CalculationError("division by zero")
    return a / b


def _floordiv(a: Decimal, b: Decimal) -> Decimal:
    return _divide(a, b).to_integral_value(rounding=ROUND_FLOOR)


def _mod(a: Decimal, b: Decimal) -> Decimal:
    if b.is_zero():
        raise CalculationError("modulo by zero")
    return a - b * _floordiv(a, b)


def _power(base: Decimal, exp: Decimal) -> Decimal:
    if abs(exp) > MAX_EXPONENT:
        raise CalculationError(f"exponent {format_decimal(exp)} is too large (at most {MAX_EXPONENT})")
    if base.is_zero():
        if exp < 0:
            raise CalculationError("division by zero (0 to a negative power)")
        return Decimal(1) if exp.is_zero() else Decimal(0)
    integral = exp == exp.to_integral_value()
    if base < 0 and not integral:
        raise CalculationError("a negative number to a fractional power is not a real number")
    # order of magnitude of the result: |exp| * log10(|base|)
    magnitude = abs(exp) * abs(abs(base).log10(_context()))
    if magnitude > MAX_RESULT_DIGITS:
        raise CalculationError(f"the result of {format_decimal(base)} ** {format_decimal(exp)} is too large")
    return base ** (exp.to_integral_value() if integral else exp)


_BINARY: dict[type[ast.operator], Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: _divide,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _power,
}
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}

_REFUSED = {
    ast.Attribute: "attribute access (x.y)",
    ast.Subscript: "indexing (x[i])",
    ast.Lambda: "lambda",
    ast.Compare: "comparisons",
    ast.BoolOp: "and / or",
    ast.IfExp: "conditional expressions",
    ast.Dict: "dictionaries",
    ast.Set: "sets",
    ast.ListComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.JoinedStr: "strings",
    ast.NamedExpr: "assignment (:=)",
    ast.Await: "await",
    ast.Starred: "unpacking (*x)",
    ast.Slice: "slices",
}


# ------------------------------------------------------------------------------------------ evaluation


class _Evaluator:
    def __init__(self, source: str) -> None:
        self.source = source

    def eval(self, node: ast.AST) -> Value:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Name):
            raise CalculationError(f"unknown name {node.id!r}; only {ALLOWED} are allowed")
        what = _REFUSED.get(type(node), type(node).__name__)
        raise CalculationError(f"{what} not allowed; only {ALLOWED} are allowed")

    def _constant(self, node: ast.Constant) -> Decimal:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "text" if isinstance(value, str) else type(value).__name__
            raise CalculationError(f"{kind} ({value!r}) is not allowed; only {ALLOWED} are allowed")
        segment = ast.get_source_segment(self.source, node) or ""
        try:
            return Decimal(segment.replace("_", ""))  # the literal as written: 0.1 is exactly one tenth
        except InvalidOperation:
            return to_decimal(value)  # 0x10, 1_000j is refused above

    def _binary(self, node: ast.BinOp) -> Decimal:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise CalculationError(f"operator {type(node.op).__name__} not allowed; only {ALLOWED} are allowed")
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(left, list) or isinstance(right, list):
            raise CalculationError(
                f"cannot apply {_SYMBOL[type(node.op)]} to a list; reduce it first with sum, mean, min, max or count"
            )
        return op(left, right)

    def _unary(self, node: ast.UnaryOp) -> Decimal:
        value = self.eval(node.operand)
        if isinstance(value, list):
            raise CalculationError("cannot negate a list")
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        raise CalculationError(f"operator {type(node.op).__name__} not allowed; only {ALLOWED} are allowed")

    def _call(self, node: ast.Call) -> Decimal:
        if not isinstance(node.func, ast.Name):
            what = _REFUSED.get(type(node.func), "calling an expression")
            raise CalculationError(f"{what} not allowed; only calls to the functions {', '.join(FUNCTIONS)} are allowed")
        fn = FUNCTIONS.get(node.func.id)
        if fn is None:
            raise CalculationError(f"unknown function {node.func.id!r}; the functions are {', '.join(FUNCTIONS)}")
        if node.keywords:
            raise CalculationError(f"{node.func.id}() takes positional arguments only")
        return fn(*[self.eval(a) for a in node.args])


def _checked(value: Value, what: str) -> Decimal:
    if isinstance(value, list):
        raise CalculationError(f"{what} gives a list, not a number; reduce it with sum, mean, min, max or count")
    return value


def evaluate(expression: str) -> Decimal:
    """The exact value of an arithmetic expression (see the module docstring for what is allowed)."""
    source = expression.strip()
    if not source:
        raise CalculationError("the expression is empty")
    if len(source) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise CalculationError(
            f"cannot parse {source!r}: {exc.msg}. Write plain arithmetic ({ALLOWED}); "
            "% is modulo, use pct_change(old, new) for percentage changes"
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError(f"the expression is too long (more than {MAX_NODES} parts)")
    return _compute(lambda: _Evaluator(source).eval(tree.body), "the expression")


def apply(operation: str, values: Sequence[object]) -> Decimal:
    """``operation`` (one of :data:`FUNCTIONS`) over ``values``: numbers or lists of numbers."""
    fn = FUNCTIONS.get(operation)
    if fn is None:
        raise CalculationError(f"unknown operation {operation!r}; the operations are {', '.join(FUNCTIONS)}")
    args: list[Value] = [[to_decimal(x) for x in v] if isinstance(v, list) else to_decimal(v) for v in values]
    return _compute(lambda: fn(*args), f"{operation}()")


def _compute(run: Callable[[], Value], what: str) -> Decimal:
    try:
        with localcontext(_context()):
            return _checked(run(), what)
    except RecursionError:
        raise CalculationError("the expression is nested too deeply") from None
    except DivisionByZero:
        raise CalculationError("division by zero") from None
    except Overflow:
        raise CalculationError("the result is too large") from None
    except DecimalException as exc:
        raise CalculationError(f"invalid arithmetic: {type(exc).__name__}") from None


# ------------------------------------------------------------------------------------------ the tool

Operation = Literal["sum", "mean", "min", "max", "count", "round", "abs", "pct_change", "ratio", "difference"]
Number = int | float | str


class CalculateArgs(BaseModel):
    expression: str | None = Field(
        None,
        description="An arithmetic expression, e.g. '(1250.5 - 980) / 980 * 100', 'sum([12.5, 7, 3.25])' or "
        "'pct_change(980, 1250.5)'. Numbers, lists [..], + - * / // % ** (% is modulo), parentheses and the "
        "functions sum, mean, min, max, count, round(x, places), abs, pct_change(old, new), ratio(a, b).",
    )
    operation: Operation | None = Field(
        None,
        description="Instead of an expression: a function to apply to 'values' (sum, mean, min, max, count "
        "take numbers or lists; round takes x and places; abs one number; pct_change old and new; ratio a "
        "and b).",
    )
    values: list[Number | list[Number]] = Field(
        default_factory=list,
        description="The arguments of 'operation': numbers (or numeric strings like '1,234.50') or lists of them.",
    )

    @model_validator(mode="after")
    def _one_of(self) -> CalculateArgs:
        if (self.expression is None) == (self.operation is None):
            raise ValueError("give either 'expression' or 'operation' (with 'values'), not both or neither")
        return self


def calculate(ctx: RetrievalContext, args: CalculateArgs) -> ToolOutput:
    try:
        if args.expression is not None:
            shown = args.expression.strip()
            value = evaluate(shown)
        else:
            assert args.operation is not None
            shown = f"{args.operation}({', '.join(_show(v) for v in args.values)})"
            value = apply(args.operation, args.values)
    except CalculationError as exc:
        raise ToolException(f"cannot calculate: {exc}") from None
    result = format_decimal(value)
    return f"{shown} = {result}", {"expression": shown, "result": result}


def _show(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


def calculate_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "calculate",
        "Exact decimal arithmetic: use it for every sum, difference, ratio, percentage change, average or "
        "rounding instead of computing in your head. Pass an expression ('(1250.5 - 980) / 980 * 100', "
        "'sum([12.5, 7, 3.25])', 'pct_change(980, 1250.5)') or an operation with values. Returns the exact "
        "result.",
        CalculateArgs,
        calculate,
    )
