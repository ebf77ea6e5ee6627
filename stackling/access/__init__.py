"""Host tools that reach a cloud's guests from the machine's own namespace without adding
anything to it: `stackling ssh`, `ssh-config`, `connect` (its ProxyCommand) and `proxy`
(SOCKS5). Each finds the serving cloud from its data dir (cloud.py) and opens its sockets
inside the cloud's outside namespace (netns.py)."""
