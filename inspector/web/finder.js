// The Finder view: the catalog (keyword search, file type and MCP server
// filters, paging done by the Computer), a document with its page index, a
// page rendered from its Markdown with the category filter, an element.
// Every dpe:// URI is a link to /finder?computer=C&uri=URI.
import { h, link, href, json, errorBox, setSanitized, fill } from "./dom.js";
import { noFinderText } from "./views.js";

const pageSize = 20;

function dpeLink(computer, uri, ...children) {
  return link("/finder", { computer, uri }, ...(children.length ? children : [uri]));
}

// withQuery returns uri with its query parameters replaced by params.
function withQuery(uri, params) {
  const [base, query = ""] = uri.split("?");
  const q = new URLSearchParams(query);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${base}?${s}` : base;
}

export async function finderView(el, params, ctx) {
  const computer = params.get("computer");
  if (!computer) {
    const office = await ctx.api("/api/office");
    fill(el, h("h1", {}, "Finder"), h("p", {}, "Choose a Computer:"),
      h("ul", {}, office.computers.map((c) => h("li", { "data-computer": c },
        office.finder[c] ? link("/finder", { computer: c }, c) : [c, h("span", { class: "no-finder" }, ` (${noFinderText})`)]))));
    return {};
  }
  const uri = params.get("uri");
  const render = () => (uri ? readView(el, computer, uri, ctx) : catalogView(el, computer, params, ctx));
  await render();
  return {
    refresh: (n) => {
      if (n.event === "notify:update_finder" && n.computer === computer) render();
    },
  };
}

// uriBox opens a dpe:// URI typed by hand, with suggestions: the URI so far
// completed by the Computer (/api/complete: client:complete, spec/finder.md,
// Completion) as the options of its datalist.
function uriBox(computer, navigate, api, value = "") {
  const list = h("datalist", { id: "finder-uri-options" });
  const input = h("input", { id: "finder-uri", name: "uri", type: "text", list: "finder-uri-options", value,
    placeholder: "dpe://host/doc_ref/pages/0", autocomplete: "off", spellcheck: "false", size: 50 });
  let asked = 0;
  const suggest = async () => {
    const seq = ++asked;
    const typed = input.value;
    if (!/^d(p(e(:(\/(\/.*)?)?)?)?)?$/i.test(typed)) {
      list.replaceChildren();
      return;
    }
    try {
      const res = await api(href("/api/complete", { computer, uri: typed }));
      if (seq !== asked) return; // a later keystroke asked again
      list.replaceChildren(...res.values.map((v) => h("option", { value: v })));
      list.dataset.for = typed;
    } catch (e) {
      if (seq === asked) list.replaceChildren();
    }
  };
  input.addEventListener("input", suggest);
  const form = h("form", { class: "finder-uri", action: "/finder", method: "get" },
    h("div", { class: "field" }, h("label", { for: "finder-uri" }, "Open a dpe:// URI"), input, list),
    h("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const uri = input.value.trim();
    if (uri) navigate(href("/finder", { computer, uri }));
  });
  return form;
}

// catalogView shows one page of the catalog.
async function catalogView(el, computer, params, { api, navigate }) {
  const q = params.get("q") || "";
  const type = params.get("type") || "";
  const server = params.get("server") || "";
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const query = { computer, q, type, server, offset, limit: pageSize };
  let data;
  try {
    data = await api(href("/api/finder", query));
  } catch (e) {
    fill(el, h("h1", {}, `Finder of ${computer}`), errorBox(e),
      e.code === 4106 ? h("p", { class: "no-finder" }, `${computer} does not offer the Finder (${noFinderText}).`) : null);
    return;
  }
  const serverSelect = h("select", { id: "finder-server", name: "server" }, h("option", { value: "" }, "(every server)"));
  if (server) serverSelect.append(h("option", { value: server, selected: true }, server));
  const form = h("form", { role: "search", class: "finder-search", action: "/finder", method: "get" },
    h("input", { type: "hidden", name: "computer", value: computer }),
    h("div", { class: "field" }, h("label", { for: "finder-q" }, "Keywords (any of them)"), h("input", { id: "finder-q", name: "q", type: "search", value: q })),
    h("div", { class: "field" }, h("label", { for: "finder-type" }, "File type"), h("input", { id: "finder-type", name: "type", value: type, size: 6 })),
    h("div", { class: "field" }, h("label", { for: "finder-server" }, "MCP server"), serverSelect),
    h("button", { type: "submit" }, "Search"));
  // The search stays in the page (no reload); its address is the view's.
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const fd = new FormData(form);
    navigate(href("/finder", { computer, q: fd.get("q").trim(), type: fd.get("type").trim(), server: fd.get("server") }));
  });
  const first = data.total_count === 0 ? 0 : offset + 1;
  const last = offset + data.documents.length;
  const pager = h("nav", { class: "pager", "aria-label": "Catalog pages" },
    offset > 0 ? link("/finder", { ...query, limit: undefined, offset: Math.max(0, offset - pageSize) || undefined }, "← Previous") : null,
    h("span", {}, ` Documents ${first}–${last} of ${data.total_count} `),
    last < data.total_count ? link("/finder", { ...query, limit: undefined, offset: last }, "Next →") : null);
  fill(el, 
    h("h1", {}, `Finder of ${computer}`),
    uriBox(computer, navigate, api),
    form,
    pager,
    h("table", { class: "catalog" },
      h("caption", {}, "Documents, newest first"),
      h("thead", {}, h("tr", {}, ["Title", "Type", "Pages", "Server", "Last modified", "URI"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, data.documents.map((d) => h("tr", { "data-uri": d.uri },
        h("th", { scope: "row" }, dpeLink(computer, d.uri, d.title || d.doc_ref)),
        h("td", {}, d.file_type), h("td", { class: "num" }, d.page_count), h("td", {}, d.server),
        h("td", {}, d.last_modified || ""), h("td", { class: "uri" }, d.uri))))));
  requestAnimationFrame(() => performance.mark("catalog-rendered"));
  // The server names come from the Computer's config; they fill the filter
  // after the first paint.
  api(href("/api/servers", { computer })).then((s) => {
    for (const name of s.servers) if (name !== server) serverSelect.append(h("option", { value: name }, name));
  }).catch(() => {});
}

function breadcrumbs(computer, docUri, here) {
  return h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" }, h("ol", {},
    h("li", {}, link("/finder", { computer }, "Catalog")),
    docUri ? h("li", {}, dpeLink(computer, docUri, "Document")) : null,
    here ? h("li", { "aria-current": "page" }, here) : null));
}

// readView reads one dpe:// URI: a document, a page or an element.
async function readView(el, computer, uri, { api }) {
  let data;
  try {
    data = await api(href("/api/read", { computer, uri }));
  } catch (e) {
    fill(el, h("h1", {}, uri), breadcrumbs(computer, null, null), errorBox(e));
    return;
  }
  if (data.level === "document") fill(el, documentView(computer, uri, data.document));
  else if (data.level === "page") fill(el, pageView(computer, data));
  else fill(el, elementView(computer, data));
}

function dl(pairs) {
  return h("dl", {}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function documentView(computer, uri, d) {
  const offset = d.page_offset || 0;
  const limit = d.page_limit || pageSize;
  const total = d.page_total ?? d.page_count;
  const pages = d.pages || [];
  return [
    h("h1", {}, d.title),
    breadcrumbs(computer, null, d.title),
    dl([["URI", d.uri], ["Type", d.file_type], ["Pages", d.page_count], ["File", d.file_uri], ["Last modified", d.last_modified], ["Keywords", (d.keywords || []).join(", ")]]),
    d.summary ? h("p", { class: "summary" }, d.summary) : null,
    h("h2", {}, "Page index"),
    h("nav", { class: "pager", "aria-label": "Page index pages" },
      offset > 0 ? dpeLink(computer, withQuery(uri, { offset: Math.max(0, offset - limit), limit }), "← Previous pages") : null,
      h("span", {}, ` Pages ${pages.length ? offset + 1 : 0}–${offset + pages.length} of ${total} `),
      offset + pages.length < total ? dpeLink(computer, withQuery(uri, { offset: offset + pages.length, limit }), "Next pages →") : null),
    h("table", { class: "pages" },
      h("thead", {}, h("tr", {}, ["Page", "Title", "Elements"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, pages.map((p) => h("tr", {},
        h("td", { class: "num" }, p.page_index),
        h("th", { scope: "row" }, dpeLink(computer, p.uri, p.title || `Page ${p.page_index}`)),
        h("td", { class: "num" }, p.element_count))))),
  ];
}

function pageView(computer, data) {
  const p = data.page;
  const chosen = new Set(data.categories || []);
  const boxes = data.all_categories.map((c) => {
    const id = `cat-${c}`;
    return h("span", { class: "cat" }, h("input", { type: "checkbox", id, value: c, checked: chosen.has(c) }), h("label", { for: id }, c));
  });
  const form = h("form", { class: "categories" },
    h("fieldset", {}, h("legend", {}, "Element categories (none checked: all)"), boxes),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const cats = [...form.querySelectorAll("input:checked")].map((i) => i.value).join(",");
    const target = withQuery(data.uri, { categories: cats });
    const a = h("a", { href: href("/finder", { computer, uri: target }) });
    document.body.append(a);
    a.click();
    a.remove();
  });
  const prev = p.page_index > 0 ? dpeLink(computer, withQuery(data.uri.replace(/\/pages\/\d+$/, `/pages/${p.page_index - 1}`), { categories: (data.categories || []).join(",") }), "← Previous page") : null;
  const next = dpeLink(computer, withQuery(data.uri.replace(/\/pages\/\d+$/, `/pages/${p.page_index + 1}`), { categories: (data.categories || []).join(",") }), "Next page →");
  return [
    h("h1", {}, p.title || `Page ${p.page_index}`),
    breadcrumbs(computer, data.document, `Page ${p.page_index}`),
    dl([["URI", p.uri], ["Elements", p.element_count]]),
    h("nav", { class: "pager", "aria-label": "Pages" }, prev, " ", next),
    form,
    h("h2", {}, "Rendered"),
    setSanitized(h("div", { class: "rendered page" }), data.html),
    h("h2", {}, "Elements"),
    (p.elements || []).length === 0 ? h("p", {}, "No element of the chosen categories.") :
      h("ul", { class: "elements" }, p.elements.map((e, i) => h("li", {},
        dpeLink(computer, data.document + "/elements/" + encodeURIComponent(e.element_id), `${e.category} ${e.element_id}`),
        e.summary ? ` — ${e.summary}` : "",
        problemOf(p.problems, `/elements/${i}`)))),
  ];
}

// problemOf shows the structural problem a tolerant reader reported on one
// part of an answer (spec/finder.md, Reading the levels), if any.
function problemOf(problems, path) {
  const pr = (problems || []).find((x) => x.path === path);
  return pr ? h("p", { class: "problem", role: "note" }, `Kept despite a problem: ${pr.message}`) : null;
}

function elementView(computer, data) {
  const e = data.element;
  return [
    h("h1", {}, `Element ${e.element_id}`),
    breadcrumbs(computer, data.document, `Element ${e.element_id}`),
    dl([["URI", data.uri], ["Category", e.category], ["Page", e.page_index ?? ""], ["Summary", e.summary]]),
    e.page_index !== undefined ? h("p", {}, dpeLink(computer, `${data.document}/pages/${e.page_index}`, `Open page ${e.page_index}`)) : null,
    problemOf(e.problems, ""),
    h("h2", {}, "Content"),
    setSanitized(h("div", { class: "rendered element" }), data.html),
    h("h2", {}, "Metadata"),
    h("pre", { class: "metadata" }, json(e.metadata || {})),
    h("details", {}, h("summary", {}, "Content as JSON"), h("pre", {}, json(e.content))),
  ];
}
