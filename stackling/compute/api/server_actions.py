"""Handlers of the server actions and moves (`POST /servers/{id}/action`), os-migrations,
`/servers/{id}/migrations`, diagnostics, remote consoles and the console page."""

from __future__ import annotations

from typing import Any

from starlette.responses import HTMLResponse

from stackling.common.errors import BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest
from stackling.common.listing import to_bool
from stackling.compute import action_schemas as schemas
from stackling.compute import block_devices, moves, server_actions, validation, views
from stackling.compute.api.common import (
    allowed,
    authorize,
    changes_before,
    known_query,
    links,
    page_limit,
    query_timestamp,
    since,
    takes_query,
    version,
)
from stackling.compute.microversions import pick
from stackling.compute.models import Instance

ADMIN = "rule:context_is_admin"
MEMBER = "rule:context_is_admin or rule:project_member_api"

# Nova's defaults for the policies these handlers check (merged into the component's).
POLICIES = {
    "os_compute_api:os-evacuate": ADMIN,
    "os_compute_api:os-admin-actions:reset_state": ADMIN,
    "os_compute_api:os-admin-actions:inject_network_info": ADMIN,
    "os_compute_api:os-admin-actions:reset_network": ADMIN,
    "os_compute_api:os-admin-password": MEMBER,
    "os_compute_api:os-deferred-delete:force": MEMBER,
    "os_compute_api:os-deferred-delete:restore": MEMBER,
    "os_compute_api:os-create-backup": MEMBER,
    "os_compute_api:os-pause-server:pause": MEMBER,
    "os_compute_api:os-pause-server:unpause": MEMBER,
    "os_compute_api:os-suspend-server:suspend": MEMBER,
    "os_compute_api:os-suspend-server:resume": MEMBER,
    "os_compute_api:os-shelve:shelve": MEMBER,
    "os_compute_api:os-shelve:shelve_offload": ADMIN,
    "os_compute_api:os-shelve:unshelve": MEMBER,
    "os_compute_api:os-shelve:unshelve_to_host": ADMIN,  # 2.91
    "os_compute_api:os-rescue": MEMBER,
    "os_compute_api:os-unrescue": MEMBER,
    "os_compute_api:servers:rebuild": MEMBER,
    "os_compute_api:servers:create_image": MEMBER,
    "os_compute_api:servers:create_image:allow_volume_backed": MEMBER,
    "os_compute_api:servers:resize": MEMBER,
    "os_compute_api:servers:confirm_resize": MEMBER,
    "os_compute_api:servers:revert_resize": MEMBER,
    "os_compute_api:servers:trigger_crash_dump": MEMBER,
    "os_compute_api:os-console-output": MEMBER,
    "os_compute_api:os-remote-consoles": MEMBER,
    "os_compute_api:os-console-auth-tokens": ADMIN,
    "os_compute_api:os-server-diagnostics": ADMIN,
    "os_compute_api:os-migrate-server:migrate": ADMIN,
    "os_compute_api:os-migrate-server:migrate:host": ADMIN,
    "os_compute_api:os-migrate-server:migrate_live": ADMIN,
    "os_compute_api:os-migrations:index": ADMIN,
    "os_compute_api:servers:migrations:index": ADMIN,
    "os_compute_api:servers:migrations:show": ADMIN,
    "os_compute_api:servers:migrations:force_complete": ADMIN,
    "os_compute_api:servers:migrations:delete": ADMIN,
    # 2.78 (Nova's names, without the os_compute_api prefix)
    "compute:server:topology:index": "rule:context_is_admin or rule:project_reader_api",
    "compute:server:topology:host:index": ADMIN,
}


def _target(inst: Instance) -> dict[str, Any]:
    return {"project_id": inst.project_id, "user_id": inst.user_id}


def _validate(schema: Any, data: Any, rq: ApiRequest) -> Any:
    if isinstance(schema, dict) and all(k[:2] == "2." for k in schema):
        schema = pick(version(rq), schema)
    return validation.validate(schema, data)


