// The stackling console: a client of the public APIs, like any other. It signs in through
// Keystone, keeps the token in this tab's sessionStorage only, and reads the same routes
// as openstacksdk does, so policy applies unchanged (a member sees their project).
"use strict";

const POLL_MS = 3000;
const COMPUTE_VERSION = "compute 2.53";
const PLACEMENT_VERSION = "placement 1.26";
const $ = (sel) => document.querySelector(sel);
let session = JSON.parse(sessionStorage.getItem("stackling.session") || "null");
let graph = null;
let current = "topology";
let pollTimer = null;
let segmentHostsCache = {key: "", hosts: {}};
let layoutExtent = {x1: 0, y1: 0, w: 1, h: 1};

// ------------------------------------------------------------------ API access
class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function errorMessage(body, fallback) {
  if (!body || typeof body !== "object") return fallback;
  if (body.error && body.error.message) return body.error.message;            // keystone
  if (body.NeutronError) return body.NeutronError.message;                     // neutron
  if (Array.isArray(body.errors) && body.errors[0]) return body.errors[0].detail; // placement
  const nova = Object.values(body)[0];
  if (nova && nova.message) return nova.message;                               // nova, heat
  return fallback;
}

async function api(service, path, options = {}) {
  const base = session.endpoints[service];
  if (base === undefined) throw new ApiError(404, `no ${service} endpoint in the catalog`);
  const headers = {"X-Auth-Token": session.token, "Accept": "application/json"};
  if (service === "compute") headers["OpenStack-API-Version"] = COMPUTE_VERSION;
  if (service === "placement") headers["OpenStack-API-Version"] = PLACEMENT_VERSION;
  if (options.body) headers["Content-Type"] = "application/json";
  const resp = await fetch(base + path, {method: options.method || "GET", headers,
                                         body: options.body ? JSON.stringify(options.body) : undefined});
  if (resp.status === 401) { signOut("Your session has expired: sign in again."); throw new ApiError(401, "unauthorized"); }
  const text = await resp.text();
  const body = text ? JSON.parse(text) : null;
  if (!resp.ok) throw new ApiError(resp.status, errorMessage(body, resp.statusText));
  return body;
}

// A list the caller may not be allowed to read (admin-only routes) is empty for them.
async function optional(promise, empty) {
  try { return await promise; } catch (err) {
    if (err.status === 403 || err.status === 404) return empty;
    throw err;
  }
}

// stackling's own admin APIs (/audit, /dataplane): not in the catalog, same token.
async function stackling(path) {
  const resp = await fetch(path, {headers: {"X-Auth-Token": session.token, "Accept": "application/json"}});
  if (resp.status === 401) { signOut("Your session has expired: sign in again."); throw new ApiError(401, "unauthorized"); }
  const body = await resp.json().catch(() => null);
  if (!resp.ok) throw new ApiError(resp.status, errorMessage(body, `${path} answered ${resp.status}.`));
  return body;
}

// The wire as the kernel has it (admin, dataplane.driver netns): null when there is none.
async function loadWire() {
  if (!session.isAdmin) return null;
  const status = await optional(stackling("/dataplane/v1"), null);
  if (!status || !status.dataplane.readable) return null;
  const wire = await optional(stackling("/dataplane/v1/wire"), null);
  return wire && wire.wire;
}

// ------------------------------------------------------------------ sign in / out
function endpointsFrom(catalog) {
  const out = {};
  for (const entry of catalog || []) {
    const ep = entry.endpoints.find((e) => e.interface === "public") || entry.endpoints[0];
    if (ep) out[entry.type] = new URL(ep.url, location.href).pathname.replace(/\/$/, "");
  }
  return out;
}

async function signIn(user, password, project, domain) {
  const body = {auth: {
    identity: {methods: ["password"], password: {user: {name: user, domain: {name: domain}, password}}},
    scope: {project: {name: project, domain: {name: domain}}}}};
  const resp = await fetch("/identity/v3/auth/tokens", {method: "POST",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const data = await resp.json().catch(() => null);
  if (!resp.ok) throw new ApiError(resp.status, errorMessage(data, "The request you have made requires authentication."));
  const token = data.token;
  const roles = token.roles.map((r) => r.name);
  session = {token: resp.headers.get("X-Subject-Token"), user: token.user.name,
             project: token.project.name, projectId: token.project.id, roles,
             isAdmin: roles.includes("admin"), endpoints: endpointsFrom(token.catalog)};
  sessionStorage.setItem("stackling.session", JSON.stringify(session));
}

function signOut(message) {
  session = null;
  sessionStorage.removeItem("stackling.session");
  clearTimeout(pollTimer);
  if (graph) { graph.destroy(); graph = null; }
  showLoggedOut(message || "");
}

function showLoggedOut(message) {
  $("#login").hidden = false;
  $("#tabs").hidden = true;
  $("#who").hidden = true;
  document.querySelectorAll(".view").forEach((v) => { v.hidden = true; });
  $("#login-error").textContent = message;
}

function showLoggedIn() {
  $("#login").hidden = true;
  $("#tabs").hidden = false;
  $("#who").hidden = false;
  $("#who-name").textContent = `${session.user} @ ${session.project}${session.isAdmin ? " (admin)" : ""}`;
  // The audit and the path tracer are admin APIs: a member's token (no admin role) gets no
  // tab that could only answer "needs an admin".
  document.querySelectorAll("#tabs button[data-admin]").forEach((b) => { b.hidden = !session.isAdmin; });
  if (!session.isAdmin && $(`#tabs button[data-view=${current}]`).hidden) current = "topology";
  show(current);
}

function show(view) {
  current = view;
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.view === view));
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== view; });
  clearTimeout(pollTimer);
  refresh();
}

async function refresh() {
  if (!session) return;
  try {
    if (current === "topology") await refreshTopology();
    else if (current === "capacity") await refreshCapacity();
    else if (current === "failures") await refreshFailures();
    else if (current === "path") await refreshPathChoices();
  } catch (err) {
    if (err.status !== 401) setStatus(`Could not refresh: ${err.message}`);
  }
  if (session && current !== "audit" && current !== "path") pollTimer = setTimeout(refresh, POLL_MS);
}

function setStatus(text) { const el = $("#status"); if (el) el.textContent = text; }

