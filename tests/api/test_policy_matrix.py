# ruff: noqa: E501  (the route table reads best one route per line)
"""Every route of every service, called as five personas, against a declarative table.

Personas: `admin` (admin of project admin), `member` (member of project demo, which owns
the objects below), `reader` (reader only, in demo), `other` (member of another project)
and `unscoped` (a token without a project scope). Each route's expectation is a rule
class from `RULES` (persona -> outcome), with optional per-persona overrides:

- `OK`: the policy let the call through: not 401/403, never a 500; when every id in the
  path is a real object of project demo, also not 404.
- `DENY`: 403 (the caller sees the object but may not do this).
- `HIDE`: 404 (upstream hides the object's existence from this caller).
- `EMPTY`: 200 with every collection in the body empty (a list filtered by policy).
- a status code (`other=400`): exactly that answer, where upstream answers so (neutron
  answers an RBAC row on an object the caller cannot see with a 400 InvalidInput).

How to add a route: add one line to `TABLE`: `service METHOD path rule [body] [persona=outcome...]`,
where `path` is the route template exactly as registered and `body` names a request body
in `BODIES` (a function of the world's ids). Placeholders are filled from `ids` (objects
of project demo made by the member, or fixed values); a placeholder missing there gets
a fake id, which is right only for routes that check the policy before the lookup
(admin-only APIs). DELETE routes that some persona may call get a fresh object per call
from `FRESH`. A route registered without a table line fails `test_every_route_has_an_entry`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

OK, DENY, HIDE, EMPTY = "ok", "403", "404", "empty"
PERSONAS = ("unscoped", "other", "reader", "member", "admin")  # the refused ones first

RULES: dict[str, dict[str, str]] = {
    # lists and reads of shared catalogues: any project-scoped token
    "any-read": dict(admin=OK, member=OK, reader=OK, other=OK, unscoped=DENY),
    # reads of project demo's objects
    "reader-read": dict(admin=OK, member=OK, reader=OK, other=HIDE, unscoped=DENY),
    # creates in the caller's own project
    "member-create": dict(admin=OK, member=OK, reader=DENY, other=OK, unscoped=DENY),
    # writes to project demo's objects (or creates inside them)
    "member-write": dict(admin=OK, member=OK, reader=DENY, other=HIDE, unscoped=DENY),
    "admin-only": dict(admin=OK, member=DENY, reader=DENY, other=DENY, unscoped=DENY),
    # identity: the caller's own token, catalog, projects (any token, even unscoped)
    "self": dict(admin=OK, member=OK, reader=OK, other=OK, unscoped=OK),
    # identity's admin APIs: admin only, refused to everyone else with any token
    "identity-admin": dict(admin=OK, member=DENY, reader=DENY, other=DENY, unscoped=DENY),
    # neutron's admin-only resources (the admin's objects): a list filters every item
    # out (200, empty), a show/update/delete of what the caller may not see is a 404
    "admin-list": dict(admin=OK, member=EMPTY, reader=EMPTY, other=EMPTY, unscoped=DENY),
    "admin-hidden": dict(admin=OK, member=HIDE, reader=HIDE, other=HIDE, unscoped=DENY),
    # routes called with fake ids and empty bodies: only the scope check is decisive
    "fake-ids": dict(admin=OK, member=OK, reader=OK, other=OK, unscoped=DENY),
}

TABLE = """
# ---------------------------------------------------------------- identity
identity GET    /v3/auth/tokens                                   self fake
identity HEAD   /v3/auth/tokens                                   self fake
identity DELETE /v3/auth/tokens                                   self fake
identity GET    /v3/auth/catalog                                  self
identity GET    /v3/auth/projects                                 self
identity GET    /v3/auth/domains                                  self
identity GET    /v3/domains                                       self
identity GET    /v3/domains/{domain_id}                           identity-admin
identity GET    /v3/projects                                      identity-admin
identity POST   /v3/projects                                      identity-admin
identity GET    /v3/projects/{project_id}                         identity-admin
identity PATCH  /v3/projects/{project_id}                         identity-admin
identity DELETE /v3/projects/{project_id}                         identity-admin
identity GET    /v3/users                                         identity-admin
identity POST   /v3/users                                         identity-admin
identity GET    /v3/users/{user_id}                               identity-admin
identity PATCH  /v3/users/{user_id}                               identity-admin
identity DELETE /v3/users/{user_id}                               identity-admin
identity POST   /v3/users/{user_id}/password                      self
identity GET    /v3/users/{user_id}/projects                      identity-admin
identity GET    /v3/roles                                         identity-admin
identity POST   /v3/roles                                         identity-admin
identity GET    /v3/roles/{role_id}                               identity-admin
identity DELETE /v3/roles/{role_id}                               identity-admin
identity PUT    /v3/roles/{prior_role_id}/implies/{implied_role_id}  identity-admin
identity GET    /v3/role_inferences                               identity-admin
identity GET    /v3/services                                      identity-admin
identity GET    /v3/services/{service_id}                         identity-admin
identity GET    /v3/endpoints                                     identity-admin
identity GET    /v3/regions                                       self
identity GET    /v3/projects/{project_id}/users/{user_id}/roles   self
identity PUT    /v3/projects/{project_id}/users/{user_id}/roles/{role_id}     identity-admin
identity GET    /v3/projects/{project_id}/users/{user_id}/roles/{role_id}     identity-admin
identity HEAD   /v3/projects/{project_id}/users/{user_id}/roles/{role_id}     identity-admin
identity DELETE /v3/projects/{project_id}/users/{user_id}/roles/{role_id}     identity-admin
identity GET    /v3/domains/{domain_id}/users/{user_id}/roles     self
identity PUT    /v3/domains/{domain_id}/users/{user_id}/roles/{role_id}       identity-admin
identity GET    /v3/domains/{domain_id}/users/{user_id}/roles/{role_id}       identity-admin
identity HEAD   /v3/domains/{domain_id}/users/{user_id}/roles/{role_id}       identity-admin
identity DELETE /v3/domains/{domain_id}/users/{user_id}/roles/{role_id}       identity-admin
identity GET    /v3/system/users/{user_id}/roles                  self
identity PUT    /v3/system/users/{user_id}/roles/{role_id}        identity-admin
identity GET    /v3/system/users/{user_id}/roles/{role_id}        identity-admin
identity HEAD   /v3/system/users/{user_id}/roles/{role_id}        identity-admin
identity DELETE /v3/system/users/{user_id}/roles/{role_id}        identity-admin
identity GET    /v3/groups                                        identity-admin
identity POST   /v3/groups                                        identity-admin
identity GET    /v3/groups/{group_id}                             identity-admin
identity PATCH  /v3/groups/{group_id}                             identity-admin
identity DELETE /v3/groups/{group_id}                             identity-admin
identity GET    /v3/groups/{group_id}/users                       identity-admin
identity PUT    /v3/groups/{group_id}/users/{user_id}             identity-admin
identity GET    /v3/groups/{group_id}/users/{user_id}             identity-admin
identity HEAD   /v3/groups/{group_id}/users/{user_id}             identity-admin
identity DELETE /v3/groups/{group_id}/users/{user_id}             identity-admin
identity GET    /v3/users/{user_id}/groups                        identity-admin
identity GET    /v3/role_assignments                              identity-admin
identity GET    /v3/projects/{project_id}/groups/{group_id}/roles identity-admin
identity PUT    /v3/projects/{project_id}/groups/{group_id}/roles/{role_id}   identity-admin
identity GET    /v3/projects/{project_id}/groups/{group_id}/roles/{role_id}   identity-admin
identity HEAD   /v3/projects/{project_id}/groups/{group_id}/roles/{role_id}   identity-admin
identity DELETE /v3/projects/{project_id}/groups/{group_id}/roles/{role_id}   identity-admin
identity GET    /v3/domains/{domain_id}/groups/{group_id}/roles   identity-admin
identity PUT    /v3/domains/{domain_id}/groups/{group_id}/roles/{role_id}     identity-admin
identity GET    /v3/domains/{domain_id}/groups/{group_id}/roles/{role_id}     identity-admin
identity HEAD   /v3/domains/{domain_id}/groups/{group_id}/roles/{role_id}     identity-admin
identity DELETE /v3/domains/{domain_id}/groups/{group_id}/roles/{role_id}     identity-admin
identity GET    /v3/system/groups/{group_id}/roles                identity-admin
identity PUT    /v3/system/groups/{group_id}/roles/{role_id}      identity-admin
identity GET    /v3/system/groups/{group_id}/roles/{role_id}      identity-admin
identity HEAD   /v3/system/groups/{group_id}/roles/{role_id}      identity-admin
identity DELETE /v3/system/groups/{group_id}/roles/{role_id}      identity-admin
identity GET    /v3/users/{user_id}/application_credentials       identity-admin
identity POST   /v3/users/{user_id}/application_credentials       identity-admin admin=403
identity GET    /v3/users/{user_id}/application_credentials/{cred_id}   identity-admin
identity DELETE /v3/users/{user_id}/application_credentials/{cred_id}   identity-admin
identity GET    /v3/regions/{region_id}                           self fake
identity POST   /v3/regions                                       identity-admin
identity PUT    /v3/regions/{region_id}                           identity-admin
identity PATCH  /v3/regions/{region_id}                           identity-admin
identity DELETE /v3/regions/{region_id}                           identity-admin
identity POST   /v3/services                                      identity-admin
identity PATCH  /v3/services/{service_id}                         identity-admin
identity DELETE /v3/services/{service_id}                         identity-admin
identity POST   /v3/endpoints                                     identity-admin
identity GET    /v3/endpoints/{endpoint_id}                       identity-admin
identity PATCH  /v3/endpoints/{endpoint_id}                       identity-admin
identity DELETE /v3/endpoints/{endpoint_id}                       identity-admin
identity POST   /v3/domains                                       identity-admin
identity PATCH  /v3/domains/{domain_id}                           identity-admin
identity DELETE /v3/domains/{domain_id}                           identity-admin
identity PATCH  /v3/roles/{role_id}                               identity-admin
identity GET    /v3/roles/{prior_role_id}/implies                 identity-admin
identity GET    /v3/roles/{prior_role_id}/implies/{implied_role_id}  identity-admin
identity HEAD   /v3/roles/{prior_role_id}/implies/{implied_role_id}  identity-admin
identity DELETE /v3/roles/{prior_role_id}/implies/{implied_role_id}  identity-admin
identity GET    /v3/projects/{project_id}/tags                    identity-admin
identity PUT    /v3/projects/{project_id}/tags                    identity-admin
identity DELETE /v3/projects/{project_id}/tags                    identity-admin
identity GET    /v3/projects/{project_id}/tags/{tag}              identity-admin
identity HEAD   /v3/projects/{project_id}/tags/{tag}              identity-admin
identity PUT    /v3/projects/{project_id}/tags/{tag}              identity-admin
identity DELETE /v3/projects/{project_id}/tags/{tag}              identity-admin
identity GET    /v3/credentials                                   self
identity POST   /v3/credentials                                   self
identity GET    /v3/credentials/{credential_id}                   identity-admin
identity PATCH  /v3/credentials/{credential_id}                   identity-admin
identity DELETE /v3/credentials/{credential_id}                   identity-admin
identity GET    /v3/users/{user_id}/credentials/OS-EC2            identity-admin
identity POST   /v3/users/{user_id}/credentials/OS-EC2            identity-admin
identity GET    /v3/users/{user_id}/credentials/OS-EC2/{credential_id}  identity-admin
identity DELETE /v3/users/{user_id}/credentials/OS-EC2/{credential_id}  identity-admin
identity GET    /v3/OS-TRUST/trusts                               identity-admin
identity POST   /v3/OS-TRUST/trusts                               self
identity GET    /v3/OS-TRUST/trusts/{trust_id}                    self fake
identity DELETE /v3/OS-TRUST/trusts/{trust_id}                    self fake
identity GET    /v3/OS-TRUST/trusts/{trust_id}/roles              self fake
identity GET    /v3/OS-TRUST/trusts/{trust_id}/roles/{role_id}    self fake
identity HEAD   /v3/OS-TRUST/trusts/{trust_id}/roles/{role_id}    self fake
identity GET    /v3/policies                                      identity-admin
identity POST   /v3/policies                                      identity-admin
identity GET    /v3/policies/{policy_id}                          identity-admin
identity PATCH  /v3/policies/{policy_id}                          identity-admin
identity DELETE /v3/policies/{policy_id}                          identity-admin
identity GET    /v3/users/{user_id}/access_rules                  identity-admin
identity GET    /v3/users/{user_id}/access_rules/{access_rule_id} identity-admin
identity DELETE /v3/users/{user_id}/access_rules/{access_rule_id} identity-admin
# ---------------------------------------------------------------- network
network GET    /v2.0/extensions                                   any-read
network GET    /v2.0/extensions/{alias}                           any-read
network GET    /v2.0/networks                                     any-read
network POST   /v2.0/networks                                     member-create  network
network GET    /v2.0/networks/{network_id}                        reader-read
network PUT    /v2.0/networks/{network_id}                        member-write   network_update
network DELETE /v2.0/networks/{network_id}                        member-write
network GET    /v2.0/subnets                                      any-read
network POST   /v2.0/subnets                                      member-write   subnet
network GET    /v2.0/subnets/{subnet_id}                          reader-read
network PUT    /v2.0/subnets/{subnet_id}                          member-write   subnet_update
network DELETE /v2.0/subnets/{subnet_id}                          member-write
network GET    /v2.0/subnetpools                                  any-read
network POST   /v2.0/subnetpools                                  member-create  subnetpool
network GET    /v2.0/subnetpools/{subnetpool_id}                  reader-read
network PUT    /v2.0/subnetpools/{subnetpool_id}                  member-write   subnetpool_update
network DELETE /v2.0/subnetpools/{subnetpool_id}                  member-write
network GET    /v2.0/ports                                        any-read
network POST   /v2.0/ports                                        member-write   port
network GET    /v2.0/ports/{port_id}                              reader-read
network PUT    /v2.0/ports/{port_id}                              member-write   port_update
network DELETE /v2.0/ports/{port_id}                              member-write
network GET    /v2.0/security_groups                              any-read
network POST   /v2.0/security_groups                              member-create  sg
network GET    /v2.0/security_groups/{sg_id}                      reader-read
network PUT    /v2.0/security_groups/{sg_id}                      member-write   sg_update
network DELETE /v2.0/security_groups/{sg_id}                      member-write
network GET    /v2.0/security_group_rules                         any-read
network POST   /v2.0/security_group_rules                         member-write   rule
network GET    /v2.0/security_group_rules/{rule_id}               reader-read
network DELETE /v2.0/security_group_rules/{rule_id}               member-write
network GET    /v2.0/availability_zones                           any-read
network GET    /v2.0/network_segment_ranges                       admin-list
network POST   /v2.0/network_segment_ranges                       admin-only     segment_range
network GET    /v2.0/network_segment_ranges/{range_id}            admin-hidden
network PUT    /v2.0/network_segment_ranges/{range_id}            admin-hidden   segment_range_update
network DELETE /v2.0/network_segment_ranges/{range_id}            admin-hidden
network GET    /v2.0/segments                                     admin-list
network POST   /v2.0/segments                                     admin-only     segment
network GET    /v2.0/segments/{segment_id}                        admin-hidden
network PUT    /v2.0/segments/{segment_id}                        admin-hidden   segment_update
network DELETE /v2.0/segments/{segment_id}                        admin-hidden
network GET    /v2.0/routers                                      any-read
network POST   /v2.0/routers                                      member-create  router
network GET    /v2.0/routers/{router_id}                          reader-read
network PUT    /v2.0/routers/{router_id}                          member-write   router_update
network DELETE /v2.0/routers/{router_id}                          member-write
network PUT    /v2.0/routers/{router_id}/add_router_interface     member-write   router_interface
network PUT    /v2.0/routers/{router_id}/remove_router_interface  member-write   router_interface admin=404
network PUT    /v2.0/routers/{router_id}/add_extraroutes          member-write   extraroutes
network PUT    /v2.0/routers/{router_id}/remove_extraroutes       member-write   extraroutes
network PUT    /v2.0/routers/{router_id}/add_external_gateways    member-write   router_gateways
network PUT    /v2.0/routers/{router_id}/update_external_gateways  member-write  router_gateways
network PUT    /v2.0/routers/{router_id}/remove_external_gateways  member-write  router_gateways_none
network GET    /v2.0/floatingips                                  any-read
network POST   /v2.0/floatingips                                  member-create  floatingip
network GET    /v2.0/floatingips/{floatingip_id}                  reader-read
network PUT    /v2.0/floatingips/{floatingip_id}                  member-write   floatingip_update
network DELETE /v2.0/floatingips/{floatingip_id}                  member-write
network GET    /v2.0/floatingip_pools                             any-read
network GET    /v2.0/network_ip_availabilities                    any-read
network GET    /v2.0/network_ip_availabilities/{network_id}       admin-only member=404 reader=404 other=404
network GET    /v2.0/quotas                                       admin-only
network GET    /v2.0/quotas/project                               any-read
network GET    /v2.0/quotas/tenant                                any-read
network GET    /v2.0/quotas/{project_id}                          reader-read    other=403
network PUT    /v2.0/quotas/{project_id}                          admin-only     quota
network DELETE /v2.0/quotas/{project_id}                          admin-only
network GET    /v2.0/quotas/{project_id}/default                  reader-read    other=403
network GET    /v2.0/quotas/{project_id}/details                  reader-read    other=403
network GET    /v2.0/auto_allocated_topology/{project_id}         reader-read    other=403
network DELETE /v2.0/auto_allocated_topology/{project_id}         member-write   other=403
network GET    /v2.0/{collection}/{resource_id}/tags              reader-read
network PUT    /v2.0/{collection}/{resource_id}/tags              member-write   tags
network DELETE /v2.0/{collection}/{resource_id}/tags              member-write
network PUT    /v2.0/{collection}/{resource_id}/tags/{tag}        member-write
network GET    /v2.0/{collection}/{resource_id}/tags/{tag}        reader-read
network DELETE /v2.0/{collection}/{resource_id}/tags/{tag}        member-write admin=404
network GET    /v2.0/agents                                       admin-list
network PUT    /v2.0/subnetpools/{subnetpool_id}/add_prefixes     member-write   prefixes
network PUT    /v2.0/subnetpools/{subnetpool_id}/remove_prefixes  member-write   prefixes
network GET    /v2.0/rbac_policies                                any-read
network POST   /v2.0/rbac_policies                                member-write   rbac_policy other=400
network GET    /v2.0/rbac_policies/{rbac_policy_id}               reader-read
network PUT    /v2.0/rbac_policies/{rbac_policy_id}               member-write   rbac_policy_update
network DELETE /v2.0/rbac_policies/{rbac_policy_id}               member-write
network GET    /v2.0/address_scopes                               any-read
network POST   /v2.0/address_scopes                               member-create  address_scope
network GET    /v2.0/address_scopes/{address_scope_id}            reader-read
network PUT    /v2.0/address_scopes/{address_scope_id}            member-write   address_scope_update
network DELETE /v2.0/address_scopes/{address_scope_id}            member-write
network GET    /v2.0/agents/{agent_id}                            admin-hidden
network PUT    /v2.0/agents/{agent_id}                            admin-hidden   agent
network DELETE /v2.0/agents/{agent_id}                            admin-hidden
network GET    /v2.0/agents/{agent_id}/dhcp-networks              admin-only
network GET    /v2.0/networks/{network_id}/dhcp-agents            admin-only
network GET    /v2.0/agents/{agent_id}/l3-routers                 admin-only
network GET    /v2.0/routers/{router_id}/l3-agents                admin-only
network GET    /v2.0/trunks                                       any-read
network POST   /v2.0/trunks                                       member-create  trunk other=404
network GET    /v2.0/trunks/{trunk_id}                            reader-read
network PUT    /v2.0/trunks/{trunk_id}                            member-write   trunk_update
network DELETE /v2.0/trunks/{trunk_id}                            member-write
network PUT    /v2.0/trunks/{trunk_id}/add_subports               member-write   sub_ports
network PUT    /v2.0/trunks/{trunk_id}/remove_subports            member-write   sub_ports
network GET    /v2.0/trunks/{trunk_id}/get_subports               reader-read
network GET    /v2.0/address_groups                               any-read
network POST   /v2.0/address_groups                               member-create  address_group
network GET    /v2.0/address_groups/{address_group_id}            reader-read
network PUT    /v2.0/address_groups/{address_group_id}            member-write   address_group_update
network DELETE /v2.0/address_groups/{address_group_id}            member-write
network PUT    /v2.0/address_groups/{address_group_id}/add_addresses     member-write   addresses
network PUT    /v2.0/address_groups/{address_group_id}/remove_addresses  member-write   addresses
network GET    /v2.0/default_security_group_rules                 any-read
network POST   /v2.0/default_security_group_rules                 admin-only     default_sg_rule
network GET    /v2.0/default_security_group_rules/{default_rule_id}  any-read
network DELETE /v2.0/default_security_group_rules/{default_rule_id}  admin-only
network GET    /v2.0/floatingips/{pf_floatingip_id}/port_forwardings  reader-read
network POST   /v2.0/floatingips/{pf_floatingip_id}/port_forwardings  member-write   port_forwarding
network GET    /v2.0/floatingips/{pf_floatingip_id}/port_forwardings/{port_forwarding_id}  reader-read
network PUT    /v2.0/floatingips/{pf_floatingip_id}/port_forwardings/{port_forwarding_id}  member-write   port_forwarding_update
network DELETE /v2.0/floatingips/{pf_floatingip_id}/port_forwardings/{port_forwarding_id}  member-write
network GET    /v2.0/routers/{router_id}/conntrack_helpers        reader-read
network POST   /v2.0/routers/{router_id}/conntrack_helpers        member-write   conntrack_helper
network GET    /v2.0/routers/{router_id}/conntrack_helpers/{conntrack_helper_id}  reader-read
network PUT    /v2.0/routers/{router_id}/conntrack_helpers/{conntrack_helper_id}  member-write   conntrack_helper_update
network DELETE /v2.0/routers/{router_id}/conntrack_helpers/{conntrack_helper_id}  member-write
network GET    /v2.0/metering/metering-labels                     admin-list
network POST   /v2.0/metering/metering-labels                     admin-only     metering_label
network GET    /v2.0/metering/metering-labels/{metering_label_id}  admin-hidden
network DELETE /v2.0/metering/metering-labels/{metering_label_id}  admin-hidden
network GET    /v2.0/metering/metering-label-rules                admin-list
network POST   /v2.0/metering/metering-label-rules                admin-only     metering_label_rule
network GET    /v2.0/metering/metering-label-rules/{metering_label_rule_id}  admin-hidden
network DELETE /v2.0/metering/metering-label-rules/{metering_label_rule_id}  admin-hidden
network GET    /v2.0/service_providers                            any-read
network GET    /v2.0/flavors                                      any-read
network POST   /v2.0/flavors                                      admin-only     network_flavor
network GET    /v2.0/flavors/{network_flavor_id}                  any-read
network PUT    /v2.0/flavors/{network_flavor_id}                  admin-only     network_flavor_update
network DELETE /v2.0/flavors/{network_flavor_id}                  admin-only
network GET    /v2.0/flavors/{network_flavor_id}/next_providers   any-read
network POST   /v2.0/flavors/{network_flavor_id}/service_profiles  admin-only    flavor_profile_assoc
network DELETE /v2.0/flavors/{network_flavor_id}/service_profiles/{service_profile_id}  admin-only
network GET    /v2.0/service_profiles                             admin-list
network POST   /v2.0/service_profiles                             admin-only     service_profile
network GET    /v2.0/service_profiles/{service_profile_id}        admin-hidden
network PUT    /v2.0/service_profiles/{service_profile_id}        admin-hidden   service_profile_update
network DELETE /v2.0/service_profiles/{service_profile_id}        admin-hidden
# logs: admins and the project's managers (the member persona is no manager)
network GET    /v2.0/log/loggable-resources                       admin-list
network GET    /v2.0/log/logs                                     admin-list
network POST   /v2.0/log/logs                                     admin-only     network_log
network GET    /v2.0/log/logs/{log_id}                            admin-hidden
network PUT    /v2.0/log/logs/{log_id}                            admin-hidden   network_log_update
network DELETE /v2.0/log/logs/{log_id}                            admin-hidden
network GET    /v2.0/local_ips                                    any-read
network POST   /v2.0/local_ips                                    member-create  local_ip other=404
network GET    /v2.0/local_ips/{local_ip_id}                      reader-read
network PUT    /v2.0/local_ips/{local_ip_id}                      member-write   local_ip_update
network DELETE /v2.0/local_ips/{local_ip_id}                      member-write
network GET    /v2.0/local_ips/{local_ip_id}/port_associations    reader-read
network POST   /v2.0/local_ips/{local_ip_id}/port_associations    member-write   local_ip_assoc
network DELETE /v2.0/local_ips/{local_ip_id}/port_associations/{fixed_port_id}  member-write
network GET    /v2.0/ports/{binding_port_id}/bindings             admin-list     other=404
network POST   /v2.0/ports/{binding_port_id}/bindings             admin-only     port_binding
network GET    /v2.0/ports/{binding_port_id}/bindings/{host}      admin-hidden
network DELETE /v2.0/ports/{binding_port_id}/bindings/{host}      admin-hidden
network PUT    /v2.0/ports/{binding_port_id}/bindings/{host}/activate  admin-hidden
network GET    /v2.0/ndp_proxies                                  any-read
network POST   /v2.0/ndp_proxies                                  member-create  ndp_proxy other=404
network GET    /v2.0/ndp_proxies/{ndp_proxy_id}                   reader-read
network PUT    /v2.0/ndp_proxies/{ndp_proxy_id}                   member-write   ndp_proxy_update
network DELETE /v2.0/ndp_proxies/{ndp_proxy_id}                   member-write
network GET    /v2.0/qos/policies                                 any-read
network POST   /v2.0/qos/policies                                 admin-only     qos_policy
network GET    /v2.0/qos/policies/{qos_policy_id}                 reader-read
network PUT    /v2.0/qos/policies/{qos_policy_id}                 admin-only     qos_policy_update other=404
network DELETE /v2.0/qos/policies/{qos_policy_id}                 admin-only     other=404
network GET    /v2.0/qos/rule-types                               any-read
network GET    /v2.0/qos/rule-types/{rule_type}                   admin-only
network GET    /v2.0/qos/policies/{qos_policy_id}/bandwidth_limit_rules reader-read
network POST   /v2.0/qos/policies/{qos_policy_id}/bandwidth_limit_rules admin-only     qos_bandwidth_limit other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/bandwidth_limit_rules/{bandwidth_limit_rule_id} reader-read
network PUT    /v2.0/qos/policies/{qos_policy_id}/bandwidth_limit_rules/{bandwidth_limit_rule_id} admin-only     qos_bandwidth_limit_update other=404
network DELETE /v2.0/qos/policies/{qos_policy_id}/bandwidth_limit_rules/{bandwidth_limit_rule_id} admin-only     other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/dscp_marking_rules reader-read
network POST   /v2.0/qos/policies/{qos_policy_id}/dscp_marking_rules admin-only     qos_dscp_marking other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/dscp_marking_rules/{dscp_marking_rule_id} reader-read
network PUT    /v2.0/qos/policies/{qos_policy_id}/dscp_marking_rules/{dscp_marking_rule_id} admin-only     qos_dscp_marking_update other=404
network DELETE /v2.0/qos/policies/{qos_policy_id}/dscp_marking_rules/{dscp_marking_rule_id} admin-only     other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/minimum_bandwidth_rules reader-read
network POST   /v2.0/qos/policies/{qos_policy_id}/minimum_bandwidth_rules admin-only     qos_minimum_bandwidth other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/minimum_bandwidth_rules/{minimum_bandwidth_rule_id} reader-read
network PUT    /v2.0/qos/policies/{qos_policy_id}/minimum_bandwidth_rules/{minimum_bandwidth_rule_id} admin-only     qos_minimum_bandwidth_update other=404
network DELETE /v2.0/qos/policies/{qos_policy_id}/minimum_bandwidth_rules/{minimum_bandwidth_rule_id} admin-only     other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/minimum_packet_rate_rules reader-read
network POST   /v2.0/qos/policies/{qos_policy_id}/minimum_packet_rate_rules admin-only     qos_minimum_packet_rate other=404
network GET    /v2.0/qos/policies/{qos_policy_id}/minimum_packet_rate_rules/{minimum_packet_rate_rule_id} reader-read
network PUT    /v2.0/qos/policies/{qos_policy_id}/minimum_packet_rate_rules/{minimum_packet_rate_rule_id} admin-only     qos_minimum_packet_rate_update other=404
network DELETE /v2.0/qos/policies/{qos_policy_id}/minimum_packet_rate_rules/{minimum_packet_rate_rule_id} admin-only     other=404
# ---------------------------------------------------------------- placement
placement GET    /resource_classes                                admin-only
placement POST   /resource_classes                                admin-only
placement GET    /resource_classes/{name}                         admin-only
placement PUT    /resource_classes/{name}                         admin-only
placement DELETE /resource_classes/{name}                         admin-only
placement GET    /resource_providers                              admin-only
placement POST   /resource_providers                              admin-only
placement GET    /resource_providers/{uuid}                       admin-only
placement PUT    /resource_providers/{uuid}                       admin-only
placement DELETE /resource_providers/{uuid}                       admin-only
placement GET    /resource_providers/{uuid}/inventories           admin-only
placement POST   /resource_providers/{uuid}/inventories           admin-only
placement PUT    /resource_providers/{uuid}/inventories           admin-only
placement DELETE /resource_providers/{uuid}/inventories           admin-only
placement GET    /resource_providers/{uuid}/inventories/{resource_class}     admin-only
placement PUT    /resource_providers/{uuid}/inventories/{resource_class}     admin-only
placement DELETE /resource_providers/{uuid}/inventories/{resource_class}     admin-only
placement GET    /resource_providers/{uuid}/usages                admin-only
placement GET    /resource_providers/{uuid}/aggregates            admin-only
placement PUT    /resource_providers/{uuid}/aggregates            admin-only
placement GET    /resource_providers/{uuid}/allocations           admin-only
placement GET    /resource_providers/{uuid}/traits                admin-only
placement PUT    /resource_providers/{uuid}/traits                admin-only
placement DELETE /resource_providers/{uuid}/traits                admin-only
placement POST   /allocations                                     admin-only
placement GET    /allocations/{consumer_uuid}                     admin-only
placement PUT    /allocations/{consumer_uuid}                     admin-only
placement DELETE /allocations/{consumer_uuid}                     admin-only
placement GET    /allocation_candidates                           admin-only
placement GET    /traits                                          admin-only
placement GET    /traits/{name}                                   admin-only
placement PUT    /traits/{name}                                   admin-only
placement DELETE /traits/{name}                                   admin-only
placement GET    /usages                                          any-read    fake
placement POST   /reshaper                                        admin-only
# ---------------------------------------------------------------- compute
compute GET    /v2.1/servers                                      any-read
compute POST   /v2.1/servers                                      member-create  server
compute GET    /v2.1/servers/detail                               any-read
compute GET    /v2.1/servers/{server_id}                          reader-read
compute PUT    /v2.1/servers/{server_id}                          member-write   server_update
compute DELETE /v2.1/servers/{server_id}                          member-write
compute POST   /v2.1/servers/{server_id}/action                   member-write   server_action
compute GET    /v2.1/servers/{server_id}/os-instance-actions      reader-read
compute GET    /v2.1/servers/{server_id}/os-instance-actions/{request_id}   reader-read
compute GET    /v2.1/servers/{server_id}/metadata                 reader-read
compute POST   /v2.1/servers/{server_id}/metadata                 member-write   metadata
compute PUT    /v2.1/servers/{server_id}/metadata                 member-write   metadata
compute GET    /v2.1/servers/{server_id}/metadata/{key}           reader-read
compute PUT    /v2.1/servers/{server_id}/metadata/{key}           member-write   metadata_item
compute DELETE /v2.1/servers/{server_id}/metadata/{key}           member-write admin=404
compute GET    /v2.1/servers/{server_id}/tags                     reader-read
compute PUT    /v2.1/servers/{server_id}/tags                     member-write   server_tags
compute DELETE /v2.1/servers/{server_id}/tags                     member-write
compute GET    /v2.1/servers/{server_id}/tags/{tag}               reader-read
compute PUT    /v2.1/servers/{server_id}/tags/{tag}               member-write
compute DELETE /v2.1/servers/{server_id}/tags/{tag}               member-write admin=404
compute GET    /v2.1/servers/{server_id}/ips                      reader-read
compute GET    /v2.1/servers/{server_id}/ips/{network_label}      reader-read fake
compute GET    /v2.1/servers/{server_id}/os-interface             reader-read
compute POST   /v2.1/servers/{server_id}/os-interface             member-write   interface
compute GET    /v2.1/servers/{server_id}/os-interface/{port_id}   reader-read fake
compute DELETE /v2.1/servers/{server_id}/os-interface/{port_id}   member-write fake
compute GET    /v2.1/flavors                                      any-read
compute POST   /v2.1/flavors                                      admin-only     flavor
compute GET    /v2.1/flavors/detail                               any-read
compute GET    /v2.1/flavors/{flavor_id}                          any-read
compute PUT    /v2.1/flavors/{flavor_id}                          admin-only     flavor_update
compute DELETE /v2.1/flavors/{flavor_id}                          admin-only
compute GET    /v2.1/flavors/{flavor_id}/os-flavor-access         admin-only     admin=404
compute POST   /v2.1/flavors/{flavor_id}/action                   admin-only     flavor_access
compute GET    /v2.1/flavors/{flavor_id}/os-extra_specs           any-read
compute POST   /v2.1/flavors/{flavor_id}/os-extra_specs           admin-only     extra_specs
compute GET    /v2.1/flavors/{flavor_id}/os-extra_specs/{key}     any-read
compute PUT    /v2.1/flavors/{flavor_id}/os-extra_specs/{key}     admin-only     extra_spec
compute DELETE /v2.1/flavors/{flavor_id}/os-extra_specs/{key}     admin-only
compute GET    /v2.1/os-keypairs                                  any-read
compute POST   /v2.1/os-keypairs                                  any-read       keypair
compute GET    /v2.1/os-keypairs/{name}                           any-read admin=404 reader=404 other=404
compute DELETE /v2.1/os-keypairs/{name}                           any-read admin=404 reader=404 other=404
compute GET    /v2.1/os-services                                  admin-only
compute PUT    /v2.1/os-services/{action}                         admin-only
compute DELETE /v2.1/os-services/{action}                         admin-only
compute GET    /v2.1/os-hypervisors                               admin-only
compute GET    /v2.1/os-hypervisors/detail                        admin-only
compute GET    /v2.1/os-hypervisors/statistics                    admin-only
compute GET    /v2.1/os-hypervisors/{hypervisor_id}               admin-only
compute GET    /v2.1/os-hypervisors/{hypervisor_id}/uptime        admin-only
compute GET    /v2.1/os-aggregates                                admin-only
compute POST   /v2.1/os-aggregates                                admin-only
compute GET    /v2.1/os-aggregates/{aggregate_id}                 admin-only
compute PUT    /v2.1/os-aggregates/{aggregate_id}                 admin-only
compute DELETE /v2.1/os-aggregates/{aggregate_id}                 admin-only
compute POST   /v2.1/os-aggregates/{aggregate_id}/action          admin-only aggregate_action
compute POST   /v2.1/os-aggregates/{aggregate_id}/images          admin-only     mv=2.81
compute GET    /v2.1/os-availability-zone                         any-read
compute GET    /v2.1/os-availability-zone/detail                  admin-only
compute GET    /v2.1/limits                                       any-read
compute GET    /v2.1/extensions                                   any-read
compute GET    /v2.1/os-server-groups                             any-read
compute POST   /v2.1/os-server-groups                             member-create  server_group
compute GET    /v2.1/os-server-groups/{group_id}                  reader-read    other=403
compute DELETE /v2.1/os-server-groups/{group_id}                  member-write   other=403
compute GET    /v2.1/os-quota-sets/{project_id}                   reader-read    other=403
compute PUT    /v2.1/os-quota-sets/{project_id}                   admin-only     quota_set
compute DELETE /v2.1/os-quota-sets/{project_id}                   admin-only
compute GET    /v2.1/os-quota-sets/{project_id}/defaults          any-read
compute GET    /v2.1/os-quota-sets/{project_id}/detail            reader-read    other=403
compute GET    /v2.1/os-quota-class-sets/{class_name}             admin-only
compute PUT    /v2.1/os-quota-class-sets/{class_name}             admin-only     quota_class_set
compute GET    /v2.1/os-migrations                                admin-only
compute GET    /v2.1/os-simple-tenant-usage                       admin-only
compute GET    /v2.1/os-simple-tenant-usage/{tenant_id}           any-read
compute GET    /v2.1/os-hosts                                     admin-only     mv=2.42
compute GET    /v2.1/os-hosts/{host_name}                         admin-only     mv=2.42
compute PUT    /v2.1/os-hosts/{host_name}                         admin-only     mv=2.42
compute GET    /v2.1/os-hosts/{host_name}/startup                 admin-only     mv=2.42
compute GET    /v2.1/os-hosts/{host_name}/shutdown                admin-only     mv=2.42
compute GET    /v2.1/os-hosts/{host_name}/reboot                  admin-only     mv=2.42
compute GET    /v2.1/os-hypervisors/{hypervisor_id}/search        admin-only     mv=2.52
compute GET    /v2.1/os-hypervisors/{hypervisor_id}/servers       admin-only     mv=2.52
compute GET    /v2.1/os-instance_usage_audit_log                  admin-only
compute GET    /v2.1/os-instance_usage_audit_log/{before_timestamp}  admin-only
compute GET    /v2.1/extensions/{alias}                           fake-ids
# Nova's image proxy (up to 2.35): Glance's rules on the caller's behalf
compute GET    /v2.1/images                                       any-read       mv=2.35
compute GET    /v2.1/images/detail                                any-read       mv=2.35
compute GET    /v2.1/images/{image_id}                            reader-read    mv=2.35
compute DELETE /v2.1/images/{image_id}                            member-write   mv=2.35
compute GET    /v2.1/images/{image_id}/metadata                   reader-read    mv=2.35
compute POST   /v2.1/images/{image_id}/metadata                   member-write   mv=2.35 image_meta
compute PUT    /v2.1/images/{image_id}/metadata                   member-write   mv=2.35 image_meta
compute GET    /v2.1/images/{image_id}/metadata/{key}             reader-read    mv=2.35
compute PUT    /v2.1/images/{image_id}/metadata/{key}             member-write   mv=2.35 image_meta_item
compute DELETE /v2.1/images/{image_id}/metadata/{key}             member-write   mv=2.35 admin=404
compute GET    /v2.1/servers/{server_id}/migrations               admin-only other=404
compute GET    /v2.1/servers/{server_id}/migrations/{migration_id}          admin-only other=404
compute DELETE /v2.1/servers/{server_id}/migrations/{migration_id}          admin-only other=404
compute POST   /v2.1/servers/{server_id}/migrations/{migration_id}/action   admin-only other=404
compute GET    /v2.1/servers/{server_id}/diagnostics              admin-only other=404
compute GET    /v2.1/servers/{server_id}/topology                 reader-read    mv=2.78
compute GET    /v2.1/servers/{server_id}/shares                   reader-read    mv=2.97
compute POST   /v2.1/servers/{server_id}/shares                   member-write   mv=2.97 share admin=409 member=409
compute GET    /v2.1/servers/{server_id}/shares/{share_id}        reader-read    mv=2.97 admin=404 member=404 reader=404
compute DELETE /v2.1/servers/{server_id}/shares/{share_id}        member-write   mv=2.97 admin=409 member=409
compute GET    /v2.1/servers/{server_id}/os-volume_attachments    reader-read
compute POST   /v2.1/servers/{server_id}/os-volume_attachments    member-write fake volume_attachment
compute GET    /v2.1/servers/{server_id}/os-volume_attachments/{volume_id}  reader-read fake
compute PUT    /v2.1/servers/{server_id}/os-volume_attachments/{volume_id}  admin-only fake volume_attachment other=404
compute DELETE /v2.1/servers/{server_id}/os-volume_attachments/{volume_id}  member-write fake
compute GET    /v2.1/servers/{server_id}/os-server-password       reader-read
compute DELETE /v2.1/servers/{server_id}/os-server-password       member-write
compute POST   /v2.1/servers/{server_id}/remote-consoles          member-write   console
compute GET    /v2.1/os-console-auth-tokens/{console_token}       admin-only     mv=2.31
compute GET    /v2.1/servers/{server_id}/os-security-groups       reader-read
# the network proxies exist up to 2.35
compute GET    /v2.1/os-security-groups                           any-read       mv=2.35
compute POST   /v2.1/os-security-groups                           member-create  mv=2.35 proxy_sg
compute GET    /v2.1/os-security-groups/{sg_id}                   reader-read    mv=2.35
compute PUT    /v2.1/os-security-groups/{sg_id}                   member-write   mv=2.35 proxy_sg
compute DELETE /v2.1/os-security-groups/{sg_id}                   member-write   mv=2.35
compute POST   /v2.1/os-security-group-rules                      member-write   mv=2.35 proxy_sg_rule
compute DELETE /v2.1/os-security-group-rules/{rule_id}            member-write   mv=2.35
compute GET    /v2.1/os-floating-ips                              any-read       mv=2.35
compute POST   /v2.1/os-floating-ips                              member-create  mv=2.35 proxy_fip
compute GET    /v2.1/os-floating-ips/{fip_id}                     reader-read    mv=2.35
compute DELETE /v2.1/os-floating-ips/{fip_id}                     member-write   mv=2.35
compute GET    /v2.1/os-floating-ip-pools                         any-read       mv=2.35
compute GET    /v2.1/os-networks                                  any-read       mv=2.35
compute GET    /v2.1/os-networks/{network_id}                     reader-read    mv=2.35
compute GET    /v2.1/os-tenant-networks                           any-read       mv=2.35
compute GET    /v2.1/os-tenant-networks/{network_id}              reader-read    mv=2.35
# ---------------------------------------------------------------- orchestration
orchestration GET    /v1/{tenant_id}/build_info any-read
orchestration POST   /v1/{tenant_id}/validate member-create validate
orchestration GET    /v1/{tenant_id}/resource_types any-read
orchestration GET    /v1/{tenant_id}/resource_types/{type_name} any-read
orchestration GET    /v1/{tenant_id}/template_versions any-read
orchestration GET    /v1/{tenant_id}/template_versions/{template_version}/functions any-read
orchestration GET    /v1/{tenant_id}/stacks any-read
orchestration POST   /v1/{tenant_id}/stacks member-create stack
orchestration POST   /v1/{tenant_id}/stacks/preview any-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name} reader-read admin=404
orchestration POST   /v1/{tenant_id}/stacks/{stack_name} reader-read admin=404
orchestration PUT    /v1/{tenant_id}/stacks/{stack_name} reader-read admin=404
orchestration PATCH  /v1/{tenant_id}/stacks/{stack_name} reader-read admin=404
orchestration DELETE /v1/{tenant_id}/stacks/{stack_name} reader-read admin=404
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id} reader-read
orchestration PUT    /v1/{tenant_id}/stacks/{stack_name}/{stack_id} member-write stack_update admin=404
orchestration PATCH  /v1/{tenant_id}/stacks/{stack_name}/{stack_id} member-write stack_patch admin=404
orchestration DELETE /v1/{tenant_id}/stacks/{stack_name}/{stack_id} member-write admin=404
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{stack_id} fake-ids
orchestration PUT    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/preview member-write stack_update admin=404
orchestration PATCH  /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/preview member-write stack_patch admin=404
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/template reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/environment reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/files reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/outputs reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/outputs/{output_key} fake-ids
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/actions member-write stack_action admin=404
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/events reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources reader-read
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name} fake-ids
orchestration PATCH  /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name} fake-ids reader=403
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/metadata fake-ids
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/signal fake-ids reader=403
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/events fake-ids
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/events/{event_id} fake-ids
orchestration GET    /v1/{tenant_id}/services admin-only
orchestration GET    /v1/{tenant_id}/resource_types/{type_name}/template any-read
orchestration GET    /v1/{tenant_id}/software_configs any-read
orchestration POST   /v1/{tenant_id}/software_configs member-create
orchestration GET    /v1/{tenant_id}/software_configs/{config_id} fake-ids
orchestration DELETE /v1/{tenant_id}/software_configs/{config_id} fake-ids reader=403
orchestration GET    /v1/{tenant_id}/software_deployments any-read
orchestration POST   /v1/{tenant_id}/software_deployments member-create
orchestration GET    /v1/{tenant_id}/software_deployments/metadata/{server_id} fake-ids
orchestration GET    /v1/{tenant_id}/software_deployments/{deployment_id} fake-ids
orchestration PUT    /v1/{tenant_id}/software_deployments/{deployment_id} fake-ids reader=403
orchestration DELETE /v1/{tenant_id}/software_deployments/{deployment_id} fake-ids reader=403
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/export member-write
orchestration DELETE /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/abandon member-write admin=404
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots reader-read
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots member-write admin=404
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id} fake-ids
orchestration DELETE /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id} fake-ids reader=403
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id}/restore fake-ids reader=403
orchestration GET    /v1/{tenant_id}/stacks/{stack_name}/{rest:path} fake-ids
orchestration POST   /v1/{tenant_id}/stacks/{stack_name}/{rest:path} fake-ids
orchestration PUT    /v1/{tenant_id}/stacks/{stack_name}/{rest:path} fake-ids reader=403
orchestration PATCH  /v1/{tenant_id}/stacks/{stack_name}/{rest:path} fake-ids reader=403
orchestration DELETE /v1/{tenant_id}/stacks/{stack_name}/{rest:path} fake-ids reader=403
# ---------------------------------------------------------------- image
image GET    /v2/images                                           any-read
image POST   /v2/images                                           member-create  image
image GET    /v2/images/{image_id}                                reader-read
image PATCH  /v2/images/{image_id}                                member-write   image_patch
image DELETE /v2/images/{image_id}                                member-write
image GET    /v2/images/{image_id}/file                           reader-read
image PUT    /v2/images/{image_id}/file                           member-write   image_data
image GET    /v2/schemas/image                                    any-read
image GET    /v2/info/import                                      any-read
image GET    /v2/info/stores                                      any-read
image PUT    /v2/images/{image_id}/stage                          member-write   image_data
image POST   /v2/images/{image_id}/import                         member-write   image_import
image POST   /v2/images/{image_id}/actions/deactivate             member-write
image POST   /v2/images/{image_id}/actions/reactivate             member-write
image GET    /v2/images/{image_id}/members                        reader-read
image POST   /v2/images/{image_id}/members                        member-write   image_member
image GET    /v2/images/{image_id}/members/{member_id}            reader-read
image PUT    /v2/images/{image_id}/members/{member_id}            admin-only     image_member_status other=404
image DELETE /v2/images/{image_id}/members/{member_id}            member-write
image GET    /v2/schemas/member                                   any-read
image GET    /v2/tasks                                            admin-only
image POST   /v2/tasks                                            admin-only     task
image GET    /v2/info/stores/detail                               admin-only     admin=404 member=404 reader=404 other=404
image DELETE /v2/stores/{store_id}/{image_id}                     admin-only     admin=404 member=404 reader=404 other=404
image GET    /v2/tasks/{task_id}                                  admin-only
# ---------------------------------------------------------------- dataplane (the wire, admin)
dataplane GET    /v1                                              admin-only
dataplane GET    /v1/wire                                         admin-only
dataplane GET    /v1/path                                         admin-only
"""

Ids = dict[str, str]
# ---------------------------------------------------------------- block-storage
# Each line is served at /volume/v3<path> and /volume/v3/{project_id}<path> (both forms
# are tested: BLOCK_STORAGE's lines are doubled below).
BLOCK_STORAGE = """
block-storage GET    /v3/volumes                                    any-read
block-storage POST   /v3/volumes                                    member-create  bs_volume
block-storage GET    /v3/volumes/detail                             any-read
block-storage GET    /v3/volumes/summary                            any-read
block-storage GET    /v3/volumes/{volume_id}                        reader-read
block-storage PUT    /v3/volumes/{volume_id}                        member-write   bs_volume_update
block-storage DELETE /v3/volumes/{volume_id}                        member-write
block-storage POST   /v3/volumes/{volume_id}/action                 member-write   bs_bootable
block-storage GET    /v3/volumes/{volume_id}/metadata               reader-read
block-storage POST   /v3/volumes/{volume_id}/metadata               member-write   image_meta
block-storage PUT    /v3/volumes/{volume_id}/metadata               member-write   image_meta
block-storage GET    /v3/volumes/{volume_id}/metadata/{key}         reader-read
block-storage PUT    /v3/volumes/{volume_id}/metadata/{key}         member-write   image_meta_item
block-storage DELETE /v3/volumes/{volume_id}/metadata/{key}         member-write admin=404
block-storage GET    /v3/types                                      any-read
block-storage POST   /v3/types                                      admin-only     bs_type
block-storage GET    /v3/types/{type_id}                            any-read
block-storage PUT    /v3/types/{type_id}                            admin-only     bs_type_update
block-storage DELETE /v3/types/{type_id}                            admin-only
block-storage GET    /v3/types/{type_id}/extra_specs                any-read
block-storage POST   /v3/types/{type_id}/extra_specs                admin-only     bs_extra_specs
block-storage GET    /v3/types/{type_id}/extra_specs/{key}          any-read
block-storage PUT    /v3/types/{type_id}/extra_specs/{key}          admin-only     bs_extra_spec
block-storage DELETE /v3/types/{type_id}/extra_specs/{key}          admin-only
block-storage GET    /v3/types/{type_id}/os-volume-type-access      admin-only admin=404
block-storage POST   /v3/types/{type_id}/action                     admin-only     bs_type_access
block-storage GET    /v3/qos-specs                                  admin-only
block-storage POST   /v3/qos-specs                                  admin-only     bs_qos
block-storage GET    /v3/qos-specs/{qos_id}                         admin-only
block-storage PUT    /v3/qos-specs/{qos_id}                         admin-only     bs_qos_update
block-storage DELETE /v3/qos-specs/{qos_id}                         admin-only
block-storage PUT    /v3/qos-specs/{qos_id}/delete_keys             admin-only     bs_qos_keys
block-storage GET    /v3/qos-specs/{qos_id}/associations            admin-only
block-storage GET    /v3/qos-specs/{qos_id}/associate               admin-only
block-storage GET    /v3/qos-specs/{qos_id}/disassociate            admin-only
block-storage GET    /v3/qos-specs/{qos_id}/disassociate_all        admin-only
block-storage GET    /v3/default-types                              admin-only
block-storage GET    /v3/default-types/{target_project}             admin-only admin=404
block-storage PUT    /v3/default-types/{target_project}             admin-only     bs_default_type
block-storage DELETE /v3/default-types/{target_project}             admin-only
block-storage GET    /v3/snapshots                                  any-read
block-storage POST   /v3/snapshots                                  member-write   bs_snapshot
block-storage GET    /v3/snapshots/detail                           any-read
block-storage GET    /v3/snapshots/{snapshot_id}                    reader-read
block-storage PUT    /v3/snapshots/{snapshot_id}                    member-write   bs_snapshot_update
block-storage DELETE /v3/snapshots/{snapshot_id}                    member-write
block-storage POST   /v3/snapshots/{snapshot_id}/action             admin-only     bs_reset_status other=404
block-storage GET    /v3/snapshots/{snapshot_id}/metadata           reader-read
block-storage POST   /v3/snapshots/{snapshot_id}/metadata           member-write   image_meta
block-storage PUT    /v3/snapshots/{snapshot_id}/metadata           member-write   image_meta
block-storage GET    /v3/snapshots/{snapshot_id}/metadata/{key}     reader-read
block-storage PUT    /v3/snapshots/{snapshot_id}/metadata/{key}     member-write   image_meta_item
block-storage DELETE /v3/snapshots/{snapshot_id}/metadata/{key}     member-write admin=404
block-storage GET    /v3/backups                                    any-read
block-storage POST   /v3/backups                                    member-write   bs_backup
block-storage GET    /v3/backups/detail                             any-read
block-storage POST   /v3/backups/import_record                      admin-only     bs_backup_record
block-storage GET    /v3/backups/{backup_id}                        reader-read
block-storage PUT    /v3/backups/{backup_id}                        member-write   bs_backup_update
block-storage DELETE /v3/backups/{backup_id}                        member-write
block-storage POST   /v3/backups/{backup_id}/restore                member-write   bs_restore
block-storage GET    /v3/backups/{backup_id}/export_record          admin-only other=404
block-storage POST   /v3/backups/{backup_id}/action                 admin-only     bs_reset_status other=404
block-storage GET    /v3/attachments                                any-read
block-storage POST   /v3/attachments                                member-write   bs_attachment
block-storage GET    /v3/attachments/detail                         any-read
block-storage GET    /v3/attachments/{attachment_id}                reader-read
block-storage PUT    /v3/attachments/{attachment_id}                member-write   bs_connector
block-storage DELETE /v3/attachments/{attachment_id}                member-write
block-storage POST   /v3/attachments/{attachment_id}/action         member-write   bs_complete
block-storage GET    /v3/limits                                     any-read
block-storage GET    /v3/os-availability-zone                       any-read
block-storage GET    /v3/os-services                                admin-only
block-storage GET    /v3/os-quota-sets/{target_project}             reader-read other=403
block-storage PUT    /v3/os-quota-sets/{target_project}             admin-only     bs_quota_set
block-storage DELETE /v3/os-quota-sets/{target_project}             admin-only
block-storage GET    /v3/os-quota-sets/{target_project}/defaults    reader-read other=403
block-storage GET    /v3/os-quota-class-sets/{class_name}           admin-only
block-storage PUT    /v3/os-quota-class-sets/{class_name}           admin-only     bs_quota_class_set
block-storage GET    /v3/os-volume-transfer                         any-read
block-storage POST   /v3/os-volume-transfer                         member-write   bs_transfer
block-storage GET    /v3/os-volume-transfer/detail                  any-read
block-storage GET    /v3/os-volume-transfer/{transfer_id}           reader-read
block-storage DELETE /v3/os-volume-transfer/{transfer_id}           member-write
block-storage POST   /v3/os-volume-transfer/{transfer_id}/accept    member-create  bs_accept
block-storage GET    /v3/volume-transfers                           any-read
block-storage POST   /v3/volume-transfers                           member-write   bs_transfer
block-storage GET    /v3/volume-transfers/detail                    any-read
block-storage GET    /v3/volume-transfers/{transfer_id}             reader-read
block-storage DELETE /v3/volume-transfers/{transfer_id}             member-write
block-storage POST   /v3/volume-transfers/{transfer_id}/accept      member-create  bs_accept
block-storage GET    /v3/messages                                   any-read
block-storage GET    /v3/capabilities/{host}                        admin-only
block-storage GET    /v3/scheduler-stats/get_pools                  admin-only
block-storage GET    /v3/extensions                                 any-read
block-storage GET    /v3/resource_filters                           any-read
block-storage GET    /v3/group_types                                any-read
block-storage POST   /v3/group_types                                admin-only     bs_group_type
block-storage GET    /v3/group_types/{group_type_id}                any-read
block-storage PUT    /v3/group_types/{group_type_id}                admin-only     bs_group_type_update
block-storage DELETE /v3/group_types/{group_type_id}                admin-only
block-storage GET    /v3/group_types/{group_type_id}/group_specs    admin-only
block-storage POST   /v3/group_types/{group_type_id}/group_specs    admin-only     bs_group_specs
block-storage GET    /v3/group_types/{group_type_id}/group_specs/{key}  admin-only
block-storage PUT    /v3/group_types/{group_type_id}/group_specs/{key}  admin-only bs_extra_spec
block-storage DELETE /v3/group_types/{group_type_id}/group_specs/{key}  admin-only
block-storage GET    /v3/groups                                     any-read
block-storage POST   /v3/groups                                     member-create  bs_group
block-storage GET    /v3/groups/detail                              any-read
block-storage GET    /v3/groups/{group_id}                          reader-read
block-storage PUT    /v3/groups/{group_id}                          member-write   bs_group_update
block-storage POST   /v3/groups/{group_id}/action                   admin-only     bs_group_reset other=404
block-storage GET    /v3/group_snapshots                            any-read
block-storage POST   /v3/group_snapshots                            member-write   bs_group_snapshot
block-storage GET    /v3/group_snapshots/detail                     any-read
block-storage GET    /v3/group_snapshots/{group_snapshot_id}        reader-read
block-storage DELETE /v3/group_snapshots/{group_snapshot_id}        member-write
block-storage POST   /v3/group_snapshots/{group_snapshot_id}/action admin-only     bs_group_snapshot_reset other=404
"""
_BS_LINES = [line for line in BLOCK_STORAGE.splitlines() if line.strip()]
TABLE += "\n".join(_BS_LINES + [line.replace(" /v3/", " /v3/{project_id}/", 1)
                                for line in _BS_LINES]) + "\n"
# ---------------------------------------------------------------- image: fidelity IV (issue 32)
# Metadefs: the namespace in the path is a fake one (a 404 to all, as Glance looks the
# namespace up before its policy); tests/api/test_image_fidelity4.py proves the 403s of the
# admin-only writes on real namespaces. The image tag's DELETE: the member took it just
# before the admin's call.
TABLE += """
image PUT    /v2/images/{image_id}/tags/{tag}                     member-write
image DELETE /v2/images/{image_id}/tags/{tag}                     member-write admin=404
image GET    /v2/schemas/images                                   any-read
image GET    /v2/schemas/members                                  any-read
image GET    /v2/schemas/metadefs/{kind}                          any-read fake
image GET    /v2/metadefs/namespaces                              any-read
image POST   /v2/metadefs/namespaces                              admin-only
image GET    /v2/metadefs/resource_types                          any-read
image GET    /v2/metadefs/namespaces/{namespace}                  fake-ids
image PUT    /v2/metadefs/namespaces/{namespace}                  fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}                  fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/objects          fake-ids
image POST   /v2/metadefs/namespaces/{namespace}/objects          fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/objects          fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/objects/{name}   fake-ids
image PUT    /v2/metadefs/namespaces/{namespace}/objects/{name}   fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/objects/{name}   fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/properties       fake-ids
image POST   /v2/metadefs/namespaces/{namespace}/properties       fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/properties       fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/properties/{name} fake-ids
image PUT    /v2/metadefs/namespaces/{namespace}/properties/{name} fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/properties/{name} fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/tags             fake-ids
image POST   /v2/metadefs/namespaces/{namespace}/tags             fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/tags             fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/tags/{name}      fake-ids
image POST   /v2/metadefs/namespaces/{namespace}/tags/{name}      fake-ids
image PUT    /v2/metadefs/namespaces/{namespace}/tags/{name}      fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/tags/{name}      fake-ids
image GET    /v2/metadefs/namespaces/{namespace}/resource_types   fake-ids
image POST   /v2/metadefs/namespaces/{namespace}/resource_types   fake-ids
image DELETE /v2/metadefs/namespaces/{namespace}/resource_types/{name} fake-ids
"""


BODIES: dict[str, Callable[[Ids], Any]] = {
    "network": lambda w: {"network": {"name": "m"}},
    "network_update": lambda w: {"network": {"name": "m2"}},
    "subnet": lambda w: {"subnet": {"network_id": w["network_id"], "cidr": "10.77.0.0/24",
                                    "ip_version": 4}},
    "subnet_update": lambda w: {"subnet": {"name": "s2"}},
    "subnetpool": lambda w: {"subnetpool": {"name": "p", "prefixes": ["10.150.0.0/16"]}},
    "subnetpool_update": lambda w: {"subnetpool": {"name": "p2"}},
    "port": lambda w: {"port": {"network_id": w["network_id"]}},
    "port_update": lambda w: {"port": {"port_security_enabled": True,
                                       "security_groups": [w["sg_id"]]}},
    "sg": lambda w: {"security_group": {"name": "g"}},
    "sg_update": lambda w: {"security_group": {"description": "d"}},
    "rule": lambda w: {"security_group_rule": {"security_group_id": w["sg_id"],
                                               "direction": "egress", "protocol": "udp"}},
    "router": lambda w: {"router": {"name": "r"}},
    "router_update": lambda w: {"router": {"name": "r2"}},
    "router_interface": lambda w: {"subnet_id": w["subnet_id"]},
    "extraroutes": lambda w: {"router": {"routes": []}},
    "floatingip": lambda w: {"floatingip": {"floating_network_id": w["public_id"]}},
    "floatingip_update": lambda w: {"floatingip": {"description": "d"}},
    "quota": lambda w: {"quota": {"network": 50}},
    "tags": lambda w: {"tags": ["a"]},
    "server": lambda w: {"server": {"name": "s", "flavorRef": "1", "imageRef": w["image_id"],
                                    "networks": "none"}},
    "server_update": lambda w: {"server": {"name": "s2"}},
    "server_action": lambda w: {"lock": None},
    "metadata": lambda w: {"metadata": {"k1": "v"}},
    "metadata_item": lambda w: {"meta": {"k1": "v2"}},
    "server_tags": lambda w: {"tags": ["t1"]},
    "interface": lambda w: {"interfaceAttachment": {"net_id": w["network_id"]}},
    "flavor": lambda w: {"flavor": {"name": "f-matrix", "ram": 64, "vcpus": 1, "disk": 0}},
    "flavor_update": lambda w: {"flavor": {"description": "d"}},
    "server_group": lambda w: {"server_group": {"name": "g", "policies": ["affinity"]}},
    "flavor_access": lambda w: {"addTenantAccess": {"tenant": w["project_id"]}},
    "extra_specs": lambda w: {"extra_specs": {"hw:cpu_policy": "shared"}},
    "extra_spec": lambda w: {"hw:cpu_policy": "shared"},
    "keypair": lambda w: {"keypair": {"name": "k-new"}},
    "aggregate_action": lambda w: {"add_host": {"host": "nohost"}},
    "prefixes": lambda w: {"prefixes": ["10.181.0.0/16"]},
    "segment": lambda w: {"segment": {"network_id": w["admin_network_id"],
                                      "network_type": "vxlan"}},
    "segment_update": lambda w: {"segment": {"name": "s2"}},
    "segment_range": lambda w: {"network_segment_range": {
        "name": "r", "network_type": "vlan", "physical_network": "physnet1",
        "minimum": 3000, "maximum": 3009, "shared": True}},
    "segment_range_update": lambda w: {"network_segment_range": {"name": "r2"}},
    "address_scope_update": lambda w: {"address_scope": {"name": "a2"}},
    "trunk": lambda w: {"trunk": {"port_id": w["trunk_parent_id"]}},
    "trunk_update": lambda w: {"trunk": {"name": "t2"}},
    "sub_ports": lambda w: {"sub_ports": []},
    "address_group": lambda w: {"address_group": {"name": "ag", "addresses": ["10.5.0.0/16"]}},
    "address_group_update": lambda w: {"address_group": {"name": "ag2"}},
    "port_forwarding": lambda w: {"port_forwarding": {
        "protocol": "tcp", "internal_port": 80, "external_port": 8080,
        "internal_port_id": w["pf_port_id"]}},
    "port_forwarding_update": lambda w: {"port_forwarding": {"description": "d"}},
    "conntrack_helper": lambda w: {"conntrack_helper": {"protocol": "tcp", "port": 6667,
                                                        "helper": "irc"}},
    "conntrack_helper_update": lambda w: {"conntrack_helper": {"port": 6668}},
    "metering_label": lambda w: {"metering_label": {"name": "m"}},
    "metering_label_rule": lambda w: {"metering_label_rule": {
        "metering_label_id": w["metering_label_id"], "source_ip_prefix": "10.0.0.0/8"}},
    "network_flavor": lambda w: {"flavor": {"name": "f", "service_type": "L3_ROUTER_NAT"}},
    "network_flavor_update": lambda w: {"flavor": {"name": "f2"}},
    "flavor_profile_assoc": lambda w: {"service_profile": {"id": w["service_profile_id"]}},
    "service_profile": lambda w: {"service_profile": {"metainfo": "{}"}},
    "service_profile_update": lambda w: {"service_profile": {"description": "d"}},
    "network_log": lambda w: {"log": {"resource_type": "security_group"}},
    "network_log_update": lambda w: {"log": {"name": "l2"}},
    "local_ip": lambda w: {"local_ip": {"network_id": w["lip_network_id"]}},
    "local_ip_update": lambda w: {"local_ip": {"name": "l2"}},
    "local_ip_assoc": lambda w: {"port_association": {"fixed_port_id": w["lip_port_id"]}},
    "ndp_proxy": lambda w: {"ndp_proxy": {"router_id": w["ndp_router_id"],
                                          "port_id": w["ndp_port_id"]}},
    "ndp_proxy_update": lambda w: {"ndp_proxy": {"name": "n2"}},
    "port_binding": lambda w: {"binding": {"host": "matrix-new"}},
    "router_gateways": lambda w: {"router": {"external_gateways": [
        {"network_id": w["public_id"]}]}},
    "router_gateways_none": lambda w: {"router": {"external_gateways": []}},
    "qos_policy": lambda w: {"policy": {"name": "q"}},
    "qos_policy_update": lambda w: {"policy": {"name": "q2"}},
    "qos_bandwidth_limit": lambda w: {"bandwidth_limit_rule": {"max_kbps": 100,
                                                               "direction": "ingress"}},
    "qos_bandwidth_limit_update": lambda w: {"bandwidth_limit_rule": {"max_kbps": 2000}},
    "qos_dscp_marking": lambda w: {"dscp_marking_rule": {"dscp_mark": 8}},
    "qos_dscp_marking_update": lambda w: {"dscp_marking_rule": {"dscp_mark": 10}},
    "qos_minimum_bandwidth": lambda w: {"minimum_bandwidth_rule": {"min_kbps": 10,
                                                                   "direction": "ingress"}},
    "qos_minimum_bandwidth_update": lambda w: {"minimum_bandwidth_rule": {"min_kbps": 50}},
    "qos_minimum_packet_rate": lambda w: {"minimum_packet_rate_rule": {"min_kpps": 10,
                                                                       "direction": "ingress"}},
    "qos_minimum_packet_rate_update": lambda w: {"minimum_packet_rate_rule": {"min_kpps": 5}},
    "addresses": lambda w: {"addresses": []},
    "default_sg_rule": lambda w: {"default_security_group_rule": {
        "direction": "ingress", "protocol": "tcp", "port_range_min": 9100,
        "port_range_max": 9100}},
    "rbac_policy": lambda w: {"rbac_policy": {
        "object_type": "network", "object_id": w["rbac_network_id"],
        "action": "access_as_shared", "target_tenant": w["admin_project_id"]}},
    "rbac_policy_update": lambda w: {"rbac_policy": {"target_tenant": "t-updated"}},
    "stack": lambda w: {"stack_name": "new-stack", "template": EMPTY_TEMPLATE},
    "stack_update": lambda w: {"template": EMPTY_TEMPLATE},
    "stack_patch": lambda w: {"parameters": {}},
    "stack_action": lambda w: {"check": None},
    "validate": lambda w: {"template": EMPTY_TEMPLATE},
    "address_scope": lambda w: {"address_scope": {"name": "a", "ip_version": 4}},
    "image_import": lambda w: {"method": {"name": "glance-direct"}},
    "task": lambda w: {"type": "location_import", "input": {}},
    "console": lambda w: {"remote_console": {"protocol": "vnc", "type": "novnc"}},
    "share": lambda w: {"share": {"share_id": "0b5d2c72-12cc-4ba6-a8d7-3ff5cc1d8cb8"}},
    "volume_attachment": lambda w: {"volumeAttachment": {
        "volumeId": "0b5d2c72-12cc-4ba6-a8d7-3ff5cc1d8cb9"}},
    "image_meta": lambda w: {"metadata": {"k1": "v1"}},
    "image_meta_item": lambda w: {"meta": {"k1": "v2"}},
    "proxy_sg": lambda w: {"security_group": {"name": "g", "description": "d"}},
    "proxy_fip": lambda w: {"pool": "public"},
    "proxy_sg_rule": lambda w: {"security_group_rule": {
        "parent_group_id": w["sg_id"], "ip_protocol": "tcp", "from_port": 8000,
        "to_port": 8000, "cidr": "0.0.0.0/0"}},
    "quota_set": lambda w: {"quota_set": {"instances": 20}},
    "quota_class_set": lambda w: {"quota_class_set": {"instances": 20}},
    "image": lambda w: {"name": "i", "disk_format": "raw", "container_format": "bare"},
    "image_patch": lambda w: [{"op": "replace", "path": "/name", "value": "i2"}],
    "image_data": lambda w: b"data",
    "agent": lambda w: {"agent": {"description": "matrix"}},
    "image_member": lambda w: {"member": f"m-{uuid.uuid4().hex}"},
    "image_member_status": lambda w: {"status": "accepted"},
    # block-storage
    "bs_volume": lambda w: {"volume": {"size": 1, "name": "m"}},
    "bs_volume_update": lambda w: {"volume": {"name": "m2"}},
    "bs_bootable": lambda w: {"os-set_bootable": {"bootable": False}},
    "bs_type": lambda w: {"volume_type": {"name": f"t-{uuid.uuid4().hex[:8]}"}},
    "bs_type_update": lambda w: {"volume_type": {"description": "d"}},
    "bs_extra_specs": lambda w: {"extra_specs": {"k1": "v1"}},
    "bs_extra_spec": lambda w: {"k1": "v2"},
    "bs_type_access": lambda w: {"addProjectAccess": {"project": w["project_id"]}},
    "bs_qos": lambda w: {"qos_specs": {"name": f"q-{uuid.uuid4().hex[:8]}"}},
    "bs_qos_update": lambda w: {"qos_specs": {"k1": "v1"}},
    "bs_qos_keys": lambda w: {"keys": ["k1"]},
    "bs_default_type": lambda w: {"default_type": {"volume_type": w["bs_type_id"]}},
    "bs_snapshot": lambda w: {"snapshot": {"volume_id": w["bs_volume_id"], "force": True}},
    "bs_snapshot_update": lambda w: {"snapshot": {"name": "s2"}},
    "bs_reset_status": lambda w: {"os-reset_status": {"status": "available"}},
    "bs_backup": lambda w: {"backup": {"volume_id": w["bs_volume_id"], "force": True}},
    "bs_backup_update": lambda w: {"backup": {"name": "b2"}},
    "bs_backup_record": lambda w: {"backup-record": {"backup_service": "x", "backup_url": "y"}},
    "bs_restore": lambda w: {"restore": {"name": "r"}},
    "bs_attachment": lambda w: {"attachment": {"volume_uuid": w["bs_volume_id"],
                                               "instance_uuid": str(uuid.uuid4())}},
    "bs_connector": lambda w: {"attachment": {"connector": {"host": "h1"}}},
    "bs_complete": lambda w: {"os-complete": None},
    "bs_quota_set": lambda w: {"quota_set": {"volumes": -1, "snapshots": -1, "backups": -1}},
    "bs_quota_class_set": lambda w: {"quota_class_set": {"volumes": 10}},
    "bs_transfer": lambda w: {"transfer": {"volume_id": w["bs_transfer_volume_id"]}},
    "bs_accept": lambda w: {"accept": {"auth_key": "wrong"}},
    "bs_group_type": lambda w: {"group_type": {"name": f"gt-{uuid.uuid4().hex[:8]}"}},
    "bs_group_type_update": lambda w: {"group_type": {"description": "d"}},
    "bs_group_specs": lambda w: {"group_specs": {"k1": "v1"}},
    "bs_group": lambda w: {"group": {"group_type": w["bs_group_type_id"],
                                     "volume_types": ["__DEFAULT__"]}},
    "bs_group_update": lambda w: {"group": {"name": "g2"}},
    "bs_group_reset": lambda w: {"reset_status": {"status": "available"}},
    "bs_group_snapshot": lambda w: {"group_snapshot": {"group_id": w["bs_group_id"]}},
    "bs_group_snapshot_reset": lambda w: {"reset_status": {"status": "available"}},
}

PLACEHOLDER = re.compile(r"\{([^}]+)\}")
EMPTY_TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {}}


class Entry:
    def __init__(self, line: str) -> None:
        words = line.split()
        self.service, self.method, self.path, self.rule = words[:4]
        self.body: str | None = None
        self.overrides: dict[str, str] = {}
        self.version: str | None = None  # `mv=2.35`: the microversion to call at
        self.fake = False  # `fake`: the path names nothing real (a 404 is no refusal)
        for word in words[4:]:
            if word == "fake":
                self.fake = True
            elif word.startswith("mv="):
                self.version = word[3:]
            elif "=" in word:
                persona, outcome = word.split("=")
                self.overrides[persona] = outcome
            else:
                self.body = word
        assert self.rule in RULES, line
        assert self.body is None or self.body in BODIES, line

    @property
    def key(self) -> tuple[str, str, str]:
        return self.service, self.method, self.path

    def expected(self, persona: str) -> str:
        return self.overrides.get(persona, RULES[self.rule][persona])


ENTRIES = [Entry(line) for line in TABLE.splitlines() if line.strip() and line[0] != "#"]


def _registered(api: Any) -> list[tuple[Any, str, str]]:
    return [(s, m, r.path) for s in api.runtime.services.values() for r in s.routes
            for m in r.methods if not r.is_public(m)]


def test_every_route_has_an_entry(api: Any) -> None:
    table = {e.key for e in ENTRIES}
    assert len(table) == len(ENTRIES), "a route is listed twice"
    missing = [(s.name, m, p) for s, m, p in _registered(api) if (s.name, m, p) not in table]
    assert not missing, f"routes without a policy-matrix entry (see the docstring): {missing}"


# ------------------------------------------------------------------ the world
def _make_user(api: Any, name: str, project: str, role: str) -> str:
    """A user holding only `role` in `project` (created if needed); returns its id."""
    r = api.get(f"/identity/v3/projects?name={project}")
    found = r.json()["projects"]
    if found:
        pid = found[0]["id"]
    else:
        pid = api.post("/identity/v3/projects", json={"project": {
            "name": project, "domain_id": "default"}}).json()["project"]["id"]
    uid = api.post("/identity/v3/users", json={"user": {
        "name": name, "password": "pw-secret", "domain_id": "default"}}).json()["user"]["id"]
    roles = {r["name"]: r["id"] for r in api.get("/identity/v3/roles").json()["roles"]}
    assert api.put(f"/identity/v3/projects/{pid}/users/{uid}/roles/{roles[role]}"
                   ).status_code == 204
    return uid


def _unscoped(api: Any, user: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": "pw-secret"}}}}}
    r = api.client.post("/identity/v3/auth/tokens", json=body)
    assert r.status_code == 201, r.text
    assert "project" not in r.json()["token"]
    return r.headers["X-Subject-Token"]


HEADERS = {"compute": {"OpenStack-API-Version": "compute 2.62"},
           "placement": {"OpenStack-API-Version": "placement latest"},
           "block-storage": {"OpenStack-API-Version": "volume latest"},
           "volume": {"OpenStack-API-Version": "volume latest"}}  # World.ok's key: the prefix


class World:
    """Project demo's objects, made by its member, and a token per persona."""

    def __init__(self, api: Any) -> None:
        self.api = api
        _make_user(api, "matrix-reader", "demo", "reader")
        _make_user(api, "matrix-other", "matrix-other", "member")
        self.tokens = {
            "admin": api.token("admin"), "member": api.token("demo"),
            "reader": api.token("matrix-reader", "demo", "pw-secret"),
            "other": api.token("matrix-other", "matrix-other", "pw-secret"),
            "unscoped": _unscoped(api, "matrix-reader"),
        }
        demo = api.get("/identity/v3/projects?name=demo").json()["projects"][0]["id"]
        self.projects = {name: api.get(f"/identity/v3/projects?name={project}").json()[
            "projects"][0]["id"] for name, project in (("admin", "admin"), ("member", "demo"),
                                                       ("reader", "demo"),
                                                       ("other", "matrix-other"))}
        public = api.get("/networking/v2.0/networks?name=public").json()["networks"][0]["id"]
        cirros = api.get("/image/v2/images?name=cirros").json()["images"][0]["id"]
        self.ids: Ids = {"project_id": demo, "tenant_id": demo, "public_id": public, "collection": "networks",
                         "tag": "t1", "key": "k1",
                         "cirros_id": cirros, "network_label": "none",
                         "class_name": "default", "target_project": demo}
        self.made = 0
        self.demo = demo
        self.lift_quotas()
        for placeholder in FRESH:  # in order: later objects use earlier ones
            if placeholder not in self.ids:
                made = FRESH[placeholder](self)
                self.ids.update(made if isinstance(made, dict) else {placeholder: made})
        self.ids["resource_id"] = self.ids["network_id"]
        self.ids["fip_id"] = self.ids["floatingip_id"]
        self.ids["admin_project_id"] = self.projects["admin"]
        agents = self.ok("GET", "/networking/v2.0/agents", user="admin")["agents"]
        self.ids["agent_id"] = agents[0]["id"] if agents else "no-agent"
        self.ids["request_id"] = self.ok("GET", f"/compute/v2.1/servers/{self.ids['server_id']}"
                                         "/os-instance-actions")["instanceActions"][0][
                                             "request_id"]
        server = self.ids["server_id"]
        self.ok("PUT", f"/compute/v2.1/servers/{server}/metadata/k1", {"meta": {"k1": "v"}})
        self.ok("PUT", f"/compute/v2.1/servers/{server}/tags/t1")
        self.ok("PUT", f"/networking/v2.0/networks/{self.ids['network_id']}/tags/t1")
        self.ok("PUT", f"/compute/v2.1/flavors/{self.ids['flavor_id']}/os-extra_specs/k1",
                {"k1": "v"}, user="admin")

    def lift_quotas(self) -> None:
        """The table makes many objects (and resets quotas): lift project demo's."""
        self.ok("PUT", f"/networking/v2.0/quotas/{self.demo}", {"quota": {
            k: 1000 for k in ("network", "subnet", "subnetpool", "port", "router", "floatingip",
                              "security_group", "security_group_rule")}}, user="admin")
        self.api.request("PUT", f"/compute/v2.1/os-quota-sets/{self.demo}",
                         token=self.tokens["admin"], headers=HEADERS["compute"],
                         json={"quota_set": {"instances": 1000, "cores": 1000, "ram": 10**6,
                                             "server_groups": -1}})
        self.api.request("PUT", f"/volume/v3/os-quota-sets/{self.demo}",
                         token=self.tokens["admin"], json={"quota_set": {
                             "volumes": -1, "snapshots": -1, "gigabytes": -1, "backups": -1,
                             "backup_gigabytes": -1}})

    def count(self) -> int:
        self.made += 1
        return self.made

    def ok(self, method: str, url: str, body: Any = None, user: str = "member") -> Any:
        headers = HEADERS.get(url.split("/")[1], {})
        r = self.api.request(method, url, token=self.tokens[user], json=body, headers=headers)
        assert r.status_code < 300, (method, url, r.status_code, r.text[:300])
        return r.json() if r.content else None


