// smcp-inspector's page: a router over the views, the request helper that
// logs every request with its timing, and the live event stream.
import { h, errorBox } from "./dom.js";
import { officeView, toolsView, desktopView } from "./views.js";
import { finderView } from "./finder.js";
import { skillsView, resourcesView } from "./caps.js";

const main = document.getElementById("main");
const logList = document.getElementById("log");
const statusLine = document.getElementById("status");
const maxLog = 300;

let session = null;
// current is the shown view: {name, refresh(kind, data)}.
let current = null;

// log adds a line to the live log.
export function log(kind, text) {
  const time = new Date().toLocaleTimeString();
  logList.prepend(h("li", { class: `log-${kind}` }, h("time", {}, time), " ", h("span", { class: "kind" }, kind), " ", text));
  while (logList.children.length > maxLog) logList.lastElementChild.remove();
}

// ApiError is a failed request: the inspector's error body (code, name,
// message, details).
export class ApiError extends Error {
  constructor(body, status) {
    super(body.message);
    Object.assign(this, body);
    this.status = status;
  }
}

// api requests the inspector's API and logs the request with its timing.
export async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-SMCP-CSRF": session.csrf },
    body: JSON.stringify(body),
  };
  const started = performance.now();
  const method = init.method || "GET";
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    log("request", `${method} ${path} failed: ${e.message}`);
    throw new ApiError({ code: 503, name: "Unavailable", message: `the inspector cannot be reached: ${e.message}` }, 0);
  }
  const data = await res.json().catch(() => ({ error: { code: 500, name: "Internal", message: `invalid answer (${res.status})` } }));
  const ms = Math.round(performance.now() - started);
  log("request", `${method} ${path} → ${res.status}${data.error ? " error " + data.error.code : ""} (${ms} ms)`);
  if (data.error) throw new ApiError(data.error, res.status);
  return data;
}

const views = { office: officeView, tools: toolsView, desktop: desktopView, finder: finderView, skills: skillsView, resources: resourcesView };

// route shows the view the address names.
async function route() {
  const url = new URL(location.href);
  const name = url.pathname.replace(/^\//, "") || "office";
  const view = views[name] || officeView;
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.view === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const container = h("div", { class: `view view-${name}` });
  main.replaceChildren(container);
  document.title = `${name[0].toUpperCase()}${name.slice(1)} · smcp-inspector`;
  try {
    current = await view(container, url.searchParams, { api, log, navigate });
  } catch (e) {
    container.append(errorBox(e));
    current = null;
  }
}

// navigate shows another view and records it in the history.
export function navigate(to, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  route().then(() => main.focus({ preventScroll: false }));
}

// Same-origin links are handled here: no reload, and the address stays
// the view's (it can be bookmarked, opened in a new tab, shared).
document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a");
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || a.target || url.pathname.startsWith("/static/") || url.pathname.startsWith("/api/")) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  ev.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", () => route());

function describe(n) {
  const parts = [];
  if (n.computer) parts.push(`computer=${n.computer}`);
  if (n.agent) parts.push(`agent=${n.agent}`);
  if (n.req_id) parts.push(`req_id=${n.req_id}`);
  return `${n.event} ${parts.join(" ")}`;
}

// listen follows the office's notifications (Server-Sent Events) and hands
// them to the shown view.
function listen() {
  const es = new EventSource("/api/events");
  let interrupted = false;
  es.addEventListener("open", () => {
    log("stream", "event stream open");
    // Notifications may have been missed meanwhile: show the view afresh.
    if (interrupted) route();
    interrupted = false;
  });
  es.addEventListener("error", () => {
    interrupted = true;
    log("stream", "event stream interrupted; the browser reconnects");
  });
  es.addEventListener("notify", (ev) => {
    const { data } = JSON.parse(ev.data);
    log("notify", describe(data));
    if (current && current.refresh) current.refresh(data);
  });
  // A tool call's progress (notify:tool_progress of the page's own calls):
  // the tool card that made the call draws it.
  es.addEventListener("progress", (ev) => {
    const { data } = JSON.parse(ev.data);
    window.dispatchEvent(new CustomEvent("smcp-progress", { detail: data }));
  });
  es.addEventListener("connection", (ev) => {
    const { data } = JSON.parse(ev.data);
    showStatus(data.connected);
    log("connection", data.connected ? "reconnected and rejoined the office" : `could not rejoin: ${data.error && data.error.message}`);
  });
}

function showStatus(connected) {
  statusLine.textContent = `Agent ${session.agent} in office ${session.office} at ${session.server}: ${connected ? "connected" : "disconnected"}`;
  statusLine.className = connected ? "ok" : "bad";
}

// start reads the session (the same-origin token, the office) while the
// first view loads: the view needs no session to read, only to call.
async function start() {
  const shown = route();
  try {
    session = await api("/api/session");
  } catch (e) {
    statusLine.textContent = `The inspector cannot be reached: ${e.message}`;
    statusLine.className = "bad";
    return;
  }
  showStatus(session.connected);
  listen();
  await shown;
  document.body.dataset.ready = "1";
}

start();