// ------------------------------------------------------------------ topology
async function loadCloud() {
  const allProjects = session.isAdmin ? "?all_tenants=1" : "";
  const portFields = ["id", "name", "device_id", "device_owner", "network_id", "fixed_ips",
                      "binding:host_id", "status", "mac_address"].map((f) => `fields=${f}`).join("&");
  const fipFields = ["id", "floating_ip_address", "floating_network_id", "port_id", "fixed_ip_address",
                     "status"].map((f) => `fields=${f}`).join("&");
  const [networks, subnets, routers, ports, servers, segments, floatingips] = await Promise.all([
    api("network", "/v2.0/networks"), api("network", "/v2.0/subnets"),
    api("network", "/v2.0/routers"), api("network", `/v2.0/ports?${portFields}`),
    api("compute", `/servers/detail${allProjects}`),
    session.isAdmin ? optional(api("network", "/v2.0/segments"), {segments: []}) : {segments: []},
    api("network", `/v2.0/floatingips?${fipFields}`),
  ]);
  const cloud = {networks: networks.networks, subnets: subnets.subnets, routers: routers.routers,
                 ports: ports.ports, servers: servers.servers, segments: segments.segments,
                 floatingips: floatingips.floatingips, segmentHosts: {}, wire: null};
  [cloud.segmentHosts, cloud.wire] = await Promise.all([segmentHosts(cloud.segments), loadWire()]);
  return cloud;
}

// Hosts reaching each segment: the members of the segment's placement aggregate (the
// compute hosts of its rack). Fetched again only when the set of segments changes.
async function segmentHosts(segments) {
  const key = segments.map((s) => s.id).sort().join(",");
  if (!session.isAdmin || !segments.length || key === segmentHostsCache.key) {
    return segments.length ? segmentHostsCache.hosts : {};
  }
  const hosts = {};
  const withProvider = await segmentProviders(segments);
  await Promise.all(segments.map(async (seg) => {
    if (!withProvider.has(seg.id)) { hosts[seg.id] = []; return; }
    const aggs = await optional(api("placement", `/resource_providers/${seg.id}/aggregates`), {aggregates: []});
    const members = aggs.aggregates.length
      ? await optional(api("placement", `/resource_providers?member_of=in:${aggs.aggregates.join(",")}`),
                       {resource_providers: []})
      : {resource_providers: []};
    hosts[seg.id] = members.resource_providers.filter((rp) => rp.uuid !== seg.id).map((rp) => rp.name);
  }));
  segmentHostsCache = {key, hosts};
  return hosts;
}

// The segments placement holds a provider for (Neutron reports a segment once a subnet is
// on it): asking about any other segment would be a 404 in the browser's log.
async function segmentProviders(segments) {
  if (!segments.length) return new Set();
  const rps = await optional(api("placement", "/resource_providers"), {resource_providers: []});
  const known = new Set(rps.resource_providers.map((rp) => rp.uuid));
  return new Set(segments.map((s) => s.id).filter((id) => known.has(id)));
}

function label(obj, fallback) { return obj.name || fallback || obj.id.slice(0, 8); }

// More servers than this behind one subnet (or unattached) are drawn as one group node:
// a readable graph, and a first paint that stays fast with thousands of servers.
const GROUP_AT = 25;
// Beyond this many servers drawn, the host -> server edges ("runs") are shown only for the
// selected host or server: a few hosts' edges to every server would cover the graph.
const RUNS_SHOWN_UPTO = 30;

// The graph's elements: nodes carry `label` (the object's name, what tests and the details
// panel use) and `display` (what is drawn: the name and, for a server, its floating IPs). A
// server is drawn inside the box of its first subnet (a compound node); its other subnets
// reach it by an edge.
function elementsOf(cloud) {
  const attachments = [];  // [parent node id, server id, label]
  const attach = (parent, serverId, lbl) => attachments.push([parent, serverId, lbl]);
  const nodes = [];
  const edges = [];
  const ids = new Set();
  const node = (id, kind, lbl, data, classes = "", extra = {}) => {
    if (ids.has(id)) return;
    ids.add(id);
    nodes.push({group: "nodes", data: {id, kind, label: lbl, display: lbl, obj: data, ...extra},
                classes: `${kind} ${classes}`.trim()});
  };
  const edge = (source, target, lbl = "", classes = "") => {
    const id = `${source}->${target}`;
    if (ids.has(id) || !ids.has(source) || !ids.has(target)) return;
    ids.add(id);
    edges.push({group: "edges", data: {id, source, target, label: lbl}, classes});
  };
  for (const net of cloud.networks) {
    node(`net:${net.id}`, "network", label(net), net,
         (net["router:external"] ? "external" : "") + (net.segments && net.segments.length > 1 ? " routed" : ""),
         {external: Boolean(net["router:external"])});
  }
  // Segments are drawn for routed (multi-segment) networks only.
  const perNetwork = {};
  for (const seg of cloud.segments) perNetwork[seg.network_id] = (perNetwork[seg.network_id] || 0) + 1;
  const multiSegment = new Set(cloud.segments.filter((s) => perNetwork[s.network_id] > 1).map((s) => s.id));
  for (const seg of cloud.segments) {
    if (multiSegment.has(seg.id)) {
      node(`seg:${seg.id}`, "segment", label(seg, `${seg.network_type}:${seg.physical_network || ""}`), seg);
    }
  }
  for (const sub of cloud.subnets) {
    node(`sub:${sub.id}`, "subnet", label(sub), sub, "", {display: `${label(sub)}\n${sub.cidr}`});
  }
  const netName = Object.fromEntries(cloud.networks.map((n) => [n.id, label(n)]));
  for (const rtr of cloud.routers) {
    // Its gateway under its name: the edge to the external network may be folded away.
    const gw = rtr.external_gateway_info;
    const via = gw && gw.network_id ? [`⇡ ${[netName[gw.network_id] || "external",
      ...(gw.external_fixed_ips || []).map((ip) => ip.ip_address)].join(" ")}`] : [];
    node(`rtr:${rtr.id}`, "router", label(rtr), rtr, "", {display: [label(rtr), ...via].join("\n")});
  }
  // Racks: the hosts each segment reaches.
  for (const [segId, hosts] of Object.entries(cloud.segmentHosts || {})) {
    for (const host of hosts) {
      node(`host:${host}`, "host", host, {name: host, kind: "compute host"});
      edge(`seg:${segId}`, `host:${host}`);
    }
  }
  // Network -> segment -> subnet (routed), else network -> subnet.
  for (const seg of cloud.segments) if (multiSegment.has(seg.id)) edge(`net:${seg.network_id}`, `seg:${seg.id}`);
  for (const sub of cloud.subnets) {
    if (sub.segment_id && multiSegment.has(sub.segment_id)) edge(`seg:${sub.segment_id}`, `sub:${sub.id}`);
    else edge(`net:${sub.network_id}`, `sub:${sub.id}`);
  }
  for (const rtr of cloud.routers) {
    const gw = rtr.external_gateway_info;
    if (gw && gw.network_id) edge(`net:${gw.network_id}`, `rtr:${rtr.id}`, "", "gateway");
  }
  const floating = floatingByServer(cloud);
  for (const port of cloud.ports) {
    const owner = port.device_owner || "";
    const ips = port.fixed_ips || [];
    if (owner === "network:router_interface" || owner === "network:router_interface_distributed") {
      // External network -> router -> the networks it connects (then their subnets).
      edge(`rtr:${port.device_id}`, `net:${port.network_id}`, ips.map((ip) => ip.ip_address).join(", "), "interface");
    } else if (owner.startsWith("compute:")) {
      if (ips.length) for (const ip of ips) attach(`sub:${ip.subnet_id}`, port.device_id, ip.ip_address);
      else attach(`net:${port.network_id}`, port.device_id, "(deferred)");
    }
  }
  const drawn = serverNodes(cloud.servers, attachments, floating, node, edge, ids);
  hostNodes(cloud, node, edge, ids, drawn > RUNS_SHOWN_UPTO);
  return nodes.concat(edges);
}

