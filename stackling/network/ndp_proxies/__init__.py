"""NDP proxies (`l3-ndp-proxy`, `router-extend-ndp-proxy`)."""
