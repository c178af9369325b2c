// A DPE document server written from the user's Finder spec alone, with the
// official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// server/testdata/interop/package.json, installed by `go run mage.go setup`).
//
// It is the third-party server of the end-to-end tests: it answers what the
// spec allows rather than what smcp-go writes — numbers, booleans and null in
// table cells, headings of any level, nested list items, a Level-2 page that
// keeps its elements beside content_markdown, errors as McpError with data —
// and, unless told otherwise, it declares no resources.subscribe and never
// announces a change.
//
//   SMCP_INTEROP_NODE_MODULES=DIR node js_dpe_server.mjs --docs FILE [--host js.docs] [--announce]
//
// FILE holds {"documents": [{doc_ref, title, file_type, file_uri, summary?,
// keywords?, last_modified?, pages: [{title, elements: [...]}]}]} and is read
// again at every request, so a test changes the documents by rewriting it.
// With --announce the server declares subscribe, and sends
// notifications/resources/list_changed and notifications/resources/updated
// when the file changes.
//
// A page may carry "progress": {"steps": N, "hold": PATH}: a resources/read of
// it that has a _meta.progressToken first sends N notifications/progress
// (progress 1..N, total N) for that token, then answers once PATH exists (the
// test writes it when it has seen the last report); a read without a token is
// answered at once.

import { existsSync, readFileSync, watchFile } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

// The SDK lives in the interop peers' node_modules (SMCP_INTEROP_NODE_MODULES),
// not beside this file.
const require = createRequire(join(process.env.SMCP_INTEROP_NODE_MODULES, "..", "package.json"));
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  McpError,
} = require("@modelcontextprotocol/sdk/types.js");

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const docsFile = arg("--docs");
const host = arg("--host", "js.docs");
const announce = args.includes("--announce");

const CATEGORIES = new Set(["text", "heading", "list", "code", "table", "pivot_table", "chart", "diagram", "image",
  "formula", "link", "annotation", "header", "footer", "separator", "audio", "video", "form", "widget"]);

function load() {
  return JSON.parse(readFileSync(docsFile, "utf8")).documents;
}

const docURI = (ref) => `dpe://${host}/${encodeURIComponent(ref)}`;

function meta(d) {
  const m = {
    doc_ref: d.doc_ref, uri: docURI(d.doc_ref), file_uri: d.file_uri, file_type: d.file_type,
    title: d.title, page_count: d.pages.length,
  };
  if (d.keywords) m.keywords = d.keywords;
  if (d.summary) m.summary = d.summary;
  if (d.last_modified) m.last_modified = d.last_modified;
  return m;
}

// The 4204 rules of the spec (dpe:// URI 协议, 校验规则), in order.
function parse(raw) {
  const bad = (rule, why) => { throw new McpError(4204, "Invalid DPE URI", { uri: raw, rule, reason: why }); };
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?$/.exec(raw);
  if (!m || m[1].toLowerCase() !== "dpe") bad(1, "scheme");
  if (!m[2]) bad(2, "host");
  const segs = m[3] === "" || m[3] === "/" ? [] : m[3].slice(1).split("/").map(decodeURIComponent);
  const q = new URLSearchParams(m[4] ? m[4].slice(1) : "");
  let level = 0, docRef, page, element;
  if (segs.length >= 1) { level = 1; docRef = segs[0]; }
  if (segs.length === 3 && segs[1] === "pages" && /^\d+$/.test(segs[2])) { level = 2; page = Number(segs[2]); }
  else if (segs.length === 3 && segs[1] === "elements" && segs[2] !== "") { level = 3; element = segs[2]; }
  else if (segs.length > 1) bad(3, "sub-path");
  const format = q.get("format") ?? "json";
  if (!["json", "markdown", "text"].includes(format)) bad(4, "format");
  const depth = q.get("depth") ?? "metadata";
  if (!["metadata", "pages"].includes(depth)) bad(5, "depth");
  const offset = q.has("offset") ? Number(q.get("offset")) : 0;
  if (!Number.isInteger(offset) || offset < 0) bad(6, "offset");
  const limit = q.has("limit") ? Number(q.get("limit")) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) bad(7, "limit");
  let categories = null;
  if (q.has("categories")) {
    categories = q.get("categories").split(",");
    if (categories.some((c) => !CATEGORIES.has(c))) bad(8, "categories");
  }
  return { host: m[2].toLowerCase(), level, docRef, page, element, format, depth, offset, limit, categories };
}

// A renderer as a third-party author writes one from the spec's table: not
// smcp-go's (the Agent does not re-render what a server sends).
function renderElement(e) {
  const c = e.content ?? {};
  switch (e.category) {
    case "heading": return "#".repeat(Math.min(Math.max(c.level ?? 1, 1), 6)) + " " + c.text;
    case "text": return String(c.text);
    case "table": {
      const rows = c.rows ?? [];
      const head = c.headers ?? rows[0]?.map(() => "") ?? [];
      const line = (cells) => "| " + cells.map((x) => (x === null ? "" : String(x))).join(" | ") + " |";
      return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
    }
    case "list": {
      const items = (xs, depth) => xs.flatMap((x, i) => Array.isArray(x) ? items(x, depth + 1)
        : ["  ".repeat(depth) + (c.ordered ? `${i + 1}. ` : "- ") + (typeof x === "object" && x !== null ? x.text : String(x))]);
      return items(c.items ?? [], 0).join("\n");
    }
    case "chart": return `[图表: ${c.title ?? ""}] ${c.data_summary ?? ""}`;
    default: return `[${e.category}: ${e.summary ?? ""}]`;
  }
}

