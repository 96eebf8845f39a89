"""A safe calculator for numbers read off a page: + - * / ( ), unary minus, and the functions
``sum``, ``avg``/``mean``, ``min``, ``max``, ``abs``, ``round``.

A small tokenizer and a recursive-descent parser of its own; no ``eval``, no names, no attributes, so an
expression written by a model can do nothing but arithmetic.

>>> calculate("27 - 24")
3.0
>>> calculate("avg(12.5, 7.5, 10)")
10.0
>>> calculate("abs(-(3 + 4) * 2)")
14.0
>>> calculate("__import__('os')")
Traceback (most recent call last):
...
docintent.tools.calculator.CalculatorError: unexpected character '_' at 0 in "__import__('os')"
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import DocIntentError

__all__ = ["CalculatorError", "calculate", "FUNCTIONS"]


class CalculatorError(DocIntentError, ValueError):
    """An expression the calculator cannot read or compute (the message says where)."""


def _avg(*xs: float) -> float:
    if not xs:
        raise CalculatorError("avg() of nothing")
    return sum(xs) / len(xs)


def _round(x: float, digits: float = 0) -> float:
    return float(round(x, int(digits)))


#: The functions an expression may call (each takes one or more numbers).
FUNCTIONS: dict[str, Callable[..., float]] = {
    "sum": lambda *xs: float(sum(xs)),
    "avg": _avg,
    "mean": _avg,
    "min": lambda *xs: float(min(xs)),
    "max": lambda *xs: float(max(xs)),
    "abs": lambda x: float(abs(x)),
    "round": _round,
}

_TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d*)?|\.\d+)|(?P<name>[a-z]+)|(?P<op>[-+*/(),]))")


def _tokens(expr: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    # a thousands separator ("1,234": a comma between digits, three digits after it) is part of the number;
    # arguments are separated by a comma and a space ("avg(100, 200)")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", expr.replace("\u2212", "-"))
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            ch = text[pos:].lstrip()[:1]
            where = len(text) - len(text[pos:].lstrip())
            raise CalculatorError(f"unexpected character {ch!r} at {where} in {expr!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.toks = _tokens(expr)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self, value: str | None = None) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            got = tok[1] or "the end"
            raise CalculatorError(f"expected {value!r} at {tok[2]} in {self.expr!r}, found {got!r}")
        self.i += 1
        return tok

    def parse(self) -> float:
        value = self.sum()
        kind, text, pos = self.peek()
        if kind != "end":
            raise CalculatorError(f"unexpected {text!r} at {pos} in {self.expr!r}")
        return value

    def sum(self) -> float:
        value = self.product()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            rhs = self.product()
            value = value + rhs if op == "+" else value - rhs
        return value

    def product(self) -> float:
        value = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            rhs = self.unary()
            if op == "/" and rhs == 0:
                raise CalculatorError(f"division by zero in {self.expr!r}")
            value = value * rhs if op == "*" else value / rhs
        return value

    def unary(self) -> float:
        if self.peek()[1] in ("-", "+"):
            sign = -1.0 if self.take()[1] == "-" else 1.0
            return sign * self.unary()
        return self.atom()

    def atom(self) -> float:
        kind, text, pos = self.take()
        if kind == "num":
            return float(text)
        if text == "(":
            value = self.sum()
            self.take(")")
            return value
        if kind == "name":
            fn = FUNCTIONS.get(text)
            if fn is None:
                raise CalculatorError(f"unknown function {text!r} in {self.expr!r}; functions: {', '.join(FUNCTIONS)}")
            self.take("(")
            args = [self.sum()]
            while self.peek()[1] == ",":
                self.take()
                args.append(self.sum())
            self.take(")")
            try:
                return float(fn(*args))
            except TypeError:
                raise CalculatorError(f"{text}() cannot take {len(args)} argument(s) in {self.expr!r}") from None
        raise CalculatorError(f"unexpected {text or 'end'!r} at {pos} in {self.expr!r}")


def calculate(expression: str) -> float:
    """The value of an arithmetic ``expression`` (see the module docstring); :class:`CalculatorError` when
    it is not one."""
    if len(expression) > 500:
        raise CalculatorError(f"expression too long ({len(expression)} characters; at most 500)")
    return _Parser(expression.strip().lower()).parse()
