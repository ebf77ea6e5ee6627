"""Ports: what the extension attributes (trunk_details, extra_dhcp_opts, dns_assignment,
dns_domain) cost a port create and a list of 500 ports, as the ratio of CPU time (this
process: the in-process app) with the port hooks on against the same calls with them
emptied, interleaved in one run.

    python -m bench.port_extensions

Measured 2026-11-24 on the shared 2-core machine: create 1.78 vs 1.81 ms per port
(ratio 0.98, noise); list of 500 ports 19.5 vs 15.6 ms (ratio 1.25: three indexed
queries per page and the per-port dns_assignment).
"""

from __future__ import annotations

import pathlib
import tempfile
import time

from stackling.network.core import ports
from tests.conftest import make_api

N = "/networking/v2.0"


def main(rounds: int = 6) -> None:
    gen = make_api(pathlib.Path(tempfile.mkdtemp()) / "data")
    api = next(gen)
    net = api.post(f"{N}/networks", json={"network": {"name": "b"}}, user="demo").json()["network"]
    api.post(f"{N}/subnets", user="demo", json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.9.0.0/16"}})
    hooks = (list(ports.RENDER_EXTENSIONS), list(ports.ATTR_WRITERS))

    def mode(on: bool) -> None:
        ports.RENDER_EXTENSIONS[:] = hooks[0] if on else []
        ports.ATTR_WRITERS[:] = hooks[1] if on else []

    def create(n: int) -> float:
        t = time.process_time()
        for _ in range(n):
            api.post(f"{N}/ports", json={"port": {"network_id": net["id"]}}, user="demo")
        return (time.process_time() - t) / n * 1000

    def listing(n: int) -> float:
        t = time.process_time()
        for _ in range(n):
            api.get(f"{N}/ports?limit=500", user="demo")
        return (time.process_time() - t) / n * 1000

    mode(True)
    create(500)
    totals = {True: [0.0, 0.0], False: [0.0, 0.0]}
    for _ in range(rounds):
        for on in (False, True):
            mode(on)
            totals[on][0] += create(30)
            totals[on][1] += listing(5)
    mode(True)
    for on in (False, True):
        print(f"hooks {'on ' if on else 'off'}: create {totals[on][0] / rounds:.2f} ms/port, "
              f"list of 500 {totals[on][1] / rounds:.1f} ms")
    print(f"ratio on/off: create {totals[True][0] / totals[False][0]:.2f}, "
          f"list {totals[True][1] / totals[False][1]:.2f}")
    gen.close()


if __name__ == "__main__":
    main()