function read(uri) {
  const u = parse(uri);
  if (u.host !== host) throw new McpError(4201, "Document not found", { uri, host: u.host });
  const docs = load();
  const text = (v) => ({ contents: [{ uri, mimeType: "application/json", text: JSON.stringify(v) }] });
  if (u.level === 0) return text({ documents: docs.map(meta), total_count: docs.length });
  const d = docs.find((x) => x.doc_ref === u.docRef);
  if (!d) throw new McpError(4201, "Document not found", { doc_ref: u.docRef });
  if (u.level === 1) {
    const v = meta(d);
    if (u.depth === "pages") {
      v.pages = d.pages.slice(u.offset, u.offset + u.limit).map((p, i) => ({
        page_index: u.offset + i, title: p.title, element_count: p.elements.length,
        uri: `${docURI(d.doc_ref)}/pages/${u.offset + i}`, doc_ref: d.doc_ref,
      }));
      Object.assign(v, { page_offset: u.offset, page_limit: u.limit, page_total: d.pages.length });
    }
    return text(v);
  }
  if (u.level === 2) {
    const p = d.pages[u.page];
    if (!p) throw new McpError(4202, "Page out of range", { page_index: u.page, page_count: d.pages.length });
    const elements = p.elements.filter((e) => !u.categories || u.categories.includes(e.category));
    const v = { page_index: u.page, title: p.title, doc_ref: d.doc_ref, uri: `${docURI(d.doc_ref)}/pages/${u.page}`,
      elements, element_count: elements.length };
    // Like docs/dpe-server-python.md's example: the rendering is added, the
    // elements stay.
    if (u.format === "markdown") v.content_markdown = `# ${p.title}\n\n` + elements.map(renderElement).join("\n\n");
    return text(v);
  }
  for (const [i, p] of d.pages.entries()) {
    const e = p.elements.find((x) => x.element_id === u.element);
    if (e) return text({ ...e, doc_ref: d.doc_ref, page_index: i, uri: `${docURI(d.doc_ref)}/elements/${encodeURIComponent(e.element_id)}` });
  }
  throw new McpError(4203, "Element not found", { element_id: u.element });
}

const server = new Server({ name: "js-dpe-server", version: "1.0.0" },
  { capabilities: { resources: announce ? { subscribe: true, listChanged: true } : { listChanged: false } } });

server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: load().map((d) => ({ uri: docURI(d.doc_ref), name: d.title, description: d.summary, mimeType: "application/json" })),
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [
    { uriTemplate: `dpe://${host}/{doc_ref}/pages/{page_index}`, name: "文档页面", description: "按页码访问文档页面内容" },
    { uriTemplate: `dpe://${host}/{doc_ref}/elements/{element_id}`, name: "文档元素", description: "按元素 ID 访问文档元素详情" },
  ],
}));
// slowPage is the progress setting of the page uri names, if any.
function slowPage(uri) {
  try {
    const u = parse(uri);
    if (u.level !== 2 || u.host !== host) return null;
    return load().find((x) => x.doc_ref === u.docRef)?.pages[u.page]?.progress ?? null;
  } catch {
    return null; // read() reports the error
  }
}

// waitFor resolves once path exists, polling; it rejects when the request
// is cancelled (the Computer gave up).
function waitFor(path, signal) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (signal.aborted) return reject(new Error("cancelled"));
      if (existsSync(path)) return resolve();
      setTimeout(check, 20);
    };
    check();
  });
}

server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
  const token = req.params._meta?.progressToken;
  const slow = slowPage(req.params.uri);
  if (slow && token !== undefined) {
    for (let i = 1; i <= slow.steps; i++) {
      await extra.sendNotification({ method: "notifications/progress",
        params: { progressToken: token, progress: i, total: slow.steps, message: `part ${i} of ${slow.steps}` } });
    }
    await waitFor(slow.hold, extra.signal);
  }
  return read(req.params.uri);
});

if (announce) {
  const subscribed = new Set();
  server.setRequestHandler(SubscribeRequestSchema, async (req) => { subscribed.add(req.params.uri); return {}; });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => { subscribed.delete(req.params.uri); return {}; });
  let before = JSON.stringify(load());
  watchFile(docsFile, { interval: 50 }, async () => {
    const now = JSON.stringify(load());
    if (now === before) return;
    const was = new Map(JSON.parse(before).map((d) => [d.doc_ref, JSON.stringify(d)]));
    before = now;
    const docs = load();
    if (docs.length !== was.size || docs.some((d) => !was.has(d.doc_ref))) await server.sendResourceListChanged();
    for (const d of docs) {
      if (was.has(d.doc_ref) && was.get(d.doc_ref) !== JSON.stringify(d) && subscribed.has(docURI(d.doc_ref))) {
        await server.sendResourceUpdated({ uri: docURI(d.doc_ref) });
      }
    }
  });
}

await server.connect(new StdioServerTransport());
