"""The extensions this service advertises (`GET /v2.0/extensions`).

Clients decide behaviour from these aliases, so only what is implemented is listed.
Another module that implements an extension appends to `EXTENSIONS` at import time
(e.g. `EXTENSIONS.append(Extension("router", "Neutron L3 Router", "...", "2012-07-20T10:00:00-00:00"))`);
`network.api` imports every resource module before serving, so the list is complete.
An extension behind a service-plugin switch names it in `setting` (a boolean of
`NetworkSettings`); it is advertised only where that switch is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Extension:
    alias: str
    name: str
    description: str
    updated: str = "2016-02-24T17:00:00-00:00"
    setting: str | None = None

    def enabled(self, settings: Any) -> bool:
        return self.setting is None or bool(getattr(settings, self.setting, False))

    def view(self) -> dict[str, Any]:
        return {"name": self.name, "alias": self.alias, "description": self.description,
                "updated": self.updated, "links": []}


EXTENSIONS: list[Extension] = [
    Extension("external-net", "Neutron external network",
              "Adds external network attribute to network resource.",
              "2013-01-14T10:00:00-00:00"),
    Extension("provider", "Provider Network",
              "Expose mapping of virtual networks to physical networks",
              "2012-09-07T10:00:00-00:00"),
    Extension("binding", "Port Binding", "Expose port bindings of a virtual port to external "
              "application", "2014-02-03T10:00:00-00:00"),
    Extension("security-group", "security-group", "The security groups extension.",
              "2012-10-05T10:00:00-00:00"),
    Extension("port-security", "Port Security", "Provides port security",
              "2012-07-23T10:00:00-00:00"),
    Extension("allowed-address-pairs", "Allowed Address Pairs",
              "Provides allowed address pairs", "2013-07-23T10:00:00-00:00"),
    Extension("net-mtu", "Network MTU", "Provides MTU attribute for a network resource.",
              "2015-03-25T10:00:00-00:00"),
    Extension("net-mtu-writable", "Network MTU (writable)",
              "Provides a writable MTU attribute for a network resource.",
              "2017-07-12T00:00:00-00:00"),
    Extension("availability_zone", "Availability Zone",
              "The availability zone extension.", "2015-01-01T10:00:00-00:00"),
    Extension("network_availability_zone", "Network Availability Zone",
              "Availability zone support for network.", "2015-01-01T10:00:00-00:00"),
    Extension("subnet_allocation", "Subnet Allocation", "Enables allocation of subnets "
              "from a subnet pool", "2015-03-30T10:00:00-00:00"),
    Extension("default-subnetpools", "Default Subnetpools",
              "Provides ability to mark and use a subnetpool as the default.",
              "2016-02-18T18:00:00-00:00"),
    Extension("subnet-service-types", "Subnet service types",
              "Provides ability to set the subnet service_types field",
              "2016-03-15T18:00:00-00:00"),
    Extension("ip_allocation", "IP Allocation",
              "IP allocation extension.", "2016-06-10T23:00:00-00:00"),
    Extension("l2_adjacency", "L2 Adjacency", "Display L2 Adjacency for Neutron Networks.",
              "2016-04-12T16:00:00-00:00"),
    Extension("project-id", "project_id field enabled",
              "Extension that indicates that project_id field is enabled.",
              "2016-09-09T09:09:09-09:09"),
    Extension("standard-attr-description", "standard-attr-description",
              "Extension to add descriptions to standard attributes",
              "2016-02-10T10:00:00-00:00"),
    Extension("standard-attr-timestamp", "Resource timestamps",
              "Adds created_at and updated_at fields to all Neutron resources that have "
              "Neutron standard attributes.", "2016-09-12T10:00:00-00:00"),
    Extension("standard-attr-revisions", "Resource revision numbers",
              "This extension will display the revision number of neutron resources.",
              "2016-04-11T10:00:00-00:00"),
    Extension("standard-attr-tag", "Tag support for resources with standard attribute: "
              "subnet, trunk, network_segment_range, router, network, policy, subnetpool, "
              "port, security_group, floatingip", "Enables to set tag on resources with "
              "standard attribute.", "2017-01-01T00:00:00-00:00"),
    Extension("stateful-security-group", "Stateful security group",
              "Indicates if the security group is stateful or not",
              "2019-11-26T09:00:00-00:00"),
    Extension("security-groups-normalized-cidr", "Normalized CIDR field for security "
              "group rules", "Add new field with normalized remote_ip_prefix cidr in SG "
              "rule", "2021-01-14T10:00:00-00:00"),
    Extension("tag-ports-during-bulk-creation", "Tag Ports During Bulk Creation",
              "Allow to tag ports during bulk creation", "2019-12-29T19:00:00-00:00"),
    Extension("revision-if-match", "If-Match constraints based on revision_number",
              "Extension indicating that If-Match based on revision_number is supported.",
              "2016-12-11T00:00:00-00:00"),
    Extension("pagination", "Pagination support", "Extension that indicates that "
              "pagination is enabled.", "2016-06-12T00:00:00-00:00"),
    Extension("sorting", "Sorting support", "Extension that indicates that sorting is "
              "enabled.", "2016-06-12T00:00:00-00:00"),
    Extension("filter-validation", "Filter parameters validation",
              "Provides validation on filter parameters.", "2018-03-21T10:00:00-00:00"),
    Extension("sort-key-validation", "Sort keys validation",
              "Provides validation on sort keys.", "2019-08-20T10:00:00-00:00"),
    Extension("empty-string-filtering", "Empty String Filtering Extension",
              "Allow filtering by attributes with empty string value",
              "2018-05-01T10:00:00-00:00"),
    Extension("ip-substring-filtering", "IP address substring filtering",
              "Provides IP address substring filtering when listing ports",
              "2017-11-28T09:00:00-00:00"),
]


def find(alias: str, settings: Any = None) -> Extension | None:
    """The extension `alias`; with `settings`, only if enabled there."""
    return next((e for e in EXTENSIONS if e.alias == alias
                 and (settings is None or e.enabled(settings))), None)


def enabled(settings: Any) -> list[Extension]:
    """The extensions advertised under these `NetworkSettings`."""
    return [e for e in EXTENSIONS if e.enabled(settings)]


def aliases() -> set[str]:
    return {e.alias for e in EXTENSIONS}