// Each server's floating IPs (those associated with one of its ports).
function floatingByServer(cloud) {
  const serverOf = Object.fromEntries(cloud.ports.filter((p) => (p.device_owner || "").startsWith("compute:"))
    .map((p) => [p.id, p.device_id]));
  const out = {};
  for (const fip of cloud.floatingips || []) {
    const server = fip.port_id && serverOf[fip.port_id];
    if (server) (out[server] = out[server] || []).push(fip.floating_ip_address);
  }
  return out;
}

function serverNodes(servers, attachments, floating, node, edge, ids) {
  const parentsOf = {};
  for (const [parent, serverId] of attachments) {
    if (ids.has(parent)) (parentsOf[serverId] = parentsOf[serverId] || []).push(parent);
  }
  const crowd = {};
  for (const srv of servers) for (const parent of parentsOf[srv.id] || ["unattached"]) crowd[parent] = (crowd[parent] || 0) + 1;
  const groups = {};
  const placed = {};
  const boxOf = (parent) => (parent.startsWith("sub:") ? {parent} : {});
  let drawn = 0;
  for (const srv of servers) {
    const parents = parentsOf[srv.id] || ["unattached"];
    const crowded = parents.find((p) => crowd[p] > GROUP_AT);
    if (crowded) {
      (groups[crowded] = groups[crowded] || []).push(srv);
      placed[srv.id] = `grp:${crowded}`;
    } else {
      const fips = floating[srv.id] || [];
      node(`srv:${srv.id}`, "server", label(srv), srv,
           `status-${srv.status}${fips.length ? " floating" : ""}`,
           {...boxOf(parents[0]), floating: fips, display: [label(srv), ...fips].join("\n")});
      placed[srv.id] = `srv:${srv.id}`;
      drawn += 1;
    }
  }
  for (const [parent, members] of Object.entries(groups)) {
    const byStatus = {};
    for (const srv of members) byStatus[srv.status] = (byStatus[srv.status] || 0) + 1;
    const worst = ["ERROR", "BUILD", "SHUTOFF"].find((s) => byStatus[s]) || "ACTIVE";
    const fips = members.reduce((n, srv) => n + (floating[srv.id] || []).length, 0);
    node(`grp:${parent}`, "servers", `${members.length} servers`,
         {count: members.length, statuses: byStatus, floating_ips: fips,
          servers: members.map((s) => `${s.name} (${s.status})`)},
         `server group status-${worst}${fips ? " floating" : ""}`,
         {...boxOf(parent), display: `${members.length} servers` + (fips ? `\n${fips} floating IPs` : "")});
  }
  for (const [parent, serverId] of attachments) {
    const target = placed[serverId];
    if (!target) continue;
    // The server's own box says it is on that subnet: no edge into it.
    const first = (parentsOf[serverId] || [])[0];
    if (parent === first && parent.startsWith("sub:")) continue;
    edge(parent, target);
  }
  return drawn;
}

// Where each server runs: its host (compute's OS-EXT-SRV-ATTR:host, or on the wire the
// host whose namespace its guest's taps hang off), and the physical networks each host
// reaches (its cables into their switches, read from the kernel).
function hostNodes(cloud, node, edge, ids, fold) {
  const wireHosts = (cloud.wire ? cloud.wire.hosts : []).filter((h) => h.role === "host");
  const onWire = {};
  for (const h of wireHosts) for (const id of h.servers) onWire[id] = h.name;
  const hostData = (name) => {
    const w = wireHosts.find((h) => h.name === name);
    return w ? {name, kind: "compute host", physical_networks: w.physical_networks.join(", ") || "none",
                tunnel_address: w.tunnel_address || "none", guests: w.servers.length, namespace: w.namespace}
             : {name, kind: "compute host"};
  };
  for (const h of wireHosts) {
    node(`host:${h.name}`, "host", h.name, hostData(h.name));
    for (const pn of h.physical_networks) {
      node(`pn:${pn}`, "physnet", pn, {name: pn, kind: "physical network"});
      edge(`host:${h.name}`, `pn:${pn}`, "reaches");
    }
  }
  for (const srv of cloud.servers) {
    const host = onWire[srv.id] || srv["OS-EXT-SRV-ATTR:host"];
    if (!host || !ids.has(`srv:${srv.id}`) || !(srv.status === "ACTIVE" || onWire[srv.id])) continue;
    node(`host:${host}`, "host", host, hostData(host));
    edge(`host:${host}`, `srv:${srv.id}`, "", fold ? "runs folded" : "runs");
  }
}

// ------------------------------------------------------------------ topology: layout
// Computed here, in one pass, before anything is drawn (every node has its place from the
// first frame: Cytoscape warned of "invalid endpoints" for edges into the routers while all
// nodes still sat at the origin). Layered and grouped: external networks on top; then one
// block per router (the router, the networks it connects, their segments and subnets, each
// subnet a box of its servers), then networks no router connects and servers on none;
// compute hosts and physical networks at the bottom. Blocks wrap into rows shaped like
// the view, so 300 nodes read as a page of small diagrams rather than one wide line.
const SIZE = {network: [44, 20], segment: [24, 22], subnet: [34, 14], router: [30, 30], host: [16, 26],
              physnet: [38, 16], server: [20, 20], servers: [34, 34]};
