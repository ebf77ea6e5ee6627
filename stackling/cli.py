"""`stackling serve | db upgrade | db revision | bootstrap | audit | dataplane down | outside |
ssh | ssh-config | connect | proxy`."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from stackling.observability import logs
from stackling.startup_errors import StartupError, explain_startup_error


def _settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for key in ("host", "port", "data_dir", "database_url", "workers"):
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = str(value) if key == "data_dir" else value
    if getattr(args, "log_format", None):
        overrides["observability"] = {"log_format": args.log_format}
    return overrides


def _prepare(overrides: dict[str, Any], settings: Any = None) -> tuple[Any, Any, list[str]]:
    """Migrate, bootstrap what is missing, refresh clouds.yaml: the start of every serve."""
    from stackling.app import BOOTSTRAP_STEPS, create_runtime, load_pending_now
    from stackling.config import load_settings
    from stackling.identity.interface import hash_bootstrap_passwords_ahead, write_clouds_yaml
    from stackling.migrations.schema import upgrade

    settings = settings or load_settings(**overrides)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    runtime = create_runtime(settings, progressive=True)
    upgrade(runtime.db.engine)
    ran: list[str] = []
    if not runtime.bootstrap_complete(BOOTSTRAP_STEPS):
        hash_bootstrap_passwords_ahead(settings)  # while the services load
        load_pending_now(runtime)  # a first start bootstraps every service before serving
        ran = runtime.run_bootstrap()
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    base = settings.public_url or f"http://{host}:{settings.port}"
    write_clouds_yaml(settings.data_dir, f"{base}/identity", settings.identity.region,
                      runtime.state.get("identity.bootstrap_passwords"))
    return settings, runtime, ran


def cmd_serve(args: argparse.Namespace) -> int:
    # No cyclic collections while the cloud loads: app.collect_garbage_again turns the
    # collector back on once the services are loaded.
    gc.disable()
    import uvicorn

    if args.config:
        os.environ["STACKLING_CONFIG"] = str(Path(args.config).resolve())
    from stackling.common import server as http_server
    from stackling.config import load_settings

    overrides = _settings_overrides(args)
    settings = load_settings(**overrides)
    # The port first: a port in use is refused before a database or clouds.yaml is made,
    # and clients connecting while the cloud loads wait in the backlog, not refused.
    sock = _listen(settings.host, settings.port)
    settings, runtime, ran = _prepare(overrides, settings)
    from stackling.access.cloud import record_serving

    record_serving(settings.data_dir, overrides, os.environ)  # read by audit and the host tools
    clouds = (settings.data_dir / "clouds.yaml").resolve()
    if not args.quiet:
        print(f"stackling serving on http://{settings.host}:{settings.port} "
              f"(database: {runtime.db.engine.url.render_as_string(hide_password=True)})")
        if ran:
            print(f"bootstrapped: {', '.join(ran)}")
        cli = Path(sys.executable).parent / "openstack"
        osc = str(cli) if cli.exists() else "openstack"
        if not cli.exists():  # `make run` installs the cloud alone
            print("\n  the openstack CLI is not installed here: `make client` installs it in .venv")
        print(f"\n  export OS_CLIENT_CONFIG_FILE={clouds}\n"
              f"  {osc} --os-cloud stackling token issue\n"
              f"  {osc} --os-cloud stackling server create --flavor m1.tiny --image cirros "
              "--nic auto --wait vm1\n"
              f"  {osc} --os-cloud stackling-admin catalog list\n\n"
              f"  console: http://{settings.host}:{settings.port}/\n", flush=True)
    log_level = "info" if args.verbose else "warning"
    logs.configure(settings.observability.log_format,
                   "info" if args.verbose else settings.observability.log_level)
    # Our own access line replaces uvicorn's; log_config=None keeps our handlers.
    limits = settings.http
    # The header deadline reaches the worker processes through the environment.
    os.environ["STACKLING_HTTP__CLIENT_TIMEOUT"] = str(limits.client_timeout)
    common = dict(host=settings.host, port=settings.port, log_level=log_level,
                  access_log=False, log_config=None, timeout_keep_alive=limits.keep_alive_timeout,
                  # A stop waits this long for requests in flight, then cancels their SQL.
                  timeout_graceful_shutdown=limits.shutdown_timeout,
                  http=http_server.HTTP, loop=http_server.LOOP,
                  # X-Forwarded-* rewrite the client and scheme only behind a trusted proxy
                  proxy_headers=limits.enable_proxy_headers_parsing, forwarded_allow_ips="*")
    # uvicorn.run, on the socket bound above.
    if settings.workers > 1:
        from uvicorn.supervisors import Multiprocess

        runtime.db.dispose()
        gc.enable()  # this process only supervises the workers
        _share_metrics(settings.data_dir)
        os.environ["STACKLING_SERVE_SETTINGS"] = json.dumps(overrides)
        config = uvicorn.Config("stackling.app:asgi_app_factory", factory=True,
                                workers=settings.workers, **common)
        _fork_workers_from_a_server()
        Multiprocess(config, sockets=[sock]).run()
    else:
        from stackling.app import create_app

        server = uvicorn.Server(uvicorn.Config(create_app(runtime), **common))
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
        if not server.started:
            return 3  # uvicorn's start-up failure (the lifespan failed): already logged
    return 0


def _fork_workers_from_a_server() -> None:
    """uvicorn starts each worker with multiprocessing's `spawn`: a new interpreter that
    imports every service again. `forkserver` forks each worker from one clean process
    that did that once (worker_preload; no threads, no connections: a fresh interpreter
    itself, started now, with this environment): 4 workers' start measured 4.3-5.0 CPU
    seconds before, 2.4-2.8 after, and a worker uvicorn restarts is as cheap. uvicorn
    (pinned) takes its multiprocessing context from `uvicorn._subprocess.spawn`."""
    import multiprocessing

    import uvicorn._subprocess

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["stackling.worker_preload"])
    uvicorn._subprocess.spawn = context  # type: ignore[assignment]


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, or one clear line for a port in use (uvicorn would log a
    traceback-like error, after our start-up work)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto
    # says TCP, and an accepted connection inherits this one's; with proto 0 every response
    # written in two parts waited 40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's backlog
    except OSError as exc:
        sock.close()
        raise StartupError(f"port: cannot listen on {host}:{port}: "
                           f"{exc.strerror or exc} (choose another with --port N, "
                           "or `make run PORT=N`)") from None
    sock.set_inheritable(True)  # the worker processes of --workers N serve it too
    return sock


def _share_metrics(data_dir: Path) -> None:
    """Workers write their metrics to one directory that any worker's /metrics reads."""
    import shutil

    from stackling.observability.metrics import MULTIPROC_ENV

    directory = (data_dir / "metrics").resolve()
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(directory)


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from stackling.common.db import make_engine
    from stackling.config import load_settings
    from stackling.migrations.schema import upgrade

    settings = load_settings(**_settings_overrides(args))
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.db_url)
    changed = upgrade(engine)
    engine.dispose()
    print("upgraded" if changed else "already at head")
    return 0


