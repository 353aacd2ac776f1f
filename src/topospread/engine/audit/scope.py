"""Parsing what the command line scopes an audit with: ``-l SELECTOR``, ``KIND/NAME``,
``--domains zone=3,hostname=12``, ``# topospread:ignore RULE`` comments. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from topospread.errors import InputError
from topospread.model.labels import Operator, Requirement, Selector
from topospread.model.objects import LABEL_HOSTNAME, LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE

__all__ = [
    "KIND_ALIASES",
    "TOPOLOGY_KEY_ALIASES",
    "ignored_in_text",
    "parse_domains",
    "parse_label_selector",
    "parse_workload_name",
]

KIND_ALIASES: Final = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "job": "Job",
    "jobs": "Job",
    "cronjob": "CronJob",
    "cronjobs": "CronJob",
    "cj": "CronJob",
    "pod": "Pod",
    "pods": "Pod",
    "po": "Pod",
}
"""kubectl's names and short names of the workload kinds."""

TOPOLOGY_KEY_ALIASES: Final = {
    "zone": LABEL_TOPOLOGY_ZONE,
    "hostname": LABEL_HOSTNAME,
    "host": LABEL_HOSTNAME,
    "node": LABEL_HOSTNAME,
    "region": LABEL_TOPOLOGY_REGION,
}

_SET = re.compile(
    r"^\s*(!?)\s*([^\s!=()]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*([^\s,]*))?\s*$"
)
_IGNORE = re.compile(r"#\s*topospread:ignore[ \t]+([A-Za-z0-9_,\- \t]+)")


def _split_top(text: str) -> list[str]:
    # Commas separate requirements except inside "in (a,b)".
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str) -> Selector:
    """A kubectl ``-l`` selector: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``,
    ``k in (a,b)``, ``k notin (a,b)``, comma-separated (AND)."""
    requirements: list[Requirement] = []
    for part in _split_top(text):
        m = _SET.match(part)
        if m is None or (m.group(1) and (m.group(3) or m.group(5))):
            raise InputError(
                "-l", message=f"invalid label selector {text!r}: cannot parse {part.strip()!r}"
            )
        negated, key, set_op, values, op, value = m.groups()
        if negated:
            requirements.append(Requirement(key, Operator.DOES_NOT_EXIST))
        elif set_op:
            vals = frozenset(v.strip() for v in values.split(",") if v.strip())
            requirements.append(
                Requirement(key, Operator.IN if set_op == "in" else Operator.NOT_IN, vals)
            )
        elif op:
            requirements.append(
                Requirement(
                    key, Operator.NOT_EQUALS if op == "!=" else Operator.EQUALS, frozenset((value,))
                )
            )
        else:
            requirements.append(Requirement(key, Operator.EXISTS))
    return Selector(()).add(requirements)


def parse_workload_name(text: str) -> tuple[str | None, str]:
    """``deployment/web`` -> (``Deployment``, ``web``); ``web`` -> (None, ``web``)."""
    if "/" not in text:
        return None, text
    kind, _, name = text.partition("/")
    resolved = KIND_ALIASES.get(kind.lower().split(".")[0])
    if resolved is None or not name:
        known = ", ".join(sorted({*KIND_ALIASES.values()}))
        raise InputError("WORKLOAD", message=f"unknown workload {text!r} (kinds: {known})")
    return resolved, name


def parse_domains(text: str) -> dict[str, int]:
    """``zone=3,hostname=12`` (or full topology keys) -> {topology key: domains}."""
    result: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not value.strip().isdigit() or int(value) < 1:
            raise InputError(
                "--domains",
                message=f"expected KEY=N with N >= 1 (e.g. zone=3,hostname=12), got {part!r}",
            )
        key = key.strip()
        full = TOPOLOGY_KEY_ALIASES.get(key, key)
        if full in result:
            raise InputError("--domains", message=f"{full} is given twice, in {text!r}")
        result[full] = int(value)
    return result


def ignored_in_text(text: str, known: Iterable[str]) -> frozenset[str]:
    """Rules named by ``# topospread:ignore RULE[,RULE]`` comments in a document's text
    (``all`` silences every rule)."""
    rules: set[str] = set()
    for match in _IGNORE.finditer(text):
        for name in re.split(r"[\s,]+", match.group(1)):
            if name == "all":
                rules.update(known)
            elif name:
                rules.add(name)
    return frozenset(rules)