const FONT = 12;       // model px: 10.8 px on screen at the default zoom's floor
const TOP_FONT = 14;   // networks and routers: never under 11 px on screen while zooming out
const DEFAULT_ZOOM = {min: 0.9, max: 1.25};
const LINE = FONT * 1.25;
const GAP_X = 26;
const GAP_Y = 40;
const BOX_PAD = 12;

const lines = (text) => String(text || "").split("\n");
const textWidth = (text, font = FONT) => Math.max(...lines(text).map((l) => l.length)) * font * 0.6;

function plainBox(data) {
  const [w, h] = SIZE[data.kind] || [20, 20];
  const font = data.kind === "network" || data.kind === "router" ? TOP_FONT : FONT;
  return {w: Math.max(w, textWidth(data.display, font)) + GAP_X,
          h: h + 4 + lines(data.display).length * font * 1.25 + GAP_Y, nodeH: h};
}

function gridBox(data, members) {
  const cellW = Math.max(60, ...members.map((m) => Math.max(SIZE[m.kind][0], textWidth(m.display)))) + 18;
  const cellH = Math.max(...members.map((m) => SIZE[m.kind][1] + 4 + lines(m.display).length * LINE)) + 14;
  const cols = Math.max(1, Math.min(members.length, Math.round(Math.sqrt(members.length * 1.6 * cellH / cellW))));
  const rows = Math.ceil(members.length / cols);
  const labelH = lines(data.display).length * LINE + 4;
  return {w: Math.max(cols * cellW + 2 * BOX_PAD, textWidth(data.display)) + GAP_X,
          h: labelH + rows * cellH + 2 * BOX_PAD + GAP_Y, cellW, cellH, cols, labelH};
}

// Which node sits under which: the first claim wins, in this order.
const CLAIMS = [["network", "segment"], ["segment", "subnet"], ["network", "subnet"], ["router", "network"],
                ["network", "server"], ["network", "servers"]];

function positionsOf(elements, view) {
  const nodes = elements.filter((e) => e.group === "nodes").map((e) => e.data);
  const edges = elements.filter((e) => e.group === "edges").map((e) => e.data);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const members = {};
  for (const n of nodes) if (n.parent) (members[n.parent] = members[n.parent] || []).push(n);
  for (const list of Object.values(members)) list.sort((a, b) => byName(a.label, b.label));
  const claimed = new Set(nodes.filter((n) => n.parent).map((n) => n.id));
  const kids = {};
  for (const [above, below] of CLAIMS) {
    for (const e of edges) {
      const s = byId.get(e.source);
      const t = byId.get(e.target);
      if (s.kind !== above || t.kind !== below || claimed.has(t.id) || t.external) continue;
      claimed.add(t.id);
      (kids[s.id] = kids[s.id] || []).push(t.id);
    }
  }
  const sizes = {};
  const measure = (id) => {
    if (sizes[id]) return sizes[id];
    const data = byId.get(id);
    const own = members[id] ? gridBox(data, members[id]) : plainBox(data);
    const row = (kids[id] || []).map(measure);
    const rowW = row.reduce((sum, m) => sum + m.w, 0);
    const rowH = Math.max(0, ...row.map((m) => m.h));
    sizes[id] = {own, rowW, w: Math.max(own.w, rowW), h: own.h + rowH};
    return sizes[id];
  };
  const pos = {};
  const place = (id, x, y) => {
    const m = measure(id);
    const cx = x + m.w / 2;
    if (members[id]) {
      const g = m.own;
      const left = cx - (g.cols * g.cellW) / 2;
      members[id].forEach((child, i) => {
        pos[child.id] = {x: left + (i % g.cols + 0.5) * g.cellW,
                         y: y + g.labelH + BOX_PAD + Math.floor(i / g.cols) * g.cellH + SIZE[child.kind][1] / 2};
      });
    } else {
      pos[id] = {x: cx, y: y + m.own.nodeH / 2};
    }
    let kx = x + (m.w - m.rowW) / 2;
    for (const k of kids[id] || []) { place(k, kx, y + m.own.h); kx += measure(k).w; }
  };
  const roots = nodes.filter((n) => !claimed.has(n.id));
  const top = roots.filter((n) => n.external).map((n) => n.id);
  const bottom = roots.filter((n) => n.kind === "host").map((n) => n.id);
  const lowest = roots.filter((n) => n.kind === "physnet").map((n) => n.id);
  const tiers = new Set([...top, ...bottom, ...lowest]);
  const rank = {router: 0, network: 1, segment: 2, subnet: 3, servers: 4, server: 5};
  const blocks = roots.filter((n) => !tiers.has(n.id))
    .sort((a, b) => (rank[a.kind] ?? 6) - (rank[b.kind] ?? 6) || byName(a.label, b.label)).map((n) => n.id);
  // Blocks into rows: of the row widths a break allows, the one the view shows largest.
  const sum = (ids, f) => ids.reduce((acc, id) => acc + f(measure(id)), 0);
  const tallest = (ids) => Math.max(0, ...ids.map((id) => measure(id).h));
  const bands = [top, bottom, lowest];
  const floor = Math.max(0, ...blocks.map((id) => measure(id).w), ...bands.map((ids) => sum(ids, (m) => m.w)));
  const shelve = (width) => {
    const out = [];
    let row = null;
    for (const id of blocks) {
      if (!row || (row.w + measure(id).w > width && row.ids.length)) { row = {ids: [], w: 0}; out.push(row); }
      row.ids.push(id); row.w += measure(id).w;
    }
    return out;
  };
  const heightOf = (shelves) => shelves.reduce((h, r) => h + tallest(r.ids), 0) + bands.reduce((h, ids) => h + tallest(ids), 0);
  let width = floor;
  let rows = shelve(width);
  let best = -1;
  for (let i = 0, w = 0; i <= blocks.length; i += 1) {
    const candidate = Math.max(floor, w);
    const shelves = shelve(candidate);
    const wide = Math.max(candidate, ...shelves.map((r) => r.w));
    const scale = Math.min(view.w / wide, view.h / heightOf(shelves));
    if (scale > best + 1e-9) { best = scale; width = wide; rows = shelves; }
    if (i < blocks.length) w += measure(blocks[i]).w;
  }
  let y = 0;
  const band = (ids) => {
    if (!ids.length) return;
    const w = ids.reduce((s, id) => s + measure(id).w, 0);
    let x = (width - w) / 2;
    for (const id of ids) { place(id, x, y); x += measure(id).w; }
    y += Math.max(...ids.map((id) => measure(id).h));
  };
  band(top);
  for (const r of rows) band(r.ids);
  band(bottom);
  band(lowest);
  return {pos, rows: rows.length, extent: {x1: 0, y1: 0, w: width, h: Math.max(0, y - GAP_Y)}};
}