def _service_profile(w: World) -> str:
    sp = w.ok("POST", "/networking/v2.0/service_profiles", {"service_profile": {
        "driver": "neutron.services.l3_router.service_providers.ha.HaDriver"}},
        user="admin")["service_profile"]["id"]
    w.ok("POST", f"/networking/v2.0/flavors/{w.ids['network_flavor_id']}/service_profiles",
         {"service_profile": {"id": sp}}, user="admin")
    return sp


def _local_ip(w: World) -> Ids:
    net = w.ok("GET", f"/networking/v2.0/subnets/{w.ids['subnet_id']}")["subnet"]["network_id"]
    lip = w.ok("POST", "/networking/v2.0/local_ips", {"local_ip": {"network_id": net}})
    port = w.ok("POST", "/networking/v2.0/ports", {"port": {"network_id": net}})["port"]["id"]
    return {"local_ip_id": lip["local_ip"]["id"], "lip_network_id": net, "lip_port_id": port}


def _local_ip_association(w: World) -> str:
    port = w.ok("POST", "/networking/v2.0/ports", {"port": {
        "network_id": w.ids["lip_network_id"]}})["port"]["id"]
    w.ok("POST", f"/networking/v2.0/local_ips/{w.ids['local_ip_id']}/port_associations",
         {"port_association": {"fixed_port_id": port}})
    return port