def cmd_db_revision(args: argparse.Namespace) -> int:
    from stackling.config import load_settings
    from stackling.migrations.schema import revision

    settings = load_settings(**_settings_overrides(args))
    revision(settings.db_url, args.message, args.branch)
    return 0


def cmd_bootstrap(args: argparse.Namespace) -> int:
    _, _, ran = _prepare(_settings_overrides(args))
    print("bootstrapped: " + (", ".join(ran) if ran else "nothing to do"))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """Recompute derived state (routed-network placement, bindings, ..., and with the netns
    dataplane the kernel objects: dataplane.wire) and print every difference as a JSON
    line; exit status 1 when there is any."""
    from stackling.access.cloud import serving_settings
    from stackling.app import COMPONENTS
    from stackling.audit import run_audit, wire
    from stackling.common.db import Database
    from stackling.runtime import load_components

    # The services wire themselves when loaded (compute registers what network asks of
    # it, e.g. a segment's host aggregate): the audit needs them as a server has them.
    load_components([path for path, _ in COMPONENTS])
    # the settings the cloud serves with (its data dir's serving.json), not this shell's
    settings = serving_settings(_settings_overrides(args))
    database = Database(settings.db_url)
    try:
        with database.transaction(write=False) as db:
            findings = run_audit(db)
            findings += [f.as_dict() for f in wire.check_wire(db, settings)]
    finally:
        database.dispose()
    if wire.skipped(settings):
        print(f"the wire was not audited: {wire.skipped(settings)}", file=sys.stderr)
    for finding in findings:
        print(json.dumps(finding, sort_keys=True))
    print(f"{len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


def cmd_dataplane_down(args: argparse.Namespace) -> int:
    """Remove every kernel object and process of the cloud (namespaces, links, nftables
    tables, dnsmasq, guests)."""
    from stackling.config import load_settings
    from stackling.dataplane import interface as dataplane

    removed = dataplane.down(load_settings(**_settings_overrides(args)))
    print(f"removed {len(removed)} namespace(s)" + (f": {' '.join(removed)}" if removed else ""))
    return 0


def _outside(args: argparse.Namespace) -> tuple[Any, str]:
    from stackling.access import cloud

    try:
        return cloud.outside(_settings_overrides(args), getattr(args, "os_cloud", None))
    except LookupError as exc:
        raise StartupError(f"{args.command}: {exc}") from None


def _after_dashes(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else words


def cmd_outside(args: argparse.Namespace) -> int:
    """Run CMD in the cloud's outside namespace, where its external network is reachable."""
    _, namespace = _outside(args)
    command = _after_dashes(args.cmd)
    if not command:
        raise StartupError("outside: give a command after --")
    os.execvp("nsenter", ["nsenter", f"--net=/run/netns/{namespace}", "--", *command])
    return 0


def cmd_ssh(args: argparse.Namespace) -> int:
    """OpenSSH's ssh to a server, from inside the cloud's outside namespace."""
    from stackling.access import cloud, ssh

    settings, namespace = _outside(args)
    conn = cloud.connect(args.os_cloud, settings.data_dir, "stackling")
    user, _, name = args.server.rpartition("@")  # USER@SERVER, as ssh takes it
    try:
        server, image = ssh.find(conn, name)
    except LookupError as exc:
        raise StartupError(f"ssh: {exc}") from None
    argv = ssh.command(namespace, settings.data_dir, server,
                       user or args.login or ssh.image_user(image), args.identity, [],
                       _after_dashes(args.remote))
    os.execvp(argv[0], argv)
    return 0


def cmd_ssh_config(args: argparse.Namespace) -> int:
    """Print an OpenSSH client configuration for the cloud's servers and address ranges."""
    from stackling.access import cloud, ssh, ssh_config

    settings, namespace = _outside(args)
    conn = cloud.connect(args.os_cloud, settings.data_dir, "stackling")
    servers = [s.to_dict(original_names=True) for s in conn.compute.servers(details=True)]
    images: dict[str, Any] = {}
    users: dict[str, str | None] = {}
    for server in servers:
        image_id = (server.get("image") or {}).get("id")
        if image_id and image_id not in images:
            found = conn.image.find_image(image_id, ignore_missing=True)
            images[image_id] = found.to_dict() if found else None
        users[server["id"]] = ssh.image_user(images.get(image_id))
    # the external network's range too: a member does not see the subnets of `public`
    cidrs = [settings.network.public_cidr, *(subnet.cidr for subnet in conn.network.subnets())]
    stackling = str(Path(sys.executable).parent / "stackling")
    ssh_config.prune_known_hosts(ssh.known_hosts(settings.data_dir), {s["id"] for s in servers})
    print(ssh_config.render(namespace, stackling, settings.data_dir, servers, users, cidrs,
                            args.identity))
    return 0


def cmd_connect(args: argparse.Namespace) -> int:
    """Relay stdin/stdout to HOST:PORT from inside a namespace (ssh-config's ProxyCommand)."""
    from stackling.access import proxy

    return proxy.relay_stdio(args.namespace, args.host, args.port)


def cmd_proxy(args: argparse.Namespace) -> int:
    """A SOCKS5 proxy on 127.0.0.1 to the cloud's own addresses, inside its namespaces."""
    import asyncio

    from stackling.access import cloud, proxy

    settings, namespace = _outside(args)
    conn = cloud.connect(args.os_cloud, settings.data_dir, "stackling-admin")
    allowed = proxy.CloudAddresses(lambda: proxy.read_cloud(conn))
    allowed.refresh()

    def ready(port: int) -> None:
        print(f"SOCKS5 proxy on 127.0.0.1:{port} to the cloud's {len(allowed.addresses)} "
              f"addresses from {namespace}: e.g. curl --socks5-hostname 127.0.0.1:{port} "
              "http://ADDRESS/", flush=True)

    def log(line: str) -> None:
        if args.verbose:
            print(line, file=sys.stderr, flush=True)

    server = proxy.Socks5(namespace, allowed, log)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(args.port, ready))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stackling")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", default=None, help="data directory (default .stackling)")
        p.add_argument("--database-url", default=None,
                       help="sqlite:///…, postgresql+psycopg://…, mysql+pymysql://…")
        p.add_argument("--config", default=None, help="YAML configuration file")

    serve = sub.add_parser("serve", help="serve every API on one port")
    common(serve)
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--workers", type=int, default=None)
    serve.add_argument("--log-format", choices=["text", "json"], default=None,
                       help="text (default) or json: one object per line")
    serve.add_argument("--verbose", action="store_true")
    serve.add_argument("--quiet", action="store_true")
    serve.set_defaults(fn=cmd_serve)

    db = sub.add_parser("db", help="database schema").add_subparsers(dest="db", required=True)
    up = db.add_parser("upgrade", help="migrate to the latest schema")
    common(up)
    up.set_defaults(fn=cmd_db_upgrade)
    rev = db.add_parser("revision", help="autogenerate a migration (developers)")
    common(rev)
    rev.add_argument("-m", "--message", required=True)
    rev.add_argument("--branch", required=True, help="service branch, e.g. network")
    rev.set_defaults(fn=cmd_db_revision)

    boot = sub.add_parser("bootstrap", help="migrate and create the demo cloud's content")
    common(boot)
    boot.add_argument("--host", default=None)
    boot.add_argument("--port", type=int, default=None)
    boot.set_defaults(fn=cmd_bootstrap)
    audit = sub.add_parser("audit", help="report every difference between derived state "
                                         "(placement, bindings, the dataplane's kernel "
                                         "objects) and what it must be")
    common(audit)
    audit.set_defaults(fn=cmd_audit)
    dp = sub.add_parser("dataplane", help="the cloud's kernel objects (dataplane.driver netns)")
    dp_sub = dp.add_subparsers(dest="dataplane", required=True)
    down = dp_sub.add_parser("down", help="remove every kernel object and process of the cloud")
    common(down)
    down.set_defaults(fn=cmd_dataplane_down)
    outside = sub.add_parser("outside", help="run a command in the cloud's outside namespace")
    common(outside)
    outside.add_argument("--os-cloud", default=None,
                         help="find the cloud from this clouds.yaml entry (as OS_CLOUD)")
    outside.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    outside.set_defaults(fn=cmd_outside)

    def client(p: argparse.ArgumentParser) -> None:
        common(p)
        p.add_argument("--os-cloud", default=None,
                       help="the clouds.yaml entry (as openstackclient; default OS_CLOUD, "
                            "else the data dir's clouds.yaml)")

    ssh = sub.add_parser("ssh", help="ssh to a server through the cloud's outside namespace")
    client(ssh)
    ssh.add_argument("-i", dest="identity", default=None, help="the key pair's private key")
    ssh.add_argument("-l", dest="login", default=None,
                     help="login user (default: the image's os_admin_user or os_distro's)")
    ssh.add_argument("server", help="server name or id ([USER@]SERVER)")
    ssh.add_argument("remote", nargs=argparse.REMAINDER, help="[-- CMD [ARGS...]]")
    ssh.set_defaults(fn=cmd_ssh)
    config = sub.add_parser("ssh-config", help="print an OpenSSH config reaching the guests "
                                               "(ssh -F, scp -F, Ansible)")
    client(config)
    config.add_argument("-i", dest="identity", default=None,
                        help="IdentityFile for every server")
    config.set_defaults(fn=cmd_ssh_config)
    connect = sub.add_parser("connect", help="relay stdio to HOST PORT inside a namespace "
                                             "(ssh-config's ProxyCommand)")
    connect.add_argument("--namespace", required=True)
    connect.add_argument("host")
    connect.add_argument("port", type=int)
    connect.set_defaults(fn=cmd_connect)
    socks = sub.add_parser("proxy", help="a SOCKS5 proxy on 127.0.0.1 to the cloud's addresses")
    client(socks)
    socks.add_argument("--port", type=int, default=1080)
    socks.add_argument("--verbose", action="store_true", help="a line per connection")
    socks.set_defaults(fn=cmd_proxy)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "config", None):
        os.environ["STACKLING_CONFIG"] = str(Path(args.config).resolve())
    try:
        return int(args.fn(args) or 0)
    except StartupError as exc:
        print(f"stackling: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - known start-up mistakes become one line
        message = explain_startup_error(exc)
        if message is None:
            raise
        print(f"stackling: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
