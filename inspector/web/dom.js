// h builds an element. Text is always set as text: nothing a Computer, a
// tool or a document returns is parsed as HTML here, except the HTML the
// inspector rendered and sanitised on its side (setSanitized).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// setSanitized inserts HTML the inspector rendered from Markdown and
// sanitised (goldmark, then bluemonday). The Content-Security-Policy of the
// page forbids inline script in any case.
export function setSanitized(el, html) {
  el.innerHTML = html;
  return el;
}

// link is an in-page link: the address is the view, so it can be
// bookmarked; the router handles the click without reloading.
export function link(path, params, ...children) {
  return h("a", { href: href(path, params) }, ...children);
}

export function href(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export function json(v) {
  return JSON.stringify(v, null, 2);
}

// errorBox shows an error with its protocol code, name, message and details.
export function errorBox(err) {
  const e = err && err.code ? err : { code: 0, name: "Error", message: String(err && err.message || err) };
  return h("div", { class: "error", role: "alert" },
    h("p", {}, h("strong", {}, `Error ${e.code} ${e.name}`), ": ", e.message),
    e.details && Object.keys(e.details).length ? h("pre", { class: "details" }, json(e.details)) : null);
}

// fill replaces the children of el; arrays are flattened, and null,
// undefined and false are skipped.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}