def _ndp_proxy(w: World) -> str | Ids:
    """Project demo's NDP proxy; the first call builds its topology: an IPv6 address scope
    and pool (the admin's, shared), an external network with an IPv6 subnet from it, and
    demo's network, subnet, NDP-proxying router and port."""
    if "ndp_router_id" in w.ids:
        return w.ok("POST", "/networking/v2.0/ndp_proxies", BODIES["ndp_proxy"](w.ids))[
            "ndp_proxy"]["id"]
    scope = w.ok("POST", "/networking/v2.0/address-scopes", {"address_scope": {
        "name": "ndp", "ip_version": 6, "shared": True}}, user="admin")["address_scope"]["id"]
    pool = w.ok("POST", "/networking/v2.0/subnetpools", {"subnetpool": {
        "name": "ndp", "prefixes": ["2001:db8:f00::/48"], "default_prefixlen": 64,
        "address_scope_id": scope, "shared": True}}, user="admin")["subnetpool"]["id"]
    ext = w.ok("POST", "/networking/v2.0/networks", {"network": {
        "name": "ndp-ext", "router:external": True}}, user="admin")["network"]["id"]
    w.ok("POST", "/networking/v2.0/subnets", {"subnet": {
        "network_id": ext, "ip_version": 6, "subnetpool_id": pool}}, user="admin")
    net = w.ok("POST", "/networking/v2.0/networks", {"network": {"name": "ndp"}})["network"]["id"]
    sub = w.ok("POST", "/networking/v2.0/subnets", {"subnet": {
        "network_id": net, "ip_version": 6, "subnetpool_id": pool}})["subnet"]["id"]
    router = w.ok("POST", "/networking/v2.0/routers", {"router": {
        "name": "ndp", "enable_ndp_proxy": True,
        "external_gateway_info": {"network_id": ext}}})["router"]["id"]
    w.ok("PUT", f"/networking/v2.0/routers/{router}/add_router_interface", {"subnet_id": sub})
    port = w.ok("POST", "/networking/v2.0/ports", {"port": {"network_id": net}})["port"]["id"]
    made: Ids = {"ndp_router_id": router, "ndp_port_id": port}
    made["ndp_proxy_id"] = w.ok("POST", "/networking/v2.0/ndp_proxies",
                                BODIES["ndp_proxy"](made))["ndp_proxy"]["id"]
    return made


