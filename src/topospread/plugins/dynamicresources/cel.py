"""Device selectors in CEL, evaluated the way the DRA CEL environment evaluates them.

Upstream (``k8s.io/dynamic-resource-allocation/cel``, v0.37.1) gives each selector one
variable, ``device``, with ``driver`` (string), ``allowMultipleAllocations`` (bool),
``attributes`` and ``capacity``: maps from a domain to a map from an identifier to a value.
An attribute or capacity name without a domain belongs to the device's driver, so
``model`` of driver ``gpu.example.com`` is ``device.attributes["gpu.example.com"].model``.
A domain the device has nothing in reads as an empty map; a missing identifier is the
runtime error ``no such key: <id>``, to which upstream appends a hint about optional
chaining. Attribute values are strings, ints, bools or semantic versions; capacities are
quantities. The Kubernetes quantity and semver libraries are available.

The expressions are evaluated with ``cel-python`` (``celpy``). Only what that library and
this module evaluate exactly as cel-go does is accepted: :func:`unsupported_reason` names
anything else (an unknown function, optional chaining, a syntax cel-python does not parse),
and a runtime error other than a missing key raises :class:`CelUnsupported`, since its text
could not be upstream's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache, total_ordering
from typing import Any, Final

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError
from lark import Token, Tree

from topospread.model.quantity import Quantity, QuantityError, parse_quantity
from topospread.model.resource import DeviceAttribute

__all__ = [
    "NO_SUCH_KEY_HINT",
    "CelRuntimeError",
    "CelUnsupported",
    "Selector",
    "compile_selector",
    "unsupported_reason",
]

NO_SUCH_KEY_HINT: Final = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the "
    "check with has() for optional fields"
)
"""What ``cel.EnhanceRuntimeError`` appends to a ``no such key`` error."""

_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Functions evaluated exactly: CEL's standard string and size functions (cel-python's),
# the macros, and the quantity and semver libraries implemented here.
_FUNCTIONS: Final = frozenset(
    {
        "has",
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "string",
        "int",
        *_MACROS,
        "quantity",
        "isQuantity",
        "semver",
        "isSemver",
        "compareTo",
        "isGreaterThan",
        "isLessThan",
        "sign",
        "isInteger",
        "asInteger",
        "asApproximateFloat",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
    }
)


class CelUnsupported(Exception):
    """A selector whose evaluation topospread cannot reproduce."""


class CelRuntimeError(Exception):
    """A runtime error whose text is upstream's (``no such key: <id>`` and the hint)."""


class _Quantity:
    """A quantity value of CEL's Kubernetes quantity library."""

    __slots__ = ("amount",)

    def __init__(self, amount: Fraction) -> None:
        self.amount = amount


_SEMVER: Final = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


@total_ordering
class _Semver:
    """A semantic version (blang/semver's ordering: build metadata is ignored)."""

    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, text: str) -> None:
        match = _SEMVER.fullmatch(text)
        if match is None:
            raise CelUnsupported(f"semver {text!r} does not parse")
        self.major, self.minor, self.patch = (int(match.group(i)) for i in (1, 2, 3))
        self.pre = tuple(match.group(4).split(".")) if match.group(4) else ()

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Semver) and self._compare(other) == 0

    def __hash__(self) -> int:
        return hash((self._key(), self.pre))

    def __lt__(self, other: _Semver) -> bool:
        return self._compare(other) < 0

    def _compare(self, other: _Semver) -> int:
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        # A version without pre-release identifiers is greater than one with them.
        if not self.pre or not other.pre:
            return (len(other.pre) > 0) - (len(self.pre) > 0)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if a.isdigit() and b.isdigit():
                return -1 if int(a) < int(b) else 1
            if a.isdigit() != b.isdigit():
                # Numeric identifiers have lower precedence than alphanumeric ones.
                return -1 if a.isdigit() else 1
            return -1 if a < b else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _quantity_of(text: object) -> _Quantity:
    try:
        return _Quantity(parse_quantity(str(text), "devices").amount)
    except QuantityError as exc:
        raise CelUnsupported(f"quantity {text!r}: {exc}") from exc


def _compare(a: object, b: object) -> int:
    if isinstance(a, _Quantity) and isinstance(b, _Quantity):
        return (a.amount > b.amount) - (a.amount < b.amount)
    if isinstance(a, _Semver) and isinstance(b, _Semver):
        return a._compare(b)
    raise CelUnsupported("compareTo on mismatched types")


def _to_amount(value: object) -> Fraction:
    if isinstance(value, _Quantity):
        return value.amount
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    raise CelUnsupported("quantity arithmetic with a non-quantity")


