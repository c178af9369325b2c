// The Office, Tools and Desktop views.
import { h, link, href, json, errorBox, setSanitized, fill } from "./dom.js";
import { paramsForm } from "./form.js";
import { blobLink } from "./caps.js";

// computerPicker lists the office's Computers as links to a view.
export async function computerPicker(api, view, chosen) {
  const office = await api("/api/office");
  const nav = h("nav", { class: "computers", "aria-label": "Computers" },
    office.computers.length === 0 ? h("p", {}, "No Computer is in the office.") :
      h("ul", {}, office.computers.map((c) => h("li", {}, link(`/${view}`, { computer: c }, c, c === chosen ? " (shown)" : "")))));
  return { nav, computers: office.computers };
}

// noFinderText explains a Computer without the Finder (spec/generations.md,
// Extensions a Computer offers).
export const noFinderText = "not offered: dpe:// documents are an smcp-go extension, which reference 0.4 Computers lack";

// officeView lists the Computers present, live (notify:enter_office,
// notify:leave_office).
export async function officeView(el, params, { api }) {
  const render = async () => {
    const office = await api("/api/office");
    fill(el, 
      h("h1", {}, `Office ${office.office}`),
      h("p", {}, `${office.computers.length} Computer${office.computers.length === 1 ? "" : "s"} present; this page is the Agent ${office.agent}.`),
      h("table", { class: "computers" },
        h("caption", {}, "Computers in the office"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Computer"), h("th", { scope: "col" }, "Views"), h("th", { scope: "col" }, "Finder"))),
        h("tbody", {}, office.computers.map((c) => h("tr", { "data-computer": c },
          h("th", { scope: "row" }, c),
          h("td", {}, link("/tools", { computer: c }, "Tools"), " · ", link("/desktop", { computer: c }, "Desktop"),
            office.finder[c] ? [" · ", link("/finder", { computer: c }, "Finder")] : null),
          h("td", { class: "finder-offered" }, office.finder[c] ? "offered" : noFinderText))))),
      h("h2", {}, "Sessions"),
      h("ul", {}, office.sessions.map((s) => h("li", {}, `${s.role}: ${s.name}`))));
  };
  await render();
  return {
    refresh: (n) => {
      if (n.event === "notify:enter_office" || n.event === "notify:leave_office") render().catch((e) => el.append(errorBox(e)));
    },
  };
}

// toolsView lists a Computer's tools, each with a form generated from its
// input schema, a Call and a Cancel button and the result.
export async function toolsView(el, params, { api, log }) {
  const computer = params.get("computer");
  const { nav, computers } = await computerPicker(api, "tools", computer);
  if (!computer) {
    fill(el, h("h1", {}, "Tools"), h("p", {}, "Choose a Computer:"), nav);
    if (computers.length === 1) el.append(h("p", {}, link("/tools", { computer: computers[0] }, `Show the tools of ${computers[0]}`)));
    return {};
  }
  let running = 0;
  const render = async () => {
    const data = await api(`/api/tools?computer=${encodeURIComponent(computer)}`);
    const only = params.get("tool");
    const tools = only ? data.tools.filter((t) => t.name === only) : data.tools;
    fill(el, 
      h("h1", {}, `Tools of ${computer}`), nav,
      only ? h("p", {}, link("/tools", { computer }, "Show every tool")) : null,
      h("p", {}, `${data.tools.length} tool${data.tools.length === 1 ? "" : "s"}.`),
      tools.map((t) => toolCard(computer, t)));
  };
  const toolCard = (computer, t) => {
    const meta = t.tool_meta || {};
    const headId = `tool-${t.name}`;
    const form = paramsForm(t.params_schema || {});
    const result = h("div", { class: "result", "aria-live": "polite" });
    const callBtn = h("button", { type: "submit" }, `Call ${t.name}`);
    const cancelBtn = h("button", { type: "button", disabled: true }, "Cancel the call");
    const timeoutId = `${headId}-timeout`;
    const timeout = h("input", { id: timeoutId, type: "number", min: "1", max: "600", step: "1", value: "60" });
    let callId = null;
    cancelBtn.addEventListener("click", async () => {
      if (!callId) return;
      try {
        await api("/api/cancel", { call_id: callId });
        log("call", `cancel sent for ${t.name} (${callId})`);
      } catch (e) {
        result.replaceChildren(errorBox(e));
      }
    });
    const f = h("form", { class: "call", "aria-labelledby": headId }, form.el,
      h("div", { class: "field" }, h("label", { for: timeoutId }, "Tool timeout (seconds)"), timeout),
      h("div", { class: "buttons" }, callBtn, cancelBtn), result);
    f.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let args;
      try {
        args = form.read();
      } catch (e) {
        result.replaceChildren(h("p", { class: "error", role: "alert" }, `Invalid arguments: ${e.message}`));
        return;
      }
      callId = crypto.randomUUID();
      callBtn.disabled = true;
      cancelBtn.disabled = false;
      running++;
      const bar = h("progress", { class: "tool-progress", "aria-label": `Progress of ${t.name}` });
      const note = h("span", { class: "progress-note" });
      result.replaceChildren(h("p", { class: "running" }, `Calling ${t.name}… `, bar, " ", note));
      const id = callId;
      const onProgress = (ev) => {
        const p = ev.detail;
        if (p.call_id !== id) return;
        if (p.total) {
          bar.max = p.total;
          bar.value = Math.min(p.progress, p.total);
        }
        note.textContent = `${p.progress}${p.total ? ` / ${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`;
      };
      window.addEventListener("smcp-progress", onProgress);
      try {
        const res = await api("/api/call", { call_id: callId, computer, tool: t.name, params: args, timeout: Number(timeout.value) || 0 });
        result.replaceChildren(showResult(computer, res));
      } catch (e) {
        result.replaceChildren(errorBox(e));
      } finally {
        window.removeEventListener("smcp-progress", onProgress);
        callId = null;
        running--;
        callBtn.disabled = false;
        cancelBtn.disabled = true;
        callBtn.focus();
      }
    });
    return h("section", { class: "tool", "data-tool": t.name },
      h("h2", { id: headId }, link("/tools", { computer, tool: t.name }, t.name)),
      h("p", {}, t.description || "(no description)"),
      h("ul", { class: "badges", "aria-label": "Tool meta" },
        h("li", { class: meta.auto_apply ? "auto" : "confirm" }, meta.auto_apply ? "auto-apply" : "needs confirmation"),
        meta.alias ? h("li", {}, `alias of ${meta.alias}`) : null,
        (meta.tags || []).map((tag) => h("li", { class: "tag" }, `tag: ${tag}`))),
      t.meta_error ? h("p", { class: "error" }, `Invalid tool meta: ${t.meta_error}`) : null,
      h("details", {}, h("summary", {}, "Input schema"), h("pre", {}, json(t.params_schema))),
      f);
  };
  await render();
  return {
    refresh: (n) => {
      if (n.event === "notify:update_tool_list" && n.computer === computer && running === 0) render().catch((e) => el.append(errorBox(e)));
    },
  };
}

// showResult shows a tool's result: its text, its structured content, and
// isError with the error's code.
function showResult(computer, res) {
  const r = res.result || {};
  const out = h("div", { class: r.isError ? "outcome is-error" : "outcome" });
  out.append(h("p", { class: "summary" }, r.isError ? "isError: " : "Result: ", r.isError ? h("strong", {}, `error ${res.tool_error.code} ${res.tool_error.name}`) : "ok", ` (${res.elapsed_ms} ms)`));
  if (res.tool_error) out.append(h("p", { role: "alert" }, res.tool_error.message));
  for (const b of r.content || []) {
    const handle = b._meta && b._meta.a2c_blob_handle;
    if (b.type === "text") out.append(h("pre", { class: "text" }, b.text));
    else if (b.type === "image" && b.data && /^image\/(png|jpeg|gif|webp)$/.test(b.mimeType || "")) {
      // Inline (or drained by the Agent from the Computer's spool): a
      // data: URL, which the page's Content-Security-Policy allows for
      // images only.
      out.append(h("figure", { class: "image" }, h("img", { src: `data:${b.mimeType};base64,${b.data}`, alt: `image result (${b.mimeType})` }),
        handle ? h("figcaption", {}, blobLink(computer, handle, "image", "Download the image")) : null));
    } else if (handle) {
      // A blob the Agent kept as a handle (too large to drain, or not an
      // image to show): a download.
      out.append(h("p", { class: "blob" }, `${b.type} ${b.mimeType || (b.resource && b.resource.mimeType) || ""} `,
        blobLink(computer, handle, b.resource && b.resource.uri ? b.resource.uri.split("/").pop() : "blob", "Download")));
    } else out.append(h("pre", { class: "block" }, json(b)));
  }
  if (r.structuredContent) out.append(h("h3", {}, "Structured content"), h("pre", { class: "structured" }, json(r.structuredContent)));
  return out;
}

// desktopView shows a Computer's desktop: its windows in the order the
// Computer organised them, each rendered.
export async function desktopView(el, params, { api }) {
  const computer = params.get("computer");
  const { nav } = await computerPicker(api, "desktop", computer);
  if (!computer) {
    fill(el, h("h1", {}, "Desktop"), h("p", {}, "Choose a Computer:"), nav);
    return {};
  }
  const render = async () => {
    const data = await api(`/api/desktop?computer=${encodeURIComponent(computer)}`);
    fill(el, h("h1", {}, `Desktop of ${computer}`), nav,
      data.windows.length === 0 ? h("p", {}, "The desktop has no window.") :
        h("ol", { class: "windows" }, data.windows.map((w) => h("li", {}, h("article", { class: "window" },
          h("h2", {}, w.uri), setSanitized(h("div", { class: "rendered" }), w.html))))));
  };
  await render();
  return {
    refresh: (n) => {
      if (n.event === "notify:update_desktop" && n.computer === computer) render().catch((e) => el.append(errorBox(e)));
    },
  };
}

export { href };