def _port_binding(w: World) -> Ids:
    """A compute port of project demo (made by the admin) bound to one host, with an
    INACTIVE binding on another (`host`)."""
    n = w.count()
    port = w.ok("POST", "/networking/v2.0/ports", {"port": {
        "network_id": w.ids["network_id"], "project_id": w.demo, "device_owner": "compute:nova",
        "binding:host_id": f"matrix-src-{n}"}}, user="admin")["port"]["id"]
    w.ok("POST", f"/networking/v2.0/ports/{port}/bindings",
         {"binding": {"host": f"matrix-dst-{n}"}}, user="admin")
    return {"binding_port_id": port, "host": f"matrix-dst-{n}"}


def _port_forwarding(w: World) -> Ids:
    n = w.count()
    net = w.ok("POST", "/networking/v2.0/networks", {"network": {"name": f"pf-{n}"}})["network"]
    subnet = w.ok("POST", "/networking/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "cidr": f"10.{100 + n % 100}.{n // 100}.0/24",
        "ip_version": 4}})["subnet"]
    router = w.ok("POST", "/networking/v2.0/routers", {"router": {
        "name": f"pf-{n}", "external_gateway_info": {"network_id": w.ids["public_id"]}}})["router"]
    w.ok("PUT", f"/networking/v2.0/routers/{router['id']}/add_router_interface",
         {"subnet_id": subnet["id"]})
    port = w.ok("POST", "/networking/v2.0/ports", {"port": {"network_id": net["id"]}})["port"]
    fip = w.ok("POST", "/networking/v2.0/floatingips", {"floatingip": {
        "floating_network_id": w.ids["public_id"]}})["floatingip"]
    pf = w.ok("POST", f"/networking/v2.0/floatingips/{fip['id']}/port_forwardings", {
        "port_forwarding": {"protocol": "tcp", "internal_port": 22, "external_port": 22,
                            "internal_port_id": port["id"]}})["port_forwarding"]
    return {"pf_floatingip_id": fip["id"], "port_forwarding_id": pf["id"], "pf_port_id": port["id"]}


