"""A small policy engine with oslo.policy's rule language.

Check strings: `@` (always), `!` (never), `role:NAME`, `rule:NAME`, `is_admin:True`,
`KEY:%(target_attr)s` (credential equals target), `'literal':%(target_attr)s`,
`KEY:literal`, combined with `and`,
`or`, `not` and parentheses. Each service registers its defaults; a YAML or JSON policy
file (settings.policy_file) overrides any rule by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from stackling.common.context import RequestContext
from stackling.common.errors import PolicyNotAuthorized

Check = Callable[[Mapping[str, Any], Mapping[str, Any], "Enforcer"], bool]


class PolicySyntaxError(ValueError):
    pass


def _tokenize(text: str) -> list[str]:
    """Split on whitespace, then peel parentheses off each word's ends (so that
    `%(project_id)s` stays whole while `(role:a` opens a group)."""
    tokens: list[str] = []
    for word in text.split():
        stripped = word.lstrip("(")
        tokens += ["("] * (len(word) - len(stripped))
        core = stripped.rstrip(")")
        closing = len(stripped) - len(core)
        if core:
            tokens.append(core)
        tokens += [")"] * closing
    return tokens


def _atom(tok: str) -> Check:
    if tok == "@":
        return lambda t, c, e: True
    if tok == "!":
        return lambda t, c, e: False
    kind, sep, match = tok.partition(":")
    if not sep:
        raise PolicySyntaxError(f"bad check {tok!r}")
    if kind == "rule":
        return lambda t, c, e: e.check_rule(match, t, c)
    if kind == "role":
        want = match.lower()
        return lambda t, c, e: want in (r.lower() for r in c.get("roles", ()))
    if match.startswith("%(") and match.endswith(")s"):
        key = match[2:-2]
        if len(kind) >= 2 and kind[0] == kind[-1] and kind[0] in "'\"":
            # oslo.policy's `'public':%(visibility)s`: a literal equals the target's value
            want_literal = kind[1:-1]
            return lambda t, c, e: str(t.get(key)) == want_literal

        def generic(t: Mapping[str, Any], c: Mapping[str, Any], e: Enforcer) -> bool:
            value = t.get(key)
            return value is not None and str(c.get(kind)) == str(value)

        return generic
    literal = match

    def literal_check(t: Mapping[str, Any], c: Mapping[str, Any], e: Enforcer) -> bool:
        value = c.get(kind)
        if isinstance(value, bool):
            return str(value).lower() == literal.lower()
        return str(value) == literal

    return literal_check


def parse(text: str) -> Check:
    """Parse a check string into a callable (precedence: not > and > or)."""
    tokens = _tokenize(text or "@")
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        return tok

    def parse_or() -> Check:
        parts = [parse_and()]
        while peek() == "or":
            take()
            parts.append(parse_and())
        return parts[0] if len(parts) == 1 else (lambda t, c, e: any(p(t, c, e) for p in parts))

    def parse_and() -> Check:
        parts = [parse_not()]
        while peek() == "and":
            take()
            parts.append(parse_not())
        return parts[0] if len(parts) == 1 else (lambda t, c, e: all(p(t, c, e) for p in parts))

    def parse_not() -> Check:
        if peek() == "not":
            take()
            inner = parse_not()
            return lambda t, c, e: not inner(t, c, e)
        tok = peek()
        if tok is None:
            raise PolicySyntaxError(f"unexpected end of {text!r}")
        if tok == "(":
            take()
            inner = parse_or()
            if peek() != ")":
                raise PolicySyntaxError(f"missing ')' in {text!r}")
            take()
            return inner
        return _atom(take())

    check = parse_or()
    if pos != len(tokens):
        raise PolicySyntaxError(f"trailing tokens in {text!r}")
    return check


# Upstream-style base rules every service shares (names as in Neutron/Nova defaults).
BASE_RULES = {
    "context_is_admin": "role:admin",
    "admin_only": "rule:context_is_admin",
    "admin_api": "rule:context_is_admin",
    "service_api": "role:service",
    "owner": "project_id:%(project_id)s",
    "admin_or_owner": "rule:context_is_admin or rule:owner",
    "project_member": "role:member and project_id:%(project_id)s",
    "project_reader": "role:reader and project_id:%(project_id)s",
    "project_member_api": "role:member and project_id:%(project_id)s",
    "project_reader_api": "role:reader and project_id:%(project_id)s",
    "admin_or_project_member": "rule:context_is_admin or rule:project_member",
    "admin_or_project_reader": "rule:context_is_admin or rule:project_reader",
    "admin_or_service": "rule:context_is_admin or rule:service_api",
}


class Enforcer:
    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._defaults: dict[str, str] = dict(BASE_RULES)
        self._overrides: dict[str, str] = dict(overrides or {})

    def register(self, rules: Mapping[str, str]) -> None:
        self._defaults.update(rules)
        _compiled.cache_clear()

    def rule_text(self, name: str) -> str | None:
        return self._overrides.get(name, self._defaults.get(name))

    def check_rule(self, name: str, target: Mapping[str, Any], creds: Mapping[str, Any]) -> bool:
        text = self.rule_text(name)
        if text is None:
            return False
        return _compiled(text)(target, creds, self)

    def enforce(self, name: str, target: Mapping[str, Any], creds: Mapping[str, Any]) -> bool:
        """True when allowed. An unregistered rule is refused (fail closed)."""
        return self.check_rule(name, target, creds)


@lru_cache(maxsize=2048)
def _compiled(text: str) -> Check:
    return parse(text)


def load_policy_file(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise PolicySyntaxError(f"{path}: a policy file is a mapping of rule names to checks")
    for text in data.values():
        parse(str(text))  # refuse a broken file at start, not at the first request
    return {str(k): str(v) for k, v in data.items()}


def require_project_scope(ctx: RequestContext) -> None:
    """Upstream's `enforce_scope`: every project API refuses a token that is not scoped to
    a project (unscoped, domain or system scope) with a 403, whatever its roles."""
    if ctx.project_id is None and not ctx.is_service:
        raise ScopeNotAuthorized()


class ScopeNotAuthorized(PolicyNotAuthorized):
    error_type = "PolicyNotAuthorized"
    message = "This API needs a project-scoped token; the token has no project scope."
