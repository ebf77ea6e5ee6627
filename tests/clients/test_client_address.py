"""A live server's access log names the client's address from the socket (issue 19, item
15), not a header any client can send: a request from 127.0.0.2 claiming to be forwarded
for 203.0.113.9 is logged as 127.0.0.2 while proxy headers are not trusted."""

from __future__ import annotations

import time

import httpx


def test_the_access_log_names_the_socket_peer(cloud_factory):
    server = cloud_factory("sqlite")
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(transport=transport, timeout=60) as http:
        r = http.get(f"{server.url}/identity/v3", headers={"X-Forwarded-For": "203.0.113.9"})
    assert r.status_code == 200
    request_id = r.headers["x-openstack-request-id"]
    deadline = time.monotonic() + 60
    while True:  # the line is written as the answer goes out: wait for it
        lines = [line for line in server.log_tail(200_000).splitlines()
                 if request_id in line and "stackling.access" in line]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert lines, server.log_tail(2000)
    assert lines[0].endswith("client=127.0.0.2"), lines[0]