def _qos_policy(w: World) -> Ids:
    policy = w.ok("POST", "/networking/v2.0/qos/policies", {"policy": {
        "name": f"q-{w.count()}", "project_id": w.demo}}, user="admin")["policy"]["id"]
    made: Ids = {"qos_policy_id": policy}
    for kind, body in (("bandwidth_limit", {"max_kbps": 1000}), ("dscp_marking", {"dscp_mark": 26}),
                       ("minimum_bandwidth", {"min_kbps": 100}),
                       ("minimum_packet_rate", {"min_kpps": 100})):
        made[f"{kind}_rule_id"] = w.ok("POST", f"/networking/v2.0/qos/policies/{policy}/{kind}_rules",
                                       {f"{kind}_rule": body}, user="admin")[f"{kind}_rule"]["id"]
    return made


def _stack(w: World) -> Ids:
    """A stack of project demo: its name and id (heat's URLs carry both)."""
    name = f"w-{w.count()}"
    made = w.ok("POST", f"/orchestration/v1/{w.projects['member']}/stacks",
                {"stack_name": name, "template": EMPTY_TEMPLATE})
    return {"stack_name": name, "stack_id": made["stack"]["id"]}


def _server(w: World) -> str:
    body = BODIES["server"]({"image_id": w.ids["cirros_id"]})
    return w.ok("POST", "/compute/v2.1/servers", body)["server"]["id"]