# ------------------------------------------------------------------ dispatch
def dispatch(rq: ApiRequest, inst: Instance, name: str, data: dict[str, Any]) -> Any:
    """Run action `name` if it is one of these; raises KeyError when it is not."""
    handler = ACTIONS[name]
    return handler(rq, inst, data)


def _simple(policy: str, name: str) -> Any:
    def run(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
        authorize(rq, policy, _target(inst))
        server_actions.simple_action(rq.db, rq.ctx, inst, name)
        return 202, None
    return run


def _resize(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "servers:resize", _target(inst))
    body = _validate(schemas.RESIZE, data, rq)["resize"]
    moves.resize(rq.db, rq.ctx, inst, str(body["flavorRef"]),
                 allowed(rq, "servers:create:zero_disk_flavor"))
    if body.get("OS-DCF:diskConfig"):  # Nova's resize takes the new disk config
        inst.disk_config = body["OS-DCF:diskConfig"]
        rq.db.flush()
    return 202, None


def _confirm(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "servers:confirm_resize", _target(inst))
    moves.confirm_resize(rq.db, rq.ctx, inst)
    return 204, None


def _revert(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "servers:revert_resize", _target(inst))
    moves.revert_resize(rq.db, rq.ctx, inst)
    return 202, None


def _migrate(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-migrate-server:migrate", _target(inst))
    body = _validate(schemas.MIGRATE, data, rq)["migrate"] or {}
    host = body.get("host") if version(rq).matches("2.56") else None
    if host:
        authorize(rq, "os-migrate-server:migrate:host", _target(inst))
    moves.migrate(rq.db, rq.ctx, inst, host)
    return 202, None


def _live(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-migrate-server:migrate_live", _target(inst))
    body = _validate(schemas.LIVE_MIGRATE, data, rq)["os-migrateLive"]
    force = version(rq).matches("2.30") and to_bool(body.get("force", False))
    host = body.get("host")
    if force and not host:
        raise BadRequest("Can't force to a non-provided destination")
    moves.live_migrate(rq.db, rq.ctx, inst, host, force=force,
                       async_checks=version(rq).matches("2.34"))
    return 202, None


def _shelve(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-shelve:shelve", _target(inst))
    server_actions.shelve(rq.db, rq.ctx, inst)
    return 202, None


def _shelve_offload(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-shelve:shelve_offload", _target(inst))
    server_actions.shelve_offload(rq.db, rq.ctx, inst)
    return 202, None


def _unshelve(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-shelve:unshelve", _target(inst))
    if version(rq).matches("2.77"):
        body = _validate(schemas.UNSHELVE, data, rq)["unshelve"] or {}
        host = body.get("host") if version(rq).matches("2.91") else None
        if host:
            authorize(rq, "os-shelve:unshelve_to_host", _target(inst))
        new_az = body["availability_zone"] if "availability_zone" in body else \
            server_actions.KEEP_AZ
        if new_az is None and not version(rq).matches("2.91"):
            new_az = server_actions.KEEP_AZ
        server_actions.unshelve(rq.db, rq.ctx, inst, new_az, host)
        return 202, None
    if data.get("unshelve") is not None:
        raise BadRequest("Invalid input for field/attribute unshelve. Value: "
                         f"{data['unshelve']}. {data['unshelve']!r} is not of type 'null'")
    server_actions.unshelve(rq.db, rq.ctx, inst)
    return 202, None


def _rescue(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-rescue", _target(inst))
    body = _validate(schemas.RESCUE, data, rq)["rescue"] or {}
    password = server_actions.rescue(rq.db, rq.ctx, inst, body.get("adminPass"),
                                     body.get("rescue_image_ref"))
    return 200, {"adminPass": password}


def _rebuild(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    import secrets

    from stackling.compute.api.server_views import detail as _detail

    authorize(rq, "servers:rebuild", _target(inst))
    body = _validate(schemas.REBUILD, data, rq)["rebuild"]
    if "trusted_image_certificates" in body:  # 2.63 (null unsets them: checked too)
        authorize(rq, "servers:rebuild:trusted_certs", _target(inst))
    server_actions.rebuild(rq.db, rq.ctx, inst, body,
                           allowed(rq, "servers:create:zero_disk_flavor"))
    view = _detail(rq, inst, full=version(rq).matches("2.75"), with_groups=True)  # 2.75: whole
    view["adminPass"] = body.get("adminPass") or secrets.token_urlsafe(9)
    if version(rq).matches("2.54"):  # the key pair a rebuild may change, as Nova shows it
        view["key_name"] = inst.key_name
    if version(rq).matches("2.57"):
        view["user_data"] = inst.user_data
    return 202, {"server": view}


def _create_image(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "servers:create_image", _target(inst))
    if block_devices.is_volume_backed(rq.db, inst.uuid):
        authorize(rq, "servers:create_image:allow_volume_backed", _target(inst))
    body = _validate(schemas.CREATE_IMAGE, data, rq)["createImage"]
    image_id = server_actions.create_image(rq.db, rq.ctx, inst, body["name"],
                                           body.get("metadata") or {})
    if version(rq).matches("2.45"):
        return 202, {"image_id": image_id}
    url = f"{rq.base_url}/image/v2/images/{image_id}"
    return 202, None, {"Location": url}


def _crash_dump(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    if not version(rq).matches("2.17"):
        raise BadRequest("There is no such action: trigger_crash_dump")
    authorize(rq, "servers:trigger_crash_dump", _target(inst))
    if data.get("trigger_crash_dump") is not None:
        raise BadRequest("Invalid input for field/attribute trigger_crash_dump. Value: "
                         f"{data['trigger_crash_dump']}. "
                         f"{data['trigger_crash_dump']!r} is not of type 'null'")
    server_actions.trigger_crash_dump(rq.db, rq.ctx, inst)
    return 202, None


def _console_output(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-console-output", _target(inst))
    body = _validate(schemas.CONSOLE_OUTPUT, data, rq)["os-getConsoleOutput"]
    length = body.get("length")
    return {"output": server_actions.console_output(inst, int(length) if length is not None
                                                    else None)}


def _legacy_console(protocol: str, action: str) -> Any:
    """os-getVNCConsole & co (2.1–2.5; replaced by remote-consoles at 2.6)."""
    def run(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
        if version(rq).matches("2.6"):
            raise NotFound("The resource could not be found.")
        authorize(rq, "os-remote-consoles", _target(inst))
        if protocol != "vnc":
            raise server_actions.ConsoleNotImplemented(kind=protocol)
        kind = _validate(schemas.VNC_CONSOLE, data, rq)["os-getVNCConsole"]["type"]
        url = server_actions.get_console(rq.db, inst, protocol, kind, rq.service_url)
        return {"console": {"type": kind, "url": url}}
    return run


def _reset_state(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-admin-actions:reset_state", _target(inst))
    state = _validate(schemas.RESET_STATE, data, rq)["os-resetState"]["state"]
    server_actions.reset_state(rq.db, rq.ctx, inst, state)
    return 202, None


def _admin_action(name: str, policy: str, event: str) -> Any:
    def run(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
        authorize(rq, policy, _target(inst))
        server_actions.record_only(rq.db, rq.ctx, inst, name, event)
        return 202, None
    return run


def _change_password(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    """What Nova answers when the virt driver cannot set a guest's password."""
    authorize(rq, "os-admin-password", _target(inst))
    _validate(schemas.CHANGE_PASSWORD, data, rq)
    moves.check_state(rq.ctx, inst, "changePassword", ("active",))
    raise server_actions.PasswordNotImplemented()


def _soft_delete_action(method: str) -> Any:
    """forceDelete / restore: servers are never soft-deleted here (reclaim_instance_interval
    is 0), so the server is never in the state these need."""
    def run(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
        authorize(rq, f"os-deferred-delete:{'force' if method == 'forceDelete' else 'restore'}",
                  _target(inst))
        moves.check_state(rq.ctx, inst, method, ("soft-delete",))
        return 202, None
    return run


def _create_backup(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    authorize(rq, "os-create-backup", _target(inst))
    body = _validate(schemas.CREATE_BACKUP, data, rq)["createBackup"]
    image_id = server_actions.create_backup(
        rq.db, rq.ctx, inst, body["name"], body["backup_type"], int(body["rotation"]),
        body.get("metadata") or {})
    if version(rq).matches("2.45"):
        return 202, {"image_id": image_id}
    return 202, None, {"Location": f"{rq.base_url}/image/v2/images/{image_id}"}


def _evacuate(rq: ApiRequest, inst: Instance, data: dict[str, Any]) -> Any:
    import secrets

    authorize(rq, "os-evacuate", _target(inst))
    body = _validate(schemas.EVACUATE, data, rq)["evacuate"] or {}
    force = version(rq).matches("2.29") and to_bool(body.get("force", False))
    if force and not body.get("host"):
        raise BadRequest("Can't force to a non-provided destination")
    moves.evacuate(rq.db, rq.ctx, inst, body.get("host"), force=force,
                   stop=version(rq).matches("2.95"))
    if version(rq).matches("2.14"):
        return 200, None
    return 200, {"adminPass": body.get("adminPass") or secrets.token_urlsafe(9)}


ACTIONS = {
    "evacuate": _evacuate,
    "os-resetState": _reset_state,
    "injectNetworkInfo": _admin_action("injectNetworkInfo",
                                       "os-admin-actions:inject_network_info",
                                       "compute_inject_network_info"),
    "resetNetwork": _admin_action("resetNetwork", "os-admin-actions:reset_network",
                                  "compute_reset_network"),
    "changePassword": _change_password,
    "forceDelete": _soft_delete_action("forceDelete"),
    "restore": _soft_delete_action("restore"),
    "createBackup": _create_backup,
    "pause": _simple("os-pause-server:pause", "pause"),
    "unpause": _simple("os-pause-server:unpause", "unpause"),
    "suspend": _simple("os-suspend-server:suspend", "suspend"),
    "resume": _simple("os-suspend-server:resume", "resume"),
    "unrescue": _simple("os-unrescue", "unrescue"),
    "rescue": _rescue,
    "shelve": _shelve,
    "shelveOffload": _shelve_offload,
    "unshelve": _unshelve,
    "rebuild": _rebuild,
    "createImage": _create_image,
    "resize": _resize,
    "confirmResize": _confirm,
    "revertResize": _revert,
    "migrate": _migrate,
    "os-migrateLive": _live,
    "trigger_crash_dump": _crash_dump,
    "os-getConsoleOutput": _console_output,
    "os-getVNCConsole": _legacy_console("vnc", "os-getVNCConsole"),
    "os-getSPICEConsole": _legacy_console("spice", "os-getSPICEConsole"),
    "os-getRDPConsole": _legacy_console("rdp", "os-getRDPConsole"),
    "os-getSerialConsole": _legacy_console("serial", "os-getSerialConsole"),
}


# ------------------------------------------------------------------ remote consoles (2.6)
def _instance(rq: ApiRequest, *, for_update: bool = False) -> Instance:
    from stackling.compute import servers

    return servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"],
                                for_update=for_update)


def remote_consoles(rq: ApiRequest) -> Any:
    since(rq, "2.6")
    inst = _instance(rq)
    authorize(rq, "os-remote-consoles", _target(inst))
    from stackling.compute.api.common import body

    data = body(rq, schemas.REMOTE_CONSOLE, versioned=True)["remote_console"]
    url = server_actions.get_console(rq.db, inst, data["protocol"], data["type"],
                                     rq.service_url)
    return {"remote_console": {"protocol": data["protocol"], "type": data["type"], "url": url}}


def console_auth_token(rq: ApiRequest) -> Any:
    """`GET /os-console-auth-tokens/{token}` (admin): what a console proxy would connect
    to. Nova answers 400 below 2.31 (the rdp-html5 consoles it served are gone); from 2.99
    a query parameter is a 400 and a spice-direct token would carry `tls_port` (there are
    no spice consoles here)."""
    if not version(rq).matches("2.31"):
        raise BadRequest("The server could not comply with the request since it is either "
                         "malformed or otherwise incorrect.")
    known_query(rq, set(), since="2.99")
    authorize(rq, "os-console-auth-tokens")
    info = server_actions.console_connect_info(rq.db, rq.path_params["console_token"])
    if info is None:
        raise NotFound("Token not found")
    return {"console": info}


def console_page(rq: ApiRequest) -> Any:
    """What a console URL opens (public: the token is the credential)."""
    import html
    from urllib.parse import parse_qs

    token = rq.query.get("token") or ""
    if not token:
        token = (parse_qs((rq.query.get("path") or "").lstrip("?")).get("token") or [""])[0]
    inst = server_actions.console_for_token(rq.db, token) if token else None
    if inst is None:
        return HTMLResponse("<html><body><h1>Invalid or expired console token</h1>"
                            "</body></html>", status_code=401)
    log = server_actions.console_output(inst, None) if inst.host else ""
    return HTMLResponse(
        f"<html><head><title>{html.escape(inst.display_name)} console</title></head><body>"
        f"<h1>Console of {html.escape(inst.display_name)} ({inst.uuid})</h1>"
        f"<p>Status {views.status_of(inst)} on host {html.escape(inst.host or '-')}. This "
        "cloud runs no hypervisor, so there is no display to show; the console log "
        f"follows.</p><pre>{html.escape(log)}</pre></body></html>")


# ------------------------------------------------------------------ diagnostics
def diagnostics(rq: ApiRequest) -> Any:
    inst = _instance(rq)
    authorize(rq, "os-server-diagnostics", _target(inst))
    return server_actions.diagnostics(inst, standard=version(rq).matches("2.48"))


# ------------------------------------------------------------------ migrations
def _migration_view(rq: ApiRequest, m: Any) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": m.id, "status": m.status, "instance_uuid": m.instance_uuid,
        "source_node": m.source_node, "source_compute": m.source_compute,
        "dest_node": m.dest_node, "dest_compute": m.dest_compute, "dest_host": m.dest_host,
        "old_instance_type_id": m.old_instance_type_id,
        "new_instance_type_id": m.new_instance_type_id,
        "created_at": views.naive(m.created_at), "updated_at": views.naive(m.updated_at)}
    if version(rq).matches("2.23"):
        view["migration_type"] = m.migration_type
    if version(rq).matches("2.59"):
        view["uuid"] = m.uuid
    if version(rq).matches("2.80"):
        view.update(user_id=m.user_id, project_id=m.project_id)
    return view


@takes_query("hidden", "host", "instance_uuid", "source_compute", "status",
             "migration_type", "limit", "marker", "changes-since", "changes-before",
             "user_id", "project_id")
def migrations_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-migrations:index")
    q = rq.query
    limit = marker = changes_since = before = None
    if version(rq).matches("2.59"):
        marker = q.get("marker")
        limit = page_limit(rq)
        if q.get("changes-since"):
            changes_since = query_timestamp(q.get("changes-since"), "changes-since")
    if version(rq).matches("2.66"):
        before = changes_before(rq, changes_since)
    owner: dict[str, Any] = {}
    if version(rq).matches("2.80"):  # filters by the server's user and project
        owner = {"user_id": q.get("user_id"), "project_id": q.get("project_id")}
    rows = moves.list_migrations(
        rq.db, host=q.get("host"), status=q.get("status"),
        instance_uuid=q.get("instance_uuid"), migration_type=q.get("migration_type"),
        source_compute=q.get("source_compute"), limit=limit, marker=marker,
        changes_since=changes_since, changes_before=before, **owner)
    out: dict[str, Any] = {"migrations": [_migration_view(rq, m) for m in rows]}
    if version(rq).matches("2.59") and limit and len(rows) == limit:
        out["migrations_links"] = [{"rel": "next", "href": (
            f"{links(rq).versioned}/os-migrations?limit={limit}&marker={rows[-1].uuid}")}]
    return out


def server_migrations_index(rq: ApiRequest) -> Any:
    since(rq, "2.23")
    inst = _instance(rq)
    authorize(rq, "servers:migrations:index", _target(inst))
    return {"migrations": [_live_view(rq, m) for m in moves.in_progress_live(rq.db, inst)]}


def _live_view(rq: ApiRequest, m: Any) -> dict[str, Any]:
    view = {"id": m.id, "server_uuid": m.instance_uuid, "status": m.status,
            "source_node": m.source_node, "source_compute": m.source_compute,
            "dest_node": m.dest_node, "dest_compute": m.dest_compute,
            "dest_host": m.dest_host, "created_at": views.naive(m.created_at),
            "updated_at": views.naive(m.updated_at), "memory_total_bytes": 0,
            "memory_processed_bytes": 0, "memory_remaining_bytes": 0,
            "disk_total_bytes": 0, "disk_processed_bytes": 0, "disk_remaining_bytes": 0}
    if version(rq).matches("2.59"):
        view["uuid"] = m.uuid
    if version(rq).matches("2.80"):
        view.update(user_id=m.user_id, project_id=m.project_id)
    return view


def server_migration_show(rq: ApiRequest) -> Any:
    since(rq, "2.23")
    inst = _instance(rq)
    authorize(rq, "servers:migrations:show", _target(inst))
    mid = rq.path_params["migration_id"]
    running = [m for m in moves.in_progress_live(rq.db, inst) if str(m.id) == mid]
    if not running:
        raise NotFound(f"In-progress live migration {mid} is not found for server "
                       f"{inst.uuid}.")
    return {"migration": _live_view(rq, running[0])}


def server_migration_action(rq: ApiRequest) -> Any:
    since(rq, "2.22")
    inst = _instance(rq, for_update=True)
    authorize(rq, "servers:migrations:force_complete", _target(inst))
    data = rq.json()
    if not isinstance(data, dict) or "force_complete" not in data:
        raise BadRequest("There is no such action: "
                         f"{next(iter(data)) if isinstance(data, dict) and data else None}")
    moves.refuse_live_action(rq.db, inst, rq.path_params["migration_id"], "force complete")
    return 202, None


def server_migration_delete(rq: ApiRequest) -> Any:
    since(rq, "2.24")
    inst = _instance(rq, for_update=True)
    authorize(rq, "servers:migrations:delete", _target(inst))
    moves.refuse_live_action(rq.db, inst, rq.path_params["migration_id"],
                             "abort live migration")
    return 202, None


# ------------------------------------------------------------------ topology (2.78)
def topology(rq: ApiRequest) -> Any:
    """A simulated server has no NUMA topology: Nova's body for such a server."""
    since(rq, "2.78")
    inst = _instance(rq)
    policy = "compute:server:topology:index"
    rq.authorize(policy, {"project_id": inst.project_id},
                 exc=Forbidden(f"Policy doesn't allow {policy} to be performed."))
    return {"nodes": [], "pagesize_kb": None}


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers/{server_id}/topology", get=topology)
    s.add("/v2.1/os-migrations", get=migrations_index)
    s.add("/v2.1/servers/{server_id}/migrations", get=server_migrations_index)
    s.add("/v2.1/servers/{server_id}/migrations/{migration_id}", get=server_migration_show,
          delete=server_migration_delete)
    s.add("/v2.1/servers/{server_id}/migrations/{migration_id}/action",
          post=server_migration_action)
    s.add("/v2.1/servers/{server_id}/diagnostics", get=diagnostics)
    s.add("/v2.1/servers/{server_id}/remote-consoles", post=remote_consoles)
    s.add("/v2.1/os-console-auth-tokens/{console_token}", get=console_auth_token)
    s.add("/vnc_lite.html", public=True, get=console_page)
    s.add("/console", public=True, get=console_page)