const byName = (a, b) => String(a).localeCompare(String(b), undefined, {numeric: true});

const STYLE = [
  {selector: "node", style: {"label": "data(display)", "font-size": FONT, "min-zoomed-font-size": 10,
    "text-wrap": "wrap", "text-valign": "bottom", "text-margin-y": 3, "color": "#1d2430",
    "width": SIZE.server[0], "height": SIZE.server[1], "background-color": "#8a94a6"}},
  {selector: "node.network", style: {"shape": "round-rectangle", "width": SIZE.network[0], "height": SIZE.network[1],
    "background-color": "#4da3ff", "font-size": TOP_FONT, "font-weight": "bold"}},
  {selector: "node.external", style: {"background-color": "#1d2430"}},
  {selector: "node.routed", style: {"background-color": "#7c4dff"}},
  {selector: "node.segment", style: {"shape": "hexagon", "width": SIZE.segment[0], "height": SIZE.segment[1],
    "background-color": "#b388ff"}},
  {selector: "node.subnet", style: {"shape": "round-rectangle", "width": SIZE.subnet[0], "height": SIZE.subnet[1],
    "background-color": "#9ecbff"}},
  // A subnet with servers is the box they are drawn in, its name and CIDR above it.
  {selector: "node.subnet:parent", style: {"text-valign": "top", "text-margin-y": -3, "padding": BOX_PAD,
    "background-color": "#eef5ff", "background-opacity": 1, "border-width": 1, "border-color": "#9ecbff",
    "shape": "round-rectangle"}},
  {selector: "node.router", style: {"shape": "diamond", "width": SIZE.router[0], "height": SIZE.router[1],
    "background-color": "#f5a524", "font-size": TOP_FONT, "font-weight": "bold"}},
  {selector: "node.host", style: {"shape": "rectangle", "width": SIZE.host[0], "height": SIZE.host[1],
    "background-color": "#5f6b7a"}},
  {selector: "node.physnet", style: {"shape": "barrel", "width": SIZE.physnet[0], "height": SIZE.physnet[1],
    "background-color": "#c9a227"}},
  {selector: "node.server", style: {"shape": "ellipse", "background-color": "#30a46c"}},
  {selector: "node.group", style: {"width": SIZE.servers[0], "height": SIZE.servers[1], "border-width": 3,
    "border-color": "#fff", "border-style": "double"}},
  {selector: "node.status-ERROR", style: {"background-color": "#e5484d"}},
  {selector: "node.status-BUILD", style: {"background-color": "#f5d90a"}},
  {selector: "node.status-SHUTOFF", style: {"background-color": "#8a94a6"}},
  // A floating IP: a ring in the external networks' colour, the address under the name.
  {selector: "node.floating", style: {"border-width": 3, "border-color": "#1d2430", "border-style": "solid"}},
  {selector: "node:selected", style: {"border-width": 3, "border-color": "#e5484d"}},
  {selector: "edge", style: {"width": 1.2, "line-color": "#c3cad6", "curve-style": "bezier",
    "target-arrow-shape": "triangle", "target-arrow-color": "#c3cad6", "arrow-scale": .7,
    "label": "data(label)", "font-size": FONT, "min-zoomed-font-size": 10, "color": "#556",
    "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": .8,
    "text-background-padding": 1}},
  // A router's address on a network: by the network's end, clear of the router's label.
  {selector: "edge.interface", style: {"label": "", "target-label": "data(label)", "target-text-offset": 30,
    "target-text-rotation": "none"}},
  {selector: "edge.gateway", style: {"width": 2, "line-color": "#1d2430", "target-arrow-color": "#1d2430"}},
  {selector: "edge.runs", style: {"line-style": "dashed", "line-color": "#dde1e8", "target-arrow-color": "#dde1e8"}},
  {selector: "edge.folded", style: {"display": "none"}},
  {selector: "edge.folded.lit", style: {"display": "element"}},
  {selector: "edge.runs.lit", style: {"line-color": "#5f6b7a", "target-arrow-color": "#5f6b7a"}},
];

function containerSize() {
  const el = $("#graph");
  return el.clientHeight > 0 && el.clientWidth > 0 ? {w: el.clientWidth, h: el.clientHeight} : {w: 1000, h: 750};
}

// Networks' and routers' labels grow as the view zooms out (up to 3x), so they stay
// readable (>= 11 px) while the others fall under 10 px and are not drawn (min-zoomed-font-size).
function keepTopLabelsLegible() {
  const font = Math.min(3 * TOP_FONT, Math.max(TOP_FONT, 11 / graph.zoom()));
  graph.batch(() => graph.nodes(".network, .router").style("font-size", font));
}

// The default view: the whole graph if it fits at a legible zoom, else its top centre at
// the zoom's floor (labels >= 10.8 px), the rest a drag or a "Fit" away.
function defaultView() {
  const el = $("#graph");
  const bb = layoutExtent;  // the layout's own measure: the same whatever the zoom now
  const pad = 30;
  const fitZoom = Math.min((el.clientWidth - 2 * pad) / Math.max(bb.w, 1), (el.clientHeight - 2 * pad) / Math.max(bb.h, 1));
  const zoom = Math.min(DEFAULT_ZOOM.max, Math.max(DEFAULT_ZOOM.min, fitZoom));
  // Centred across; from the top (the external networks) when it is taller than the view.
  const top = bb.h * zoom + 2 * pad <= el.clientHeight ? (el.clientHeight - bb.h * zoom) / 2 : pad;
  graph.viewport({zoom, pan: {x: el.clientWidth / 2 - (bb.x1 + bb.w / 2) * zoom, y: top - bb.y1 * zoom}});
}