def _bs_wait(w: World, collection: str, item_id: str) -> str:
    """Wait until a new volume, snapshot or backup of demo's is available."""
    import time

    key = collection[:-1]
    for _ in range(400):
        status = w.ok("GET", f"/volume/v3/{collection}/{item_id}")[key]["status"]
        if status not in ("creating", "backing-up"):
            assert status == "available", status
            return item_id
        time.sleep(0.025)
    raise AssertionError(f"{key} {item_id} still {status}")


def _bs_volume(w: World) -> str:
    """A new available 1 GiB volume of project demo (with metadata k1)."""
    made = w.ok("POST", "/volume/v3/volumes", {"volume": {
        "size": 1, "name": f"v-{w.count()}", "metadata": {"k1": "v"}}})["volume"]["id"]
    return _bs_wait(w, "volumes", made)


# Placeholder -> a new object of project demo (for the world, and per DELETE call), in
# the order the world makes them (a port needs the network, a rule the group).
FRESH: dict[str, Callable[[World], str | Ids]] = {
    "network_id": lambda w: w.ok("POST", "/networking/v2.0/networks",
                                 {"network": {"name": "w"}})["network"]["id"],
    "subnet_id": lambda w: w.ok("POST", "/networking/v2.0/subnets", {"subnet": {
        "network_id": w.ok("POST", "/networking/v2.0/networks",
                           {"network": {"name": "ws"}})["network"]["id"],
        "cidr": "10.66.0.0/24", "ip_version": 4}})["subnet"]["id"],
    "subnetpool_id": lambda w: w.ok("POST", "/networking/v2.0/subnetpools", {"subnetpool": {
        "name": "w", "prefixes": ["10.180.0.0/16"]}})["subnetpool"]["id"],
    "sg_id": lambda w: w.ok("POST", "/networking/v2.0/security_groups", {
        "security_group": {"name": "w"}})["security_group"]["id"],
    "port_id": lambda w: w.ok("POST", "/networking/v2.0/ports", {"port": {
        "network_id": w.ids["network_id"]}})["port"]["id"],
    "rule_id": lambda w: w.ok("POST", "/networking/v2.0/security_group_rules", {
        "security_group_rule": {"security_group_id": w.ids["sg_id"], "direction": "ingress",
                                "protocol": "tcp", "port_range_min": 1,
                                "port_range_max": w.count()}})["security_group_rule"]["id"],
    "router_id": lambda w: w.ok("POST", "/networking/v2.0/routers",
                                {"router": {"name": "w"}})["router"]["id"],
    "floatingip_id": lambda w: w.ok("POST", "/networking/v2.0/floatingips", {"floatingip": {
        "floating_network_id": w.ids["public_id"]}})["floatingip"]["id"],
    "server_id": _server,
    "flavor_id": lambda w: w.ok("POST", "/compute/v2.1/flavors", {"flavor": {
        "name": f"f-{w.count()}", "ram": 64, "vcpus": 1, "disk": 0}}, user="admin"
    )["flavor"]["id"],
    "group_id": lambda w: w.ok("POST", "/compute/v2.1/os-server-groups", {"server_group": {
        "name": f"g-{w.count()}", "policies": ["anti-affinity"]}})["server_group"]["id"],
    "name": lambda w: w.ok("POST", "/compute/v2.1/os-keypairs", {"keypair": {
        "name": f"k-{w.count()}"}})["keypair"]["name"],
    # shared with other projects by the RBAC rows: never the network the table reads
    "rbac_network_id": lambda w: w.ok("POST", "/networking/v2.0/networks", {
        "network": {"name": "rbac-w"}})["network"]["id"],
    "admin_network_id": lambda w: w.ok("POST", "/networking/v2.0/networks", {
        "network": {"name": "admin-w"}}, user="admin")["network"]["id"],
    "segment_id": lambda w: w.ok("POST", "/networking/v2.0/segments", {"segment": {
        "network_id": w.ok("POST", "/networking/v2.0/networks", {"network": {
            "name": "seg-w", "provider:network_type": "vlan",
            "provider:physical_network": "physnet1"}}, user="admin")["network"]["id"],
        "network_type": "vxlan"}}, user="admin")["segment"]["id"],
    "range_id": lambda w: w.ok("POST", "/networking/v2.0/network_segment_ranges", {
        "network_segment_range": {"name": "w", "network_type": "vlan",
                                  "physical_network": "physnet1", "shared": True,
                                  "minimum": 3100 + 10 * w.count(),
                                  "maximum": 3105 + 10 * w.made}}, user="admin"
    )["network_segment_range"]["id"],
    "address_scope_id": lambda w: w.ok("POST", "/networking/v2.0/address_scopes", {
        "address_scope": {"name": "w", "ip_version": 4}})["address_scope"]["id"],
    "rbac_policy_id": lambda w: w.ok("POST", "/networking/v2.0/rbac_policies", {"rbac_policy": {
        "object_type": "network", "object_id": w.ids["rbac_network_id"],
        "action": "access_as_shared", "target_tenant": f"t-{w.count()}"}})["rbac_policy"]["id"],
    "stack_id": lambda w: _stack(w),
    "stack_name": lambda w: _stack(w),
    "fip_id": lambda w: w.ok("POST", "/networking/v2.0/floatingips", {"floatingip": {
        "floating_network_id": w.ids["public_id"]}})["floatingip"]["id"],
    "image_id": lambda w: w.ok("POST", "/image/v2/images", {
        "name": "w", "disk_format": "raw", "container_format": "bare", "k1": "v"})["id"],
    "member_id": lambda w: w.ok("POST", f"/image/v2/images/{w.ids['image_id']}/members", {
        "member": f"m-{w.count()}"})["member_id"],
    "default_rule_id": lambda w: w.ok("POST", "/networking/v2.0/default_security_group_rules", {
        "default_security_group_rule": {"direction": "ingress", "protocol": "udp",
                                        "port_range_min": 7000 + w.count(),
                                        "port_range_max": 7000 + w.made}}, user="admin"
    )["default_security_group_rule"]["id"],
    "address_group_id": lambda w: w.ok("POST", "/networking/v2.0/address_groups", {
        "address_group": {"name": "w"}})["address_group"]["id"],
    # a floating IP of project demo forwarding a port behind its router to public
    "pf_floatingip_id": lambda w: _port_forwarding(w),
    "port_forwarding_id": lambda w: _port_forwarding(w),
    "conntrack_helper_id": lambda w: w.ok(
        "POST", f"/networking/v2.0/routers/{w.ids['router_id']}/conntrack_helpers",
        {"conntrack_helper": {"protocol": "tcp", "port": 1000 + w.count(),
                              "helper": "ftp"}})["conntrack_helper"]["id"],
    # metering is the admin's
    "metering_label_id": lambda w: w.ok("POST", "/networking/v2.0/metering/metering-labels", {
        "metering_label": {"name": f"m-{w.count()}"}}, user="admin")["metering_label"]["id"],
    "metering_label_rule_id": lambda w: w.ok(
        "POST", "/networking/v2.0/metering/metering-label-rules", {"metering_label_rule": {
            "metering_label_id": w.ids["metering_label_id"],
            "remote_ip_prefix": f"10.{w.count() % 250}.{w.made // 250}.0/24"}},
        user="admin")["metering_label_rule"]["id"],
    # network flavors and service profiles are the admin's; a fresh profile is associated
    # with the flavor (its next provider, and a binding a DELETE can remove)
    "network_flavor_id": lambda w: w.ok("POST", "/networking/v2.0/flavors", {"flavor": {
        "name": f"nf-{w.count()}", "service_type": "L3_ROUTER_NAT"}}, user="admin")[
            "flavor"]["id"],
    "service_profile_id": lambda w: _service_profile(w),
    # project demo's local IP on the network of its subnet, and a port of demo there
    # associated with it
    "local_ip_id": lambda w: _local_ip(w),
    "fixed_port_id": lambda w: _local_ip_association(w),
    # a log of project demo, made by the admin (demo's member is no manager)
    "log_id": lambda w: w.ok("POST", "/networking/v2.0/log/logs", {"log": {
        "resource_type": "security_group", "project_id": w.demo}}, user="admin")[
            "log"]["id"],
    # project demo's QoS policy (admins make them) with one rule of each type
    "qos_policy_id": lambda w: _qos_policy(w),
    "bandwidth_limit_rule_id": lambda w: _qos_policy(w),
    "dscp_marking_rule_id": lambda w: _qos_policy(w),
    "minimum_bandwidth_rule_id": lambda w: _qos_policy(w),
    "minimum_packet_rate_rule_id": lambda w: _qos_policy(w),
    "rule_type": lambda w: "bandwidth_limit",
    "trunk_parent_id": lambda w: w.ok("POST", "/networking/v2.0/ports", {"port": {
        "network_id": w.ids["network_id"]}})["port"]["id"],
    "trunk_id": lambda w: w.ok("POST", "/networking/v2.0/trunks", {"trunk": {
        "port_id": w.ok("POST", "/networking/v2.0/ports", {"port": {
            "network_id": w.ids["network_id"]}})["port"]["id"]}})["trunk"]["id"],
    # project demo's NDP proxy on its NDP-proxying router (the first call builds them)
    "ndp_proxy_id": lambda w: _ndp_proxy(w),
    # a compute port of demo with an INACTIVE binding (`host`); per DELETE a new one
    "binding_port_id": lambda w: _port_binding(w),
    "host": lambda w: _port_binding(w),
    # block storage: project demo's volume (available), its snapshot, backup, attachment
    # and transfer; a public volume type and QoS specs of the admin's (type k1 extra spec)
    "bs_volume_id": lambda w: _bs_volume(w),
    "bs_transfer_volume_id": lambda w: _bs_volume(w),
    "bs_snapshot_id": lambda w: _bs_wait(w, "snapshots", w.ok(
        "POST", "/volume/v3/snapshots", {"snapshot": {"volume_id": _bs_volume(w)}})[
            "snapshot"]["id"]),
    "bs_backup_id": lambda w: _bs_wait(w, "backups", w.ok(
        "POST", "/volume/v3/backups", {"backup": {"volume_id": _bs_volume(w)}})[
            "backup"]["id"]),
    "bs_attachment_id": lambda w: w.ok("POST", "/volume/v3/attachments", {"attachment": {
        "volume_uuid": _bs_volume(w), "instance_uuid": str(uuid.uuid4())}})[
            "attachment"]["id"],
    "bs_transfer_id": lambda w: w.ok("POST", "/volume/v3/os-volume-transfer", {"transfer": {
        "volume_id": _bs_volume(w)}})["transfer"]["id"],
    "bs_type_id": lambda w: w.ok("POST", "/volume/v3/types", {"volume_type": {
        "name": f"t-{w.count()}", "extra_specs": {"k1": "v1"}}}, user="admin")[
            "volume_type"]["id"],
    "bs_host": lambda w: "stackling@file",
    "bs_group_type_id": lambda w: w.ok("POST", "/volume/v3/group_types", {"group_type": {
        "name": f"gt-{w.count()}", "group_specs": {"k1": "v1"}}}, user="admin")[
            "group_type"]["id"],
    "bs_group_id": lambda w: w.ok("POST", "/volume/v3/groups", {"group": {
        "group_type": w.ids["bs_group_type_id"], "volume_types": ["__DEFAULT__"]}})[
            "group"]["id"],
    "bs_group_snapshot_id": lambda w: w.ok("POST", "/volume/v3/group_snapshots", {
        "group_snapshot": {"group_id": w.ids["bs_group_id"]}})["group_snapshot"]["id"],
    "bs_qos_id": lambda w: w.ok("POST", "/volume/v3/qos-specs", {"qos_specs": {
        "name": f"q-{w.count()}", "k1": "v1"}}, user="admin")["qos_specs"]["id"],
}


