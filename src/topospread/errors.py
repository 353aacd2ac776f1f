"""The exceptions topospread raises, in one tree.

Scheduling outcomes are never exceptions: a node that does not fit is a
:class:`topospread.framework.Status`. Exceptions are for input, configuration and
programming errors only::

    TopospreadError
     ├── InputError              bad input from the user; the CLI exits with status 2
     │    ├── DecodeError        unreadable file, malformed YAML/JSON, a field of the wrong type
     │    ├── ValidationError    an object the API server would reject
     │    └── ConfigError        an invalid KubeSchedulerConfiguration or plugin args
     ├── UnsupportedError        valid Kubernetes input that topospread does not model (yet)
     └── ClusterError            a live cluster could not be read or written; exit status 2
          ├── KubeconfigError    no usable kubeconfig, an unknown context, bad credentials setup
          ├── ClusterUnreachable connection refused, DNS or TLS failure (names the server)
          ├── Unauthorized       401: the server refused the credentials
          ├── Forbidden          403: names the verb, resource and the RBAC rule that grants it
          └── NotFound           404: the named object does not exist
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "ClusterError",
    "ClusterUnreachable",
    "ConfigError",
    "DecodeError",
    "ErrorType",
    "FieldError",
    "Forbidden",
    "InputError",
    "KubeconfigError",
    "NotFound",
    "TopospreadError",
    "Unauthorized",
    "UnsupportedError",
    "ValidationError",
    "cut",
    "go_quote",
]


class ErrorType(Enum):
    """The kinds of field error, worded as k8s.io/apimachinery's field.ErrorType prints them."""

    NOT_FOUND = "Not found"
    REQUIRED = "Required value"
    DUPLICATE = "Duplicate value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    TOO_LONG = "Too long"
    TOO_MANY = "Too many"
    INTERNAL = "Internal error"
    TYPE_INVALID = "Invalid value"


_VALUE_LESS = {
    ErrorType.REQUIRED,
    ErrorType.FORBIDDEN,
    ErrorType.TOO_LONG,
    ErrorType.INTERNAL,
}

_OMIT = object()


def go_quote(text: str) -> str:
    """Quote a string the way Go's ``%q`` and ``strconv.Quote`` do for printable text."""
    return json.dumps(text, ensure_ascii=False)


MAX_VALUE_CHARS = 200
"""Values quoted in messages are cut to this many characters (a label value is at most 63)."""

MAX_LINE_CHARS = 1000
"""Message lines are cut to this many characters: input never floods the terminal."""


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` whole if short, else its start and a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit:,} more characters)"


def _render_value(value: object) -> str:
    # field.Error.ErrorBody: simple scalars with %v, strings with %q, the rest as JSON.
    # Dicts keep their insertion order: Go marshals structs in field order (build such
    # values in that order) and maps with sorted keys (build those sorted). Long values
    # are cut (input is never echoed whole).
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        try:
            return cut(str(value))
        except ValueError:
            return "(a number too long to show)"
    if isinstance(value, str):
        return go_quote(cut(value))
    if value is None:
        return "null"
    try:
        text = json.dumps(value, separators=(",", ":"), sort_keys=False, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return "(a value too deep to show)"
    return cut(text)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field, like k8s.io/apimachinery's ``field.Error``."""

    type: ErrorType
    """What kind of problem this is."""
    field: str
    """The field path, e.g. ``spec.topologySpreadConstraints[0].maxSkew``."""
    value: object = _OMIT
    """The offending value, printed for value-bearing error types."""
    detail: str = ""
    """A human explanation, e.g. ``must be greater than zero``."""

    def body(self) -> str:
        """The message without the field path, as ``field.Error.ErrorBody`` renders it."""
        if self.type in _VALUE_LESS or self.value is _OMIT:
            text = self.type.value
        else:
            text = f"{self.type.value}: {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    @classmethod
    def invalid(cls, field: str, value: object, detail: str) -> FieldError:
        """An ``Invalid value`` error."""
        return cls(ErrorType.INVALID, field, value, detail)

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        """A ``Required value`` error."""
        return cls(ErrorType.REQUIRED, field, detail=detail)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        """A ``Forbidden`` error."""
        return cls(ErrorType.FORBIDDEN, field, detail=detail)

    @classmethod
    def duplicate(cls, field: str, value: object) -> FieldError:
        """A ``Duplicate value`` error."""
        return cls(ErrorType.DUPLICATE, field, value)

    @classmethod
    def not_supported(cls, field: str, value: object, supported: Sequence[str]) -> FieldError:
        """An ``Unsupported value`` error listing the supported values."""
        detail = ""
        if supported:
            detail = "supported values: " + ", ".join(go_quote(v) for v in supported)
        return cls(ErrorType.NOT_SUPPORTED, field, value, detail)


class TopospreadError(Exception):
    """Base class of every exception topospread raises on purpose."""


class InputError(TopospreadError):
    """Input the user supplied is unusable; the CLI reports it and exits with status 2.

    ``source`` names the file (or other origin) and ``errors`` holds every field-level
    problem found, so that one report lists them all.
    """

    kind = "invalid input"

    def __init__(
        self,
        source: str,
        errors: Iterable[FieldError | str] = (),
        *,
        message: str | None = None,
    ) -> None:
        self.source = source
        self.errors: tuple[FieldError | str, ...] = tuple(errors)
        if message is None:
            message = "; ".join(str(e) for e in self.errors) or self.kind
        self.message = message
        super().__init__(f"{source}: {message}" if source else message)

    def lines(self) -> list[str]:
        """One line per problem, each prefixed by the source."""
        prefix = f"{self.source}: " if self.source else ""
        if not self.errors:
            return [cut(prefix + self.message, MAX_LINE_CHARS)]
        return [cut(prefix + str(e), MAX_LINE_CHARS) for e in self.errors]


class DecodeError(InputError):
    """A file could not be read or parsed, or a field has the wrong type."""

    kind = "cannot decode"


class ValidationError(InputError):
    """An object fails the API server's validation rules."""

    kind = "invalid object"


class ConfigError(InputError):
    """A KubeSchedulerConfiguration or plugin args object is invalid."""

    kind = "invalid configuration"


class UnsupportedError(TopospreadError):
    """Valid Kubernetes input that topospread does not model; the message says what and why.

    ``source`` names the file (or server) the input came from, when known.
    """

    def __init__(self, message: str, source: str = "") -> None:
        self.source = source
        self.message = message
        super().__init__(message)

    def named(self, source: str) -> UnsupportedError:
        """The same error naming ``source``, unless it names one already."""
        return self if self.source else UnsupportedError(self.message, source)


class ClusterError(TopospreadError):
    """A live cluster could not be read or written; the message names the server or object."""


class KubeconfigError(ClusterError):
    """No usable kubeconfig, an unknown context, or credentials that cannot be set up."""


class ClusterUnreachable(ClusterError):
    """The API server could not be reached: connection refused, DNS, timeout or TLS failure."""


class TransportClosed(ClusterUnreachable):
    """The request was refused before it left: its transport was closed (trying it again
    cannot help)."""


class Unauthorized(ClusterError):
    """The API server answered 401: it did not accept the credentials."""


class Forbidden(ClusterError):
    """The API server answered 403; the message names the verb, resource and a granting rule."""


class NotFound(ClusterError):
    """The API server answered 404 for a named object."""