function zoomBy(factor) {
  if (!graph) return;
  const el = $("#graph");
  graph.zoom({level: graph.zoom() * factor, renderedPosition: {x: el.clientWidth / 2, y: el.clientHeight / 2}});
}

// Positions into the elements; with more than one row of blocks the gateway edges would
// cross the rows between: they are folded (drawn for the selected router or network only),
// each router showing its gateway under its name.
function placeAll(elements) {
  const {pos, rows, extent} = positionsOf(elements, containerSize());
  layoutExtent = extent;
  for (const e of elements) {
    if (e.group === "nodes" && pos[e.data.id]) e.position = pos[e.data.id];
    if (e.group === "edges" && e.classes === "gateway" && rows > 1) e.classes = "gateway folded";
  }
  return pos;
}

async function refreshTopology() {
  const cloud = await loadCloud();
  const elements = elementsOf(cloud);
  const pos = placeAll(elements);
  if (!graph) {
    graph = cytoscape({container: $("#graph"), elements, style: STYLE, layout: {name: "preset", fit: false},
                       minZoom: .1, maxZoom: 4, autoungrabify: true, boxSelectionEnabled: false});
    defaultView();
    keepTopLabelsLegible();
    graph.on("zoom", keepTopLabelsLegible);
    graph.on("tap", "node", (evt) => showDetails(evt.target.data()));
    graph.on("tap", (evt) => { if (evt.target === graph) showDetails(null); });
    graph.on("select", "node", (evt) => evt.target.connectedEdges(".folded").addClass("lit"));
    graph.on("unselect", "node", (evt) => evt.target.connectedEdges(".folded").removeClass("lit"));
    // Read by the browser tests: when the first topology was drawn, after navigation start.
    window.stacklingTimings = {topologyReady: performance.now()};
  } else {
    const wanted = new Map(elements.map((e) => [e.data.id, e]));
    graph.batch(() => {
      graph.elements().forEach((el) => {
        const want = wanted.get(el.id());
        // A node moved to another subnet's box is drawn again (its parent is fixed).
        if (!want || (el.isNode() && (el.data("parent") || null) !== (want.data.parent || null))) graph.remove(el);
      });
      const added = elements.filter((e) => graph.getElementById(e.data.id).empty());
      if (added.length) graph.add(added);
      for (const e of elements) {
        const el = graph.getElementById(e.data.id);
        el.data(e.data);
        el.classes(e.classes);
        if (pos[e.data.id] && !el.isParent()) el.position(pos[e.data.id]);
      }
    });
    graph.nodes(":selected").connectedEdges(".folded").addClass("lit");
    keepTopLabelsLegible();
  }
  $("#graph").dataset.nodes = String(graph.nodes().length);
  setStatus(`${cloud.networks.length} networks, ${cloud.subnets.length} subnets, ${cloud.routers.length} routers, ` +
            `${cloud.servers.length} servers, ${(cloud.floatingips || []).filter((f) => f.port_id).length} floating IPs, ` +
            `${cloud.segments.length} segments — updated ${new Date().toLocaleTimeString()}`);
}

function showDetails(data) {
  const panel = $("#details");
  if (!data) { panel.innerHTML = '<p class="hint">Click a node for its details. Scroll to zoom, drag to pan.</p>'; return; }
  const obj = data.obj || {};
  const rows = [["kind", [data.kind]]];
  const keys = {
    network: ["id", "name", "status", "router:external", "shared", "mtu", "provider:network_type",
              "provider:physical_network", "provider:segmentation_id", "project_id"],
    subnet: ["id", "name", "cidr", "gateway_ip", "ip_version", "segment_id", "network_id", "project_id"],
    segment: ["id", "name", "network_type", "physical_network", "segmentation_id", "network_id"],
    router: ["id", "name", "status", "project_id"],
    server: ["id", "name", "status", "OS-EXT-SRV-ATTR:host", "OS-EXT-AZ:availability_zone", "tenant_id"],
    host: ["name", "physical_networks", "tunnel_address", "guests", "namespace"],
    physnet: ["name"],
    servers: ["count", "floating_ips"],
  }[data.kind] || Object.keys(obj);
  for (const k of keys) if (obj[k] !== undefined && obj[k] !== null) rows.push([k, [String(obj[k])]]);
  if (data.kind === "server") {
    for (const [net, addrs] of Object.entries(obj.addresses || {})) {
      rows.push([net, addrs.map((a) => `${a.addr} (${a["OS-EXT-IPS:type"] || "fixed"})`)]);
    }
    if (data.floating && data.floating.length) rows.push(["floating IPs", data.floating]);
    if (obj.fault) rows.push(["fault", [obj.fault.message], "prose"]);
  }
  if (data.kind === "servers") {
    rows.push(["statuses", Object.entries(obj.statuses).map(([s, n]) => `${s}: ${n}`)]);
    rows.push(["servers", obj.servers.slice(0, 200).concat(obj.servers.length > 200 ? ["…"] : [])]);
  }
  if (data.kind === "router" && obj.external_gateway_info) {
    rows.push(["gateway", (obj.external_gateway_info.external_fixed_ips || []).map((i) => i.ip_address)]);
  }
  panel.innerHTML = "";
  const h = document.createElement("h3");
  h.textContent = data.label;
  const dl = document.createElement("dl");
  // Each value (an id, an address, a name) is one unbroken token: it wraps only between
  // tokens, and one too long for the panel ends in an ellipsis with the whole in its title.
  for (const [k, values, prose] of rows) {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd");
    if (prose) dd.classList.add("prose");
    values.forEach((v, i) => {
      const span = document.createElement("span");
      span.className = prose ? "" : "token";
      span.textContent = v;
      span.title = v;
      dd.append(span);
      if (i < values.length - 1) dd.append(", ");
    });
    dl.append(dt, dd);
  }
  panel.append(h, dl);
}

// ------------------------------------------------------------------ capacity
function bar(used, total) {
  const pct = total > 0 ? Math.min(100, (100 * used) / total) : 0;
  return `<div class="bar${pct >= 90 ? " hot" : ""}" title="${pct.toFixed(1)}%"><span style="width:${pct}%"></span></div>`;
}

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function fillTable(sel, rows) {
  $(`${sel} tbody`).innerHTML = rows.length ? rows.join("") : '<tr><td colspan="8" class="hint">none visible</td></tr>';
}

