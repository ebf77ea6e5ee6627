"""A stack definition: template + environment + files + parameter values, evaluated
into what the engine needs (typed parameters, active resources, their types and the
dependency graph). Built from a stack row's stored definition, or a request's."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass, field
from typing import Any

from stackling.orchestration import environment, parameters
from stackling.orchestration.errors import (
    CircularDependencyException,
    ResourceTypeNotFound,
    StackValidationFailed,
)
from stackling.orchestration.resources import load_all, resource_class
from stackling.orchestration.resources.base import Resource
from stackling.orchestration.template import Resolver, Template


@dataclass
class Spec:
    """The stored, unevaluated definition (what a stack row and an update carry)."""

    template: dict[str, Any]
    environment: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)  # the user's raw values

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "environment": self.environment,
                "files": self.files, "parameters": self.parameters}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Spec:
        return cls(d["template"], d.get("environment") or {}, d.get("files") or {},
                   d.get("parameters") or {})


class Definition:
    def __init__(self, spec: Spec, *, stack_name: str, stack_id: str, project_id: str,
                 checker: Any = None, strict: bool = True) -> None:
        self.spec = spec
        self.tmpl = Template(spec.template, spec.files)
        self.env = spec.environment
        parameters.validate_schema(self.tmpl.parameters)
        given = {**(self.env.get("parameters") or {}), **spec.parameters}
        self.params = parameters.resolve(self.tmpl.parameters, given,
                                         self.env.get("parameter_defaults") or {}, checker,
                                         strict=strict)
        self.pseudo = {"OS::stack_name": stack_name, "OS::stack_id": stack_id,
                       "OS::project_id": project_id}
        conditions_resolver = Resolver(self.tmpl, {**self.params, **self.pseudo},
                                       lambda n: None, lambda n, a: None)
        self.conditions = conditions_resolver.conditions()
        self.active: list[str] = []
        for name, snippet in self.tmpl.resources.items():
            cond = snippet.get("condition")
            if cond is None or conditions_resolver.condition(cond):
                self.active.append(name)
        load_all()
        self.types: dict[str, str] = {}
        self.classes: dict[str, type[Resource]] = {}
        for name in self.active:
            declared = self.tmpl.resources[name]["type"]
            resolved = environment.resolve_type(self.env, declared, name)
            cls = resource_class(resolved, spec.files)
            if cls is None:
                raise ResourceTypeNotFound(type_name=resolved)
            self.types[name] = resolved
            self.classes[name] = cls
        self.deps: dict[str, set[str]] = {}
        active = set(self.active)
        snippets = {n: self.tmpl.resources[n] for n in self.active}
        for name in self.active:
            deps = self.tmpl.explicit_dependencies(name)
            for dep in deps:
                if dep not in self.tmpl.resources:
                    from stackling.orchestration.errors import InvalidTemplateReference

                    raise InvalidTemplateReference(resource=dep, key=name)
            deps |= set(self.classes[name].implicit_dependencies(name, snippets[name],
                                                                  snippets))
            self.deps[name] = {d for d in deps if d in active and d != name}
        try:
            self.order = list(graphlib.TopologicalSorter(self.deps).static_order())
        except graphlib.CycleError as err:
            cycle = err.args[1] if len(err.args) > 1 else []
            raise CircularDependencyException(cycle=", ".join(
                f'"{n}"' for n in dict.fromkeys(cycle))) from None

    def resolver(self, get_resource: Any, get_attr: Any, facade: Any = None) -> Resolver:
        return Resolver(self.tmpl, {**self.params, **self.pseudo}, get_resource, get_attr,
                        dict(self.conditions), facade)

    def snippet(self, name: str) -> dict[str, Any]:
        return self.tmpl.resources[name]

    def required_by(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.active}
        for name, deps in self.deps.items():
            for d in deps:
                out[d].append(name)
        return out

    def active_outputs(self, resolver: Resolver) -> dict[str, dict[str, Any]]:
        out = {}
        for name, output in self.tmpl.outputs.items():
            cond = output.get("condition")
            if cond is not None and not resolver.condition(cond):
                continue
            out[name] = output
        return out


def check_name(value: Any) -> None:
    from stackling.orchestration.template import NAME_RE

    if not isinstance(value, str) or not NAME_RE.match(value):
        raise StackValidationFailed(
            f'Invalid stack name {value} must contain only alphanumeric or "_-." characters, '
            "must start with alpha and must be 255 characters or less.")