@pytest.fixture(scope="module")
def world(api: Any) -> World:
    return World(api)


def _fill(entry: Entry, ids: Ids) -> tuple[str, bool]:
    """The URL and whether every placeholder named a real object."""
    real = True

    def sub(m: re.Match[str]) -> str:
        nonlocal real
        name = m.group(1)
        if entry.service == "block-storage" and f"bs_{name}" in ids:
            name = f"bs_{name}"  # block storage's objects: placeholders of their own
        # identity and placement get fake ids: never delete the world's project or user
        if name in ids and entry.service not in ("identity", "placement"):
            return ids[name]
        real = False
        return "00000000-0000-4000-8000-000000000000"

    prefix = {"identity": "/identity", "network": "/networking", "compute": "/compute",
              "placement": "/placement", "image": "/image",
              "block-storage": "/volume"}.get(entry.service)
    if prefix is None:
        prefix = "/" + entry.service
    url = prefix + PLACEHOLDER.sub(sub, entry.path)
    return url, real and not entry.fake


def _call(world: World, entry: Entry, persona: str, ids: Ids) -> tuple[int, str, bool, Any]:
    # heat's URLs carry the caller's own project
    ids = {**ids, "tenant_id": world.projects.get(persona, ids["project_id"])}
    url, real = _fill(entry, ids)
    headers = dict(HEADERS.get(entry.service, {}))
    if entry.version:
        headers["OpenStack-API-Version"] = f"{entry.service} {entry.version}"
    kwargs: dict[str, Any] = {}
    if entry.body is not None:
        body = BODIES[entry.body]({**ids, "image_id": ids.get("cirros_id", "")}
                                  if entry.body == "server" else ids)
        if isinstance(body, bytes):
            kwargs["content"] = body
            headers["Content-Type"] = "application/octet-stream"
        elif entry.body == "image_patch":
            import json

            kwargs["content"] = json.dumps(body)
            headers["Content-Type"] = "application/openstack-images-v2.1-json-patch"
        else:
            kwargs["json"] = body
    elif entry.method in ("POST", "PUT", "PATCH"):
        kwargs["json"] = {}
    # a redirect (heat's lookup) is the answer itself: its target is a route of its own
    r = world.api.request(entry.method, url, token=world.tokens[persona], headers=headers,
                          follow_redirects=False, **kwargs)
    body = r.json() if r.content and r.headers.get("content-type", "").startswith(
        "application/json") else None
    return r.status_code, r.text[:200], real, body


