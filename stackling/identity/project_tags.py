"""Project tags as Keystone's: at most 80 per project, each 1-255 characters without `/`
or `,` (the list filters split on commas), kept unique in the order given."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, NotFound
from stackling.identity.models import Project

MAX_TAGS = 80


def checked(tags: Any) -> list[str]:
    if not isinstance(tags, list):
        raise BadRequest(f"Invalid input for field 'tags': {tags!r} is not of type 'array'")
    if len(tags) > MAX_TAGS:
        raise BadRequest(f"Invalid input for field 'tags': a project holds at most {MAX_TAGS} "
                         "tags")
    for tag in tags:
        checked_tag(tag)
    return list(dict.fromkeys(tags))


def checked_tag(tag: Any) -> str:
    if not isinstance(tag, str) or not tag.strip() or len(tag) > 255:
        raise BadRequest(f"Invalid input for field 'tags': {tag!r} is not a tag of 1 to 255 "
                         "characters")
    if "/" in tag or "," in tag:
        raise BadRequest("Invalid input for field 'tags': tags cannot contain characters "
                         "'/' or ','")
    return tag


def add(project: Project, tag: str) -> None:
    tags = list(project.tags or [])
    if tag not in tags:
        project.tags = checked([*tags, checked_tag(tag)])


def remove(project: Project, tag: str) -> None:
    tags = list(project.tags or [])
    if tag not in tags:
        raise NotFound(f"Could not find project tag: {tag}.")
    project.tags = [t for t in tags if t != tag]


def require(project: Project, tag: str) -> None:
    if tag not in (project.tags or []):
        raise NotFound(f"Could not find project tag: {tag}.")