// `available` is a list of ids or of "a-b" intervals (compact for 16M-id ranges).
function countIds(list) {
  let n = 0;
  for (const item of list || []) {
    if (typeof item === "number") n += 1;
    else { const [a, b] = String(item).split("-").map(Number); n += (b === undefined ? 1 : b - a + 1); }
  }
  return n;
}

function prefixSize(cidr) {
  const [addr, len] = cidr.split("/");
  const bits = addr.includes(":") ? 128 : 32;
  return 1n << BigInt(bits - Number(len));
}

async function refreshCapacity() {
  const [segments, networks, hypervisors, ranges, pools, subnets] = await Promise.all([
    optional(api("network", "/v2.0/segments"), {segments: []}),
    api("network", "/v2.0/networks"),
    optional(api("compute", "/os-hypervisors/detail"), {hypervisors: []}),
    optional(api("network", "/v2.0/network_segment_ranges"), {network_segment_ranges: []}),
    api("network", "/v2.0/subnetpools?is_default=true"),
    api("network", "/v2.0/subnets?fields=id&fields=cidr&fields=subnetpool_id"),
  ]);
  const netName = Object.fromEntries(networks.networks.map((n) => [n.id, n.name || n.id]));
  const withProvider = await segmentProviders(segments.segments);
  const segRows = await Promise.all(segments.segments.map(async (seg) => {
    if (!withProvider.has(seg.id)) return null;
    const inv = await optional(api("placement", `/resource_providers/${seg.id}/inventories`), {inventories: {}});
    const use = await optional(api("placement", `/resource_providers/${seg.id}/usages`), {usages: {}});
    const ipv4 = inv.inventories.IPV4_ADDRESS;
    if (!ipv4) return null;
    const used = use.usages.IPV4_ADDRESS || 0;
    const free = ipv4.total - ipv4.reserved - used;
    return `<tr data-segment="${esc(seg.id)}"><td>${esc(seg.name || seg.id)}</td><td>${esc(netName[seg.network_id])}</td>` +
      `<td>${esc(seg.physical_network || "")}</td><td class="num">${ipv4.total}</td><td class="num">${ipv4.reserved}</td>` +
      `<td class="num">${used}</td><td class="num">${free}</td><td>${bar(used + ipv4.reserved, ipv4.total)}</td></tr>`;
  }));
  fillTable("#cap-segments", segRows.filter(Boolean));
  fillTable("#cap-hosts", hypervisors.hypervisors.map((h) =>
    `<tr><td>${esc(h.hypervisor_hostname)}</td>` +
    `<td>${h.vcpus_used} / ${h.vcpus} ${bar(h.vcpus_used, h.vcpus)}</td>` +
    `<td>${h.memory_mb_used} / ${h.memory_mb} ${bar(h.memory_mb_used, h.memory_mb)}</td>` +
    `<td>${h.local_gb_used} / ${h.local_gb} ${bar(h.local_gb_used, h.local_gb)}</td></tr>`));
  fillTable("#cap-ranges", ranges.network_segment_ranges.map((r) => {
    const used = Object.keys(r.used || {}).length;
    const avail = countIds(r.available);
    return `<tr><td>${esc(r.name)}</td><td>${esc(r.network_type)}</td><td>${esc(r.physical_network || "")}</td>` +
      `<td>${r.shared ? "shared" : esc(r.project_id)}</td><td>${r.minimum}–${r.maximum}</td>` +
      `<td class="num">${used}</td><td class="num">${avail}</td><td>${bar(used, used + avail)}</td></tr>`;
  }));
  fillTable("#cap-pools", pools.subnetpools.map((p) => {
    const total = p.prefixes.reduce((acc, c) => acc + prefixSize(c), 0n);
    const allocated = subnets.subnets.filter((s) => s.subnetpool_id === p.id).reduce((acc, s) => acc + prefixSize(s.cidr), 0n);
    const free = total - allocated;
    const pct = total > 0n ? Number((allocated * 10000n) / total) / 100 : 0;
    return `<tr><td>${esc(p.name)}</td><td>IPv${p.ip_version}</td><td>${esc(p.prefixes.join(", "))}</td>` +
      `<td class="num">${total}</td><td class="num">${allocated}</td><td class="num">${free}</td>` +
      `<td>${bar(pct, 100)}</td></tr>`;
  }));
  $("#cap-note").textContent = session.isAdmin ? "" : "Segments, hosts and ranges are visible to administrators only.";
}

// ------------------------------------------------------------------ why it failed
async function refreshFailures() {
  const allProjects = session.isAdmin ? "&all_tenants=1" : "";
  const servers = await api("compute", `/servers/detail?status=ERROR${allProjects}`);
  const cards = servers.servers.map((srv) => {
    const fault = srv.fault || {};
    return `<div class="card server-failure" data-server="${esc(srv.id)}"><h3>${esc(srv.name)} <small>${esc(srv.id)}</small></h3>` +
      `<p><strong>${esc(fault.message || "no fault recorded")}</strong> ${fault.code ? `(code ${fault.code})` : ""}</p>` +
      (fault.details ? `<pre class="decision">${esc(fault.details)}</pre>` : "") + `</div>`;
  });
  $("#fail-servers").innerHTML = cards.length ? cards.join("") : '<p class="hint">No server is in ERROR.</p>';
  if (session.endpoints.orchestration === undefined) {
    $("#fail-stacks").innerHTML = '<p class="hint">Orchestration is not in this cloud\'s catalog.</p>';
    return;
  }
  // An admin lists every project's stacks (Heat's global_tenant, policy stacks:global_index).
  // Heat answers another project's stack's resources to an admin; stackling's orchestration
  // only to its project, so for those the card shows the stack's reason (which names the
  // failed resource and its error) and its project.
  const stacks = await optional(api("orchestration", session.isAdmin ? "/stacks?global_tenant=True" : "/stacks"),
                                {stacks: []});
  const failed = stacks.stacks.filter((s) => /FAILED$/.test(s.stack_status));
  const projects = session.isAdmin && failed.some((s) => s.project && s.project !== session.projectId)
    ? await projectNames() : {};
  const stackCards = await Promise.all(failed.map(async (st) => {
    const own = !st.project || st.project === session.projectId;
    const res = own ? await optional(api("orchestration", `/stacks/${st.stack_name}/${st.id}/resources`), {resources: []})
                    : {resources: []};
    const bad = res.resources.filter((r) => /FAILED$/.test(r.resource_status));
    const where = own ? "" : ` <small>project ${esc(projects[st.project] || st.project)}</small>`;
    return `<div class="card stack-failure" data-stack="${esc(st.id)}" data-project="${esc(st.project || session.projectId)}">` +
      `<h3>${esc(st.stack_name)} — ${esc(st.stack_status)}${where}</h3>` +
      `<p>${esc(st.stack_status_reason)}</p>` +
      bad.map((r) => `<p class="excluded">${esc(r.resource_name)} (${esc(r.resource_type)}): ${esc(r.resource_status_reason)}</p>`).join("") +
      `</div>`;
  }));
  $("#fail-stacks").innerHTML = stackCards.length ? stackCards.join("") : '<p class="hint">No stack has failed.</p>';
}

