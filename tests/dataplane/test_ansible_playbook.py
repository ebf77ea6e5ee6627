"""A real playbook passes (issue 30): Ansible's openstack.cloud collection provisions a
debian-12 server with a floating IP, then configures it over SSH with ordinary modules
(facts, user, copy, template, systemd), checks it with `uri` from the outside namespace,
and a second run of the whole playbook changes nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = ROOT / ".venv-ansible" / "bin" / "ansible-playbook"
STACKLING = Path(sys.executable).parent / "stackling"

PLAYBOOK = """
- name: provision
  hosts: localhost
  gather_facts: false
  vars: {cloud: stackling}
  tasks:
    - openstack.cloud.keypair: {cloud: "{{ cloud }}", name: pb-key, public_key_file: "{{ key }}.pub"}
    - openstack.cloud.network: {cloud: "{{ cloud }}", name: pb-net}
    - openstack.cloud.subnet:
        {cloud: "{{ cloud }}", name: pb-subnet, network_name: pb-net, cidr: 10.91.0.0/24}
    - openstack.cloud.router:
        cloud: "{{ cloud }}"
        name: pb-router
        network: public
        interfaces: [pb-subnet]
    - openstack.cloud.security_group: {cloud: "{{ cloud }}", name: pb-sg}
    - openstack.cloud.security_group_rule:
        cloud: "{{ cloud }}"
        security_group: pb-sg
        protocol: tcp
        port_range_min: "{{ item }}"
        port_range_max: "{{ item }}"
        remote_ip_prefix: 0.0.0.0/0
      loop: [22, 8080]
    - openstack.cloud.server:
        cloud: "{{ cloud }}"
        name: pb-vm
        image: debian-12
        flavor: m1.small
        key_name: pb-key
        network: pb-net
        security_groups: [pb-sg]
        auto_ip: true
        wait: true
        timeout: 300
    - openstack.cloud.server_info: {cloud: "{{ cloud }}", name: pb-vm}
      register: info
    - ansible.builtin.add_host:
        name: pb-vm
        groups: guests
        ansible_host: "{{ info.servers[0].access_ipv4 }}"
        ansible_user: debian
      changed_when: false

- name: configure
  hosts: guests
  become: true
  gather_facts: false
  tasks:
    - ansible.builtin.wait_for_connection: {timeout: 300}
    - ansible.builtin.setup:
    - ansible.builtin.assert:
        that: [ansible_distribution == "Debian", ansible_distribution_major_version == "12"]
    - ansible.builtin.user: {name: webapp, system: true, create_home: false}
    - ansible.builtin.file: {path: /srv/www, state: directory, owner: webapp, mode: "0755"}
    - ansible.builtin.copy:
        dest: /srv/www/index.html
        content: "configured by ansible\\n"
        owner: webapp
        mode: "0644"
    - ansible.builtin.template: {src: webapp.service.j2, dest: /etc/systemd/system/webapp.service}
    - ansible.builtin.systemd:
        {name: webapp, enabled: true, state: started, daemon_reload: true}
    - ansible.builtin.wait_for: {port: 8080, timeout: 60}

- name: check from the outside namespace
  hosts: outside
  gather_facts: false
  tasks:
    - ansible.builtin.uri:
        url: "http://{{ hostvars['pb-vm'].ansible_host }}:8080/index.html"
        return_content: true
      register: page
      until: page.status | default(0) == 200
      retries: 30
      delay: 1
    - ansible.builtin.assert: {that: ["'configured by ansible' in page.content"]}
"""

UNIT = """[Unit]
Description=webapp (written by Ansible)
After=network-online.target

[Service]
User=webapp
WorkingDirectory=/srv/www
ExecStart=/usr/bin/python3 -m http.server {{ 8080 }}

[Install]
WantedBy=multi-user.target
"""


def test_a_real_playbook_provisions_and_configures(dataplane_cloud: DataplaneCloud,
                                                   tmp_path: Path) -> None:
    dp = dataplane_cloud
    if not ANSIBLE_PLAYBOOK.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Ansible is not installed: `make ansible` must have run")
        pytest.skip("Ansible is not installed (make ansible)")
    if dp.sdk.image.find_image("debian-12") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no debian-12 image: `make image-debian` must have built it")
        pytest.skip("no debian-12 image (make image-debian)")
    data_dir = str(dp.cloud.data_dir)
    config = tmp_path / "ssh_config"
    # the outside namespace is the reconciler's first pass's (the cloud may be younger)
    assert eventually(lambda: Path(f"/run/netns/{dp.names.outside}").exists(), timeout=120)
    out = subprocess.run([str(STACKLING), "ssh-config", "--data-dir", data_dir,
                          "--database-url", dp.cloud.database_url, "-i",
                          str(dp.key)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    config.write_text(out.stdout)
    (tmp_path / "webapp.service.j2").write_text(UNIT)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    python = ROOT / ".venv-ansible" / "bin" / "python3"
    # `outside`: a local host whose modules run inside the cloud's outside namespace (its
    # interpreter a script: Ansible takes the interpreter as one path)
    inside = tmp_path / "outside-python"
    inside.write_text(f'#!/bin/sh\nexec nsenter --net=/run/netns/{dp.names.outside} {python} "$@"\n')
    inside.chmod(0o755)
    (tmp_path / "inventory.ini").write_text(
        f"[outside]\noutside ansible_connection=local ansible_python_interpreter={inside}\n")
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(dp.cloud.data_dir / "clouds.yaml"),
           "ANSIBLE_SSH_ARGS": f"-F {config}", "ANSIBLE_HOST_KEY_CHECKING": "False",
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PYTHON_INTERPRETER": "auto_silent",
           # a module piped to the guest's python on the task's one SSH session, not put
           # as a file first (a new session each: its `stackling connect` and handshake)
           "ANSIBLE_PIPELINING": "True"}
    env.pop("OS_CLOUD", None)

    def play() -> str:
        run = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", "inventory.ini", "-e",
                              f"key={dp.key}", "play.yml"], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=900)
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
        return run.stdout

    play()
    # scp and sftp (OpenSSH's sftp-server in the image) through the same ssh-config,
    # from the machine's own namespace
    vm = next(dp.sdk.compute.servers(all_projects=True, name="^pb-vm$"))
    address = next(a["addr"] for net in vm.addresses.values() for a in net
                   if a.get("OS-EXT-IPS:type") == "floating")
    payload = tmp_path / "payload.bin"
    payload.write_bytes(os.urandom(300_000))
    for argv in (["scp", "-F", str(config), "-o", "BatchMode=yes", str(payload),
                  f"debian@{address}:/tmp/payload.bin"],
                 ["scp", "-F", str(config), "-o", "BatchMode=yes",
                  f"debian@{address}:/tmp/payload.bin", str(tmp_path / "back.bin")]):
        copied = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "back.bin").read_bytes() == payload.read_bytes()
    listed = subprocess.run(["sftp", "-F", str(config), "-o", "BatchMode=yes", "-b", "-",
                             f"debian@{address}"], input="ls -l /tmp/payload.bin\n",
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "300000" in listed.stdout, listed
    again = play()
    recap = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", again, re.M)
    assert recap and all(changed == "0" for _, changed in recap), again[-3000:]
