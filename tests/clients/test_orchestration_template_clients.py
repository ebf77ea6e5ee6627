"""Template introspection and validation through python-heatclient's `openstack
orchestration ...` commands on SQLite."""

from __future__ import annotations

from tests.conftest import sqlite_only


@sqlite_only
def test_cli_template_versions_and_functions(cloud):
    def cli(*args):
        return cloud.cli(*args, cloud="stackling")

    versions = cli("orchestration", "template", "version", "list", "-f", "json")
    assert {"Version": "heat_template_version.2018-08-31", "Type": "hot",
            "Aliases": ["heat_template_version.rocky"]} in versions
    fns = cli("orchestration", "template", "function", "list", "-f", "json",
              "heat_template_version.2016-10-14")
    by_name = {f["Functions"]: f["Description"] for f in fns}
    assert "map_replace" in by_name and by_name["get_param"]
    cond = cli("orchestration", "template", "function", "list", "-f", "json",
               "--with_conditions", "heat_template_version.2016-10-14")
    assert {f["Functions"] for f in cond} == {"get_param", "equals", "not", "and", "or"}
