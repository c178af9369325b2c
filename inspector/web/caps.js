// The Skills and Resources views: a Computer's skills with their files, and
// the resources of its MCP servers page by page (the 0.4 capabilities,
// spec/capabilities.md).
import { h, link, href, fill, errorBox } from "./dom.js";
import { computerPicker } from "./views.js";

// blobLink is a download of a blob through the inspector (/api/blob).
export function blobLink(computer, handle, name, text) {
  return h("a", { class: "blob-download", href: href("/api/blob", { computer, handle, name }), download: name || "blob" }, text);
}

// skillsView lists a Computer's skills; ?name= opens one of its files
// (?path=, SKILL.md by default).
export async function skillsView(el, params, { api, navigate }) {
  const computer = params.get("computer");
  const { nav } = await computerPicker(api, "skills", computer);
  if (!computer) {
    fill(el, h("h1", {}, "Skills"), h("p", {}, "Choose a Computer:"), nav);
    return {};
  }
  const name = params.get("name");
  const path = params.get("path") || "";
  const render = async () => {
    const data = await api(`/api/skills?computer=${encodeURIComponent(computer)}`);
    const list = h("table", { class: "skills" },
      h("caption", {}, `Skills of ${computer}`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Skill"), h("th", { scope: "col" }, "Description"), h("th", { scope: "col" }, "Path"))),
      h("tbody", {}, data.skills.map((s) => h("tr", { "data-skill": s.name },
        h("th", { scope: "row" }, link("/skills", { computer, name: s.name }, s.name)),
        h("td", {}, s.description || "-"), h("td", {}, s.path || "-")))));
    fill(el, h("h1", {}, `Skills of ${computer}`), nav,
      data.skills.length === 0 ? h("p", {}, "The Computer offers no skill.") : list);
    if (!name) return;
    const form = h("form", { class: "skill-path", method: "get", action: "/skills" },
      h("input", { type: "hidden", name: "computer", value: computer }),
      h("input", { type: "hidden", name: "name", value: name }),
      h("label", { for: "skill-path" }, "File of the skill (relative path; empty: SKILL.md)"),
      h("input", { id: "skill-path", name: "path", value: path }),
      h("button", { type: "submit" }, "Open"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      navigate(href("/skills", { computer, name, path: form.elements.path.value.trim() }));
    });
    const file = h("section", { class: "skill-file", "aria-live": "polite" });
    el.append(h("h2", {}, `${name}: ${path || "SKILL.md"}`), form, file);
    try {
      const f = await api(`/api/skill?${new URLSearchParams({ computer, name, path })}`);
      const info = h("p", { class: "file-info" }, `${f.rel_path}, ${f.mime_type || "?"}, ${f.total_size} bytes`);
      if (f.body !== undefined) fill(file, info, h("pre", { class: "skill-body" }, f.body));
      else fill(file, info, blobLink(computer, f.blob_handle, f.rel_path.split("/").pop(), `Download ${f.rel_path}`));
    } catch (e) {
      fill(file, errorBox(e));
    }
  };
  await render();
  return {
    refresh: (n) => {
      if (n.event === "notify:update_skills" && n.computer === computer) render().catch((e) => el.append(errorBox(e)));
    },
  };
}

// resourcesView lists the resources of one MCP server of a Computer
// (?server=, its bundle id), a page at a time (?offset=).
export async function resourcesView(el, params, { api }) {
  const computer = params.get("computer");
  const { nav } = await computerPicker(api, "resources", computer);
  if (!computer) {
    fill(el, h("h1", {}, "Resources"), h("p", {}, "Choose a Computer:"), nav);
    return {};
  }
  const servers = await api(`/api/servers?computer=${encodeURIComponent(computer)}`);
  const server = params.get("server");
  const offset = Number(params.get("offset") || 0);
  const limit = Number(params.get("limit") || 20);
  const serverNav = h("nav", { class: "servers", "aria-label": "MCP servers" },
    h("ul", {}, servers.servers.map((s) => h("li", {}, link("/resources", { computer, server: s }, s, s === server ? " (shown)" : "")))));
  fill(el, h("h1", {}, `Resources of ${computer}`), nav, h("p", {}, "MCP server:"), serverNav);
  if (!server) return {};
  const data = await api(`/api/resources?${new URLSearchParams({ computer, server, offset, limit })}`);
  const n = data.resources.length;
  el.append(
    h("table", { class: "resources" },
      h("caption", {}, `Resources of ${server}`),
      h("thead", {}, h("tr", {}, ["URI", "Name", "MIME type", "Size", "Description"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, data.resources.map((r) => h("tr", { "data-uri": r.uri },
        h("td", {}, r.uri), h("td", {}, r.name), h("td", {}, r.mime_type || "-"),
        h("td", {}, r.size === undefined ? "-" : String(r.size)), h("td", {}, r.description || "-"))))),
    h("p", { class: "page-info" }, n ? `Resources ${offset + 1}–${offset + n}${data.has_more ? ", more follow" : ""}.` : "No resources here."),
    h("nav", { class: "pager", "aria-label": "Pages" },
      offset > 0 ? link("/resources", { computer, server, offset: Math.max(0, offset - limit), limit }, "Previous page") : null,
      offset > 0 && data.has_more ? " · " : null,
      data.has_more ? link("/resources", { computer, server, offset: offset + limit, limit }, "Next page") : null));
  return {};
}