def _fresh_ids(world: World, entry: Entry) -> Ids:
    """For a DELETE of a real object: a new one, so each persona meets an existing object."""
    names = PLACEHOLDER.findall(entry.path)
    leaf = names[-1] if names else None
    if entry.service == "block-storage" and f"bs_{leaf}" in FRESH:
        made = FRESH[f"bs_{leaf}"](world) if entry.method == "DELETE" else None
        return {**world.ids, **({f"bs_{leaf}": made} if made is not None else {})}
    if entry.method != "DELETE" or leaf not in FRESH:
        return world.ids
    made = FRESH[leaf](world)
    return {**world.ids, **(made if isinstance(made, dict) else {leaf: made})}


def _matches(expected: str, status: int, real: bool, body: Any) -> bool:
    if status >= 500:
        return False
    if expected == EMPTY:
        return status == 200 and isinstance(body, dict) and all(
            v == [] for k, v in body.items() if isinstance(v, list))
    if expected == OK:
        return status not in (401, 403) and not (real and status == 404)
    return str(status) == expected


def test_policy_matrix(api: Any, world: World) -> None:
    registered = {(s.name, m, p) for s, m, p in _registered(api)}
    failures = []
    for entry in ENTRIES:
        if entry.key not in registered:
            continue  # a table line for a route another build does not serve
        for persona in PERSONAS:
            ids = _fresh_ids(world, entry)
            status, text, real, body = _call(world, entry, persona, ids)
            want = entry.expected(persona)
            if not _matches(want, status, real, body):
                failures.append(f"{entry.method} {entry.path} as {persona}: want {want}, "
                                f"got {status} {text}")
        if "quota" in entry.path:
            world.lift_quotas()
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------ issue 9, item 2
def test_a_reader_writes_nothing(api: Any, world: World) -> None:
    """The writes the issue found open to a reader (and an unscoped token) are refused."""
    w, reader = world.ids, world.tokens["reader"]
    port_before = world.ok("GET", f"/networking/v2.0/ports/{w['port_id']}")["port"]
    attempts = [
        ("POST", "/networking/v2.0/subnets", {"subnet": {
            "network_id": w["network_id"], "cidr": "10.78.0.0/24", "ip_version": 4}}),
        ("PUT", f"/networking/v2.0/subnets/{w['subnet_id']}", {"subnet": {"name": "r"}}),
        ("DELETE", f"/networking/v2.0/subnets/{w['subnet_id']}", None),
        ("PUT", f"/networking/v2.0/ports/{w['port_id']}", {"port": {"fixed_ips": []}}),
        ("PUT", f"/networking/v2.0/ports/{w['port_id']}",
         {"port": {"port_security_enabled": False, "security_groups": []}}),
        ("PUT", f"/networking/v2.0/ports/{w['port_id']}",
         {"port": {"security_groups": [w["sg_id"]]}}),
        ("DELETE", f"/networking/v2.0/ports/{w['port_id']}", None),
        ("DELETE", f"/networking/v2.0/security_group_rules/{w['rule_id']}", None),
        ("POST", "/image/v2/images", {"name": "r"}),
        ("DELETE", f"/image/v2/images/{w['image_id']}", None),
    ]
    for method, url, body in attempts:
        r = world.api.request(method, url, token=reader, json=body)
        assert r.status_code == 403, (method, url, r.status_code, r.text)
    r = world.api.request("PATCH", f"/image/v2/images/{w['image_id']}", token=reader,
                          content='[{"op": "replace", "path": "/name", "value": "r"}]',
                          headers={"Content-Type": "application/openstack-images-v2.1-json-patch"})
    assert r.status_code == 403, r.text
    r = world.api.request("PUT", f"/image/v2/images/{w['image_id']}/file", token=reader,
                          content=b"x", headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 403, r.text
    r = world.api.request("POST", "/image/v2/images", token=world.tokens["unscoped"],
                          json={"name": "u"})
    assert r.status_code == 403, r.text
    # nothing changed: the objects are all there, as the member sees them
    for url in (f"/networking/v2.0/subnets/{w['subnet_id']}",
                f"/networking/v2.0/ports/{w['port_id']}",
                f"/networking/v2.0/security_group_rules/{w['rule_id']}",
                f"/image/v2/images/{w['image_id']}"):
        assert world.ok("GET", url) is not None
    assert world.ok("GET", f"/networking/v2.0/ports/{w['port_id']}")["port"] == port_before


def test_a_policy_file_overrides_defaults(tmp_path: Any) -> None:
    from tests.conftest import make_api

    path = tmp_path / "policy.yaml"
    path.write_text('add_image: "role:admin or (role:reader and project_id:%(project_id)s)"\n'
                    'create_network: "rule:context_is_admin"\n')
    gen = make_api(tmp_path / "data", policy_file=str(path))
    api = next(gen)
    try:
        _make_user(api, "policy-reader", "demo", "reader")
        reader = api.token("policy-reader", "demo", "pw-secret")
        r = api.request("POST", "/image/v2/images", token=reader, json={"name": "r"})
        assert r.status_code == 201, r.text
        r = api.post("/networking/v2.0/networks", user="demo", json={"network": {"name": "n"}})
        assert r.status_code == 403, r.text
        assert r.json()["NeutronError"]["message"] == "rule:create_network is disallowed by policy"
        # rules the file does not name keep their defaults
        r = api.post("/networking/v2.0/routers", user="demo", json={"router": {"name": "r"}})
        assert r.status_code == 201, r.text
    finally:
        gen.close()
