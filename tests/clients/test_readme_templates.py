"""The README's "Templates" section, step by step with the `openstack` CLI: its template
(read from the README, so the two never drift) is created, then updated from a `network`
entry to a `subnet` entry, and the server keeps its port and address."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import sqlite_only

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_template() -> str:
    section = README.read_text().split("## Templates", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


@sqlite_only
def test_cli_readme_templates_update_keeps_the_address(cloud, tmp_path):
    def cli(*args: str) -> Any:
        return cloud.cli(*args, cloud="stackling")

    def outputs() -> dict[str, str]:
        out = cli("stack", "output", "show", "web-readme", "--all", "-f", "json")
        return {k: v["output_value"] for k, v in out.items()}

    path = tmp_path / "web.yaml"
    path.write_text(readme_template().replace("web-net", "web-readme-net"
                                              ).replace("10.77.0.", "10.78.0."))
    cli("stack", "create", "-t", str(path), "--wait", "web-readme")
    before = outputs()
    assert before["address"].startswith("10.78.0.") and before["port"]
    cli("stack", "update", "--existing", "--parameter", "by_subnet=true", "--wait",
        "web-readme")
    shown = cli("stack", "show", "web-readme", "-f", "json")
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    assert outputs() == before
    cli("stack", "delete", "--yes", "--wait", "web-readme")