// Project names by id (an admin's Keystone listing), to say whose a stack is.
async function projectNames() {
  if (session.endpoints.identity === undefined) return {};
  const base = session.endpoints.identity.endsWith("/v3") ? "" : "/v3";
  const body = await optional(api("identity", `${base}/projects`), {projects: []});
  return Object.fromEntries(body.projects.map((p) => [p.id, p.name]));
}

// ------------------------------------------------------------------ audit
async function runAudit() {
  const out = $("#audit-result");
  out.textContent = "Running…";
  try {
    const resp = await fetch("/audit", {headers: {"X-Auth-Token": session.token, "Accept": "application/json"}});
    const body = await resp.json().catch(() => null);
    if (!resp.ok) { out.textContent = errorMessage(body, `The audit answered ${resp.status}.`); return; }
    const findings = body.findings || [];
    out.innerHTML = findings.length
      ? `<p class="excluded">${findings.length} difference(s):</p><ul>` +
        findings.map((f) => `<li><strong>${esc(f.check || "")}</strong> ${esc(f.message || JSON.stringify(f))}</li>`).join("") + "</ul>"
      : '<p class="chosen">No difference: placement, segments, port bindings and (with the netns dataplane) the wire agree.</p>';
  } catch (err) { out.textContent = `The audit failed: ${err.message}`; }
}

// ------------------------------------------------------------------ path
// The hops a packet takes between two servers, read from the live kernel by the
// dataplane's admin API, and where and why it is cut.
async function refreshPathChoices() {
  const allProjects = session.isAdmin ? "?all_tenants=1" : "";
  const servers = (await api("compute", `/servers/detail${allProjects}`)).servers
    .slice().sort((a, b) => (a.name || "").localeCompare(b.name || ""));
  for (const sel of ["#path-source", "#path-destination"]) {
    const el = $(sel);
    const keep = el.value;
    el.innerHTML = servers.map((s) => `<option value="${esc(s.id)}">${esc(s.name)} (${esc(s.status)})</option>`).join("");
    if (keep && servers.some((s) => s.id === keep)) el.value = keep;
  }
  if (!$("#path-destination").dataset.touched && servers.length > 1 && $("#path-destination").value === $("#path-source").value) {
    $("#path-destination").selectedIndex = 1;
  }
}

const HOP_KINDS = {guest: "server", host: "host", switch: "physical network switch", tor: "top-of-rack router",
                   router: "router", "network node": "network node", edge: "edge", dhcp: "DHCP", underlay: "underlay"};

async function tracePath() {
  const out = $("#path-result");
  const protocol = $("#path-protocol").value;
  const params = new URLSearchParams({source: $("#path-source").value, destination: $("#path-destination").value, protocol});
  if (protocol !== "icmp") params.set("port", $("#path-port").value);
  out.textContent = "Tracing…";
  try {
    const found = (await stackling(`/dataplane/v1/path?${params}`)).path;
    const serverNames = Object.fromEntries([...$("#path-source").options].map((o) => [o.value, o.textContent]));
    const hops = found.hops.map((h) => {
      const segs = h.segments ? ` — ${h.segments.map(esc).join(", ")}` : "";
      const name = h.kind === "guest" ? (serverNames[h.name] || h.name) : h.name;
      return `<li data-kind="${esc(h.kind)}" data-namespace="${esc(h.namespace)}"><strong>${esc(HOP_KINDS[h.kind] || h.kind)}</strong> ` +
        `${esc(name)}${segs} <small>${esc(h.namespace)}${h.bridges ? ", " + h.bridges.map(esc).join(", ") : ""}</small></li>`;
    }).join("");
    const verdict = found.reached
      ? `<p id="path-verdict" class="chosen" data-reached="true">Reached ${esc(found.destination || "")}.</p>`
      : `<p id="path-verdict" class="excluded" data-reached="false" data-reason="${esc(found.cut.reason)}">` +
        `Cut at ${esc(found.cut.at)}: ${esc(found.cut.reason)} — ${esc(found.cut.detail)}</p>`;
    out.innerHTML = `<ol id="path-hops">${hops}</ol>${verdict}`;
  } catch (err) {
    out.innerHTML = `<p id="path-verdict" class="excluded" data-error="${err.status || ""}">${esc(err.message)}</p>`;
  }
}

// ------------------------------------------------------------------ wiring
document.addEventListener("DOMContentLoaded", () => {
  $("#login").addEventListener("submit", async (evt) => {
    evt.preventDefault();
    $("#login-error").textContent = "";
    $("#login-submit").disabled = true;
    try {
      await signIn($("#login-user").value, $("#login-password").value, $("#login-project").value,
                   $("#login-domain").value);
      showLoggedIn();
    } catch (err) {
      $("#login-error").textContent = err.message;
    } finally {
      $("#login-submit").disabled = false;
    }
  });
  $("#logout").addEventListener("click", () => signOut(""));
  document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
  $("#zoom-in").addEventListener("click", () => zoomBy(1.25));
  $("#zoom-out").addEventListener("click", () => zoomBy(0.8));
  $("#zoom-fit").addEventListener("click", () => { if (graph) graph.fit(undefined, 30); });
  $("#zoom-reset").addEventListener("click", () => { if (graph) defaultView(); });
  $("#audit-run").addEventListener("click", runAudit);
  $("#path-trace").addEventListener("click", tracePath);
  $("#path-form").addEventListener("submit", (evt) => { evt.preventDefault(); tracePath(); });
  $("#path-destination").addEventListener("change", () => { $("#path-destination").dataset.touched = "1"; });
  $("#path-protocol").addEventListener("change", () => { $("#path-port").disabled = $("#path-protocol").value === "icmp"; });
  if (session) showLoggedIn(); else showLoggedOut("");
});