def _as_integer(q: object) -> celtypes.IntType:
    if not isinstance(q, _Quantity) or q.amount.denominator != 1 or abs(q.amount) >= 2**63:
        raise CelUnsupported("asInteger of a fractional or too large quantity")
    return celtypes.IntType(int(q.amount))


def _semver_part(name: str) -> Callable[[object], celtypes.IntType]:
    def part(v: object) -> celtypes.IntType:
        if not isinstance(v, _Semver):
            raise CelUnsupported(f"{name} of a non-semver")
        return celtypes.IntType(getattr(v, name))

    return part


def _is_semver(text: object) -> celtypes.BoolType:
    return celtypes.BoolType(_SEMVER.fullmatch(str(text)) is not None)


def _is_quantity(text: object) -> celtypes.BoolType:
    try:
        parse_quantity(str(text), "devices")
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _number(value: object) -> Fraction | None:
    if isinstance(value, celtypes.BoolType | bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value) if value == value and abs(value) != float("inf") else None
    return None


def _equal(a: object, b: object) -> bool:
    # CEL's heterogeneous equality: numbers compare by value across int, uint and double;
    # values of different types are unequal (no error).
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        return na == nb
    if isinstance(a, _Quantity) or isinstance(b, _Quantity):
        if not (isinstance(a, _Quantity) and isinstance(b, _Quantity)):
            # Statically typed: cel-go refuses the comparison when it compiles it.
            raise CelUnsupported("a quantity compared with another type")
        return a.amount == b.amount
    if isinstance(a, _Semver) or isinstance(b, _Semver):
        return a == b
    if type(a) is not type(b):
        if isinstance(a, celtypes.MapType) and isinstance(b, celtypes.MapType):
            pass
        else:
            return False
    if isinstance(a, celtypes.ListType) and isinstance(b, celtypes.ListType):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, celtypes.MapType) and isinstance(b, celtypes.MapType):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


