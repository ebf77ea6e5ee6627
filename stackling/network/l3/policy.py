"""Policy defaults of the L3 resources, as upstream's (neutron/conf/policies/{router,
floatingip,network_ip_availability,quotas,auto_allocated_topology}.py): the project's
members write, its readers read, admins do anything; the component registers them with
the core's rules."""

from __future__ import annotations

from stackling.network.policy import ADMIN, MEMBER, READER

POLICIES: dict[str, str] = {
    # routers
    "create_router": MEMBER,
    "create_router:distributed": ADMIN,
    "create_router:ha": ADMIN,
    "create_router:external_gateway_info": MEMBER,
    "create_router:external_gateway_info:network_id": MEMBER,
    "create_router:external_gateway_info:enable_snat": ADMIN,
    "create_router:external_gateway_info:external_fixed_ips": ADMIN,
    "get_router": READER,
    "get_router:distributed": ADMIN,
    "get_router:ha": ADMIN,
    "update_router": MEMBER,
    "update_router:distributed": ADMIN,
    "update_router:ha": ADMIN,
    "update_router:external_gateway_info": MEMBER,
    "update_router:external_gateway_info:network_id": MEMBER,
    "update_router:external_gateway_info:enable_snat": ADMIN,
    "update_router:external_gateway_info:external_fixed_ips": ADMIN,
    "delete_router": MEMBER,
    "add_router_interface": MEMBER,
    "remove_router_interface": MEMBER,
    "add_extraroutes": MEMBER,
    "remove_extraroutes": MEMBER,
    # floating IPs
    "create_floatingip": MEMBER,
    "create_floatingip:floating_ip_address": ADMIN,
    "get_floatingip": READER,
    "update_floatingip": MEMBER,
    "delete_floatingip": MEMBER,
    "get_floatingip_pool": READER,
    # the rest
    "get_network_ip_availability": ADMIN,
    "get_quota": READER,
    "update_quota": ADMIN,
    "delete_quota": ADMIN,
    "get_auto_allocated_topology": READER,
    "delete_auto_allocated_topology": MEMBER,
}
