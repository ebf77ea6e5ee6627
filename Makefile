# Two commands set up everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# What is installed in the venv: the cloud alone (`make run`), plus the openstack CLI
# (`make client`), or everything for development and tests (`make test`, a superset).
STAMP_RUN := $(VENV)/.installed-run
STAMP_CLIENT := $(VENV)/.installed-client
STAMP := $(VENV)/.installed
DATA_DIR ?= .stackling
PORT ?= 8900
# pytest-xdist workers: live servers, databases and CLI waits leave the 2 cores idle often
# enough that 4 workers beat 2. Each worker has its own data dirs, databases and ports.
WORKERS ?= 4
PYTEST_ARGS ?=
# Tests run in groups (tests/conftest.py): a module's tests together, the session clouds'
# tests of one backend together, one multi-process race per database server at a time.
PYTEST := $(BIN)/pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadgroup --no-loadscope-reorder

.PHONY: install client run test test-quick lint bench clean sysdeps browser screenshots dataplane-deps \
  image-debian image-deps ansible

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	$(BIN)/python -m compileall -q stackling
	touch $(STAMP_RUN)

$(STAMP_CLIENT): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[client]'
	touch $(STAMP_RUN) $(STAMP_CLIENT)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/python -m compileall -q stackling
	touch $(STAMP_RUN) $(STAMP_CLIENT) $(STAMP)

install: $(STAMP)

# The cloud only (no test tools, no clients), in the foreground. The dataplane (servers you
# can reach: stackling/dataplane/README.md) is on where the machine allows it (root, network
# namespaces, `make dataplane-deps`'s tools, which it installs as root when missing);
# elsewhere one line says why and the cloud runs without it. DATAPLANE=none (or
# STACKLING_DATAPLANE__DRIVER=none) keeps it off.
DATAPLANE ?= auto
run: $(STAMP_RUN) $(if $(filter none,$(DATAPLANE) $(STACKLING_DATAPLANE__DRIVER)),,dataplane-deps)
	@$(BIN)/python -m compileall -q stackling
	@driver=$${STACKLING_DATAPLANE__DRIVER:-$(DATAPLANE)}; \
	if [ "$$driver" = auto ]; then \
	  why=$$($(BIN)/python -c 'from stackling.dataplane.interface import unavailable_reason; \
	    print(unavailable_reason() or "")'); \
	  if [ -z "$$why" ]; then driver=netns; else driver=none; \
	    echo "dataplane off: $$why; servers stay database rows (stackling/dataplane/README.md)"; fi; \
	fi; \
	echo "$(BIN)/stackling serve --data-dir $(DATA_DIR) --port $(PORT)  (dataplane.driver $$driver;" \
	  "another port: make run PORT=N)"; \
	STACKLING_DATAPLANE__DRIVER=$$driver exec $(BIN)/stackling serve --data-dir $(DATA_DIR) --port $(PORT)

# The openstack CLI (python-openstackclient, osc-placement, heatclient) in .venv/bin.
client: $(STAMP_CLIENT)

test: $(STAMP) sysdeps
	$(BIN)/ruff check stackling tests bench
	$(BIN)/lint-imports --no-cache --no-logo
	$(PYTEST) $(PYTEST_ARGS)

# The inner loop: SQLite only, no browser, no CLI stories, no dataplane (lint: make lint).
test-quick: $(STAMP)
	STACKLING_TEST_BACKENDS=sqlite $(PYTEST) -m "not cli and not browser and not dataplane" \
	  $(PYTEST_ARGS)

# System packages the tests need, installed when missing (idempotent; root, Debian's apt).
# Add a new one as a prerequisite here, with its own target below.
# The Debian image is built here too (about 2-3 minutes cold, once per machine; as root only):
# tests/dataplane/test_image_prepare.py and the guests' tests boot it.
sysdeps: browser dataplane-deps image-debian ansible

# The console's browser tests drive Debian's chromium (Playwright never downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The dataplane's tools (dataplane.driver netns): Debian's busybox, dnsmasq, nftables, dropbear
# (and the ssh client its tests use); IPv6: radvd (routers' advertisements) and ISC dhclient
# (the guests' DHCPv6 client).
# (sudo, curl and sftp-server are copied into the cirros guests' kit: rootfs.py)
dataplane-deps:
	@for t in busybox dnsmasq nft dropbear ssh radvd dhclient sudo curl; do command -v $$t >/dev/null 2>&1 || \
	  [ -x /usr/sbin/$$t ] || [ -x /sbin/$$t ] || missing=1; done; \
	  [ -x /usr/lib/openssh/sftp-server ] || missing=1; [ -z "$$missing" ] || \
	  [ "$$(id -u)" != 0 ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq busybox-static dnsmasq-base nftables dropbear-bin openssh-client \
	    radvd isc-dhcp-client sudo curl openssh-sftp-server >/dev/null; }

# A Debian 12 cloud image from Debian's packages (images/debian/build.py: qcow2, GPT, one
# ext4 root; no kernel, for system containers), built once per machine (cached by its
# inputs' digest) from the machine's apt mirror; `stackling serve` uploads it as debian-12.
IMAGE_CACHE ?= /var/cache/stackling/images
image-debian: image-deps
	@if [ "$$(id -u)" = 0 ]; then $(PYTHON) images/debian/build.py --cache-dir $(IMAGE_CACHE); \
	else echo "image-debian: not root, not built (mmdebstrap --mode=root)"; fi

# The image tools: mmdebstrap, qemu-img, mkfs.ext4, sfdisk and sgdisk (and mksquashfs, for
# the squashfs image of tests/dataplane/test_image_prepare.py).
image-deps:
	@for t in mmdebstrap qemu-img mkfs.ext4 sfdisk sgdisk mksquashfs; do command -v $$t >/dev/null 2>&1 || \
	  [ -x /usr/sbin/$$t ] || [ -x /sbin/$$t ] || missing=1; done; [ -z "$$missing" ] || \
	  [ "$$(id -u)" != 0 ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq mmdebstrap qemu-utils e2fsprogs fdisk gdisk squashfs-tools >/dev/null; }

# Ansible and the openstack.cloud collection in .venv-ansible (pins: pyproject.toml's
# `ansible` extra, why its own venv: there), for README.md's "Ansible".
ANSIBLE_VENV := .venv-ansible
ansible: $(ANSIBLE_VENV)/.installed
$(ANSIBLE_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ANSIBLE_VENV)
	$(ANSIBLE_VENV)/bin/pip install -q --upgrade pip
	$(ANSIBLE_VENV)/bin/pip install -q -e '.[ansible]'
	touch $@

# Regenerates the console screenshots in docs/ from a fresh demo cloud.
screenshots: $(STAMP) browser
	$(BIN)/python -m tests.browser.screenshots docs

lint: $(STAMP)
	$(BIN)/ruff check stackling tests bench
	$(BIN)/lint-imports --no-cache --no-logo

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(ANSIBLE_VENV) $(DATA_DIR) build *.egg-info