_LIBRARY: Final[Mapping[str, Callable[..., Any]]] = {
    "quantity": _quantity_of,
    "isQuantity": _is_quantity,
    "semver": lambda text, *_: _Semver(str(text)),
    "isSemver": lambda text, *_: _is_semver(text),
    "compareTo": lambda a, b: celtypes.IntType(_compare(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "sign": lambda q: celtypes.IntType((_to_amount(q) > 0) - (_to_amount(q) < 0)),
    "isInteger": lambda q: celtypes.BoolType(
        _to_amount(q).denominator == 1 and abs(_to_amount(q)) < 2**63
    ),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(_to_amount(q))),
    "add": lambda a, b: _Quantity(_to_amount(a) + _to_amount(b)),
    "sub": lambda a, b: _Quantity(_to_amount(a) - _to_amount(b)),
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
    "_==_": lambda a, b: celtypes.BoolType(_equal(a, b)),
    "_!=_": lambda a, b: celtypes.BoolType(not _equal(a, b)),
}


def _propagating(function: Callable[..., Any]) -> Callable[..., Any]:
    # cel-python hands an error on as a value; a function applied to one yields it.
    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        return function(*args)

    return call


_FUNCTIONS_TABLE: Final = {name: _propagating(f) for name, f in _LIBRARY.items()}


class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


_DEVICE_FIELDS: Final = frozenset({"driver", "attributes", "capacity", "allowMultipleAllocations"})


def _is_device(node: object) -> bool:
    # member -> primary -> ident "device"
    while isinstance(node, Tree) and node.data in ("member", "primary") and len(node.children) == 1:
        node = node.children[0]
    return isinstance(node, Tree) and node.data == "ident" and str(node.children[0]) == "device"


def _walk(tree: Tree[Token], functions: set[str], idents: set[str], bound: set[str]) -> None:
    if tree.data == "ident_arg":
        functions.add(str(tree.children[0]))
    elif tree.data == "member_dot_arg":
        name = str(tree.children[1])
        functions.add(name)
        args = tree.children[2] if len(tree.children) > 2 else None
        if name in _MACROS and isinstance(args, Tree) and args.children:
            first = args.children[0]
            tokens = (
                list(first.scan_values(lambda v: isinstance(v, Token)))
                if isinstance(first, Tree)
                else [first]
            )
            if len(tokens) == 1:
                bound.add(str(tokens[0]))
    elif tree.data == "ident":
        idents.add(str(tree.children[0]))
    elif tree.data == "member_dot" and _is_device(tree.children[0]):
        # cel-go checks the fields of device at compile time; a field it does not
        # declare is a compile error, not cel-python's missing key.
        fields = str(tree.children[1])
        if fields not in _DEVICE_FIELDS:
            functions.add(f"device.{fields}")
    for child in tree.children:
        if isinstance(child, Tree):
            _walk(child, functions, idents, bound)


@cache
def _env() -> celpy.Environment:
    # Building cel-python's parser takes a fifth of a second: only when a selector is read.
    return celpy.Environment()


def unsupported_reason(expression: str) -> str | None:
    """Why topospread cannot evaluate this selector as upstream does, or None."""
    try:
        tree = _env().compile(expression)
    except Exception:
        return f"CEL selector {expression!r} does not parse with cel-python"
    functions: set[str] = set()
    idents: set[str] = set()
    bound: set[str] = set()
    _walk(tree, functions, idents, bound)
    unknown = sorted(functions - _FUNCTIONS)
    if unknown:
        return f"CEL selector {expression!r} uses {', '.join(unknown)}"
    strays = sorted(idents - bound - {"device"})
    if strays:
        return f"CEL selector {expression!r} refers to {', '.join(strays)}"
    return None


class Selector:
    """A compiled selector."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self._program = _env().program(_env().compile(expression), functions=dict(_FUNCTIONS_TABLE))

    def matches(
        self,
        driver: str,
        attributes: Mapping[str, DeviceAttribute],
        capacity: Mapping[str, Quantity],
    ) -> bool:
        """Whether the device matches; CelRuntimeError (upstream's text) or CelUnsupported."""
        activation = {"device": _device(driver, attributes, capacity)}
        try:
            result = self._program.evaluate(activation)
        except CELEvalError as exc:
            raise _translate(exc) from exc
        if isinstance(result, CELEvalError):
            raise _translate(result)
        if not isinstance(result, celtypes.BoolType | bool):
            raise CelUnsupported(f"CEL selector {self.expression!r} is not a bool")
        return bool(result)


def _translate(exc: CELEvalError) -> Exception:
    args = exc.args
    if len(args) >= 2 and args[1] is KeyError:
        message = str(args[0])
        key = None
        if message.startswith("no such member in mapping: "):
            key = message.removeprefix("no such member in mapping: ").strip("'\"")
        elif message == "no such key" and args[2]:
            key = str(args[2][0])
        if key is not None:
            return CelRuntimeError(f"no such key: {key}{NO_SUCH_KEY_HINT}")
    if (
        len(args) >= 2
        and args[1] is TypeError
        and "no matching overload" in str(args[0])
        # Quantities are typed statically (capacity, quantity()): cel-go refuses such an
        # expression when it compiles it, with a message cel-python cannot give.
        and "_Quantity" not in str(args[0])
    ):
        # An operator applied to values of types it has no overload for (``model > 1``):
        # cel-go's runtime error is types.NoSuchOverloadErr.
        return CelRuntimeError("no such overload")
    return CelUnsupported(f"CEL runtime error topospread cannot reproduce: {args[0]}")


def _value(attribute: DeviceAttribute) -> object:
    if attribute.string_value is not None:
        return celtypes.StringType(attribute.string_value)
    if attribute.int_value is not None:
        return celtypes.IntType(attribute.int_value)
    if attribute.bool_value is not None:
        return celtypes.BoolType(attribute.bool_value)
    if attribute.version_value is not None:
        return _Semver(attribute.version_value)
    raise CelUnsupported("an attribute without a value")


def _split(name: str, driver: str) -> tuple[str, str]:
    # parseQualifiedName: "domain/id", or the driver's domain for a bare id.
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _device(
    driver: str, attributes: Mapping[str, DeviceAttribute], capacity: Mapping[str, Quantity]
) -> celtypes.MapType:
    attrs: dict[str, dict[Any, Any]] = {}
    for name, attribute in attributes.items():
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[celtypes.StringType(ident)] = _value(attribute)
    caps: dict[str, dict[Any, Any]] = {}
    for name, quantity in capacity.items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[celtypes.StringType(ident)] = _Quantity(quantity.amount)
    s = celtypes.StringType
    return celtypes.MapType(
        {
            s("driver"): s(driver),
            s("allowMultipleAllocations"): celtypes.BoolType(False),
            s("attributes"): _DomainMap({s(d): celtypes.MapType(m) for d, m in attrs.items()}),
            s("capacity"): _DomainMap({s(d): celtypes.MapType(m) for d, m in caps.items()}),
        }
    )


def compile_selector(expression: str, cache: dict[str, Selector]) -> Selector:
    """A compiled selector, from ``cache`` when compiled before."""
    selector = cache.get(expression)
    if selector is None:
        selector = cache[expression] = Selector(expression)
    return selector
