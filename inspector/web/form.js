// A form generated from a tool's input schema (JSON Schema): strings,
// numbers, integers, booleans, enums, arrays and objects get their own
// fields; anything else is edited as raw JSON.
import { h, json } from "./dom.js";

let seq = 0;
const uid = (base) => `${base}-${++seq}`;

function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "json";
  if (Array.isArray(schema.enum)) return "enum";
  let t = schema.type;
  if (Array.isArray(t)) {
    const real = t.filter((x) => x !== "null");
    t = real.length === 1 ? real[0] : undefined;
  }
  if (t === "object" && !schema.properties) return "json";
  return ["string", "number", "integer", "boolean", "array", "object"].includes(t) ? t : "json";
}

// field returns {el, read()} for one value; read() returns the value, or
// undefined for an empty optional field, and throws on invalid input.
export function field(schema, label, required) {
  const id = uid("f");
  const t = typeOf(schema);
  const desc = schema && schema.description;
  const hintId = desc ? uid("hint") : undefined;
  const labelEl = h("label", { for: id }, label, required ? h("span", { class: "req", title: "required" }, " *") : null, h("span", { class: "type" }, ` (${t === "json" ? "JSON" : t})`));
  const hint = desc ? h("small", { id: hintId, class: "hint" }, desc) : null;
  const attrs = { id, name: label, "aria-describedby": hintId, required: required || undefined };
  switch (t) {
    case "string": {
      const input = h("input", { ...attrs, type: "text", value: schema.default ?? "" });
      return { el: h("div", { class: "field" }, labelEl, input, hint), read: () => (input.value === "" && !required ? undefined : input.value) };
    }
    case "number":
    case "integer": {
      const input = h("input", { ...attrs, type: "number", step: t === "integer" ? "1" : "any", value: schema.default ?? "" });
      return {
        el: h("div", { class: "field" }, labelEl, input, hint),
        read: () => {
          if (input.value === "") {
            if (required) throw new Error(`${label} is required`);
            return undefined;
          }
          const n = Number(input.value);
          if (!Number.isFinite(n) || (t === "integer" && !Number.isInteger(n))) throw new Error(`${label} must be ${t === "integer" ? "an integer" : "a number"}`);
          return n;
        },
      };
    }
    case "boolean": {
      if (required) {
        const input = h("input", { ...attrs, type: "checkbox", checked: schema.default === true });
        return { el: h("div", { class: "field check" }, input, labelEl, hint), read: () => input.checked };
      }
      const sel = h("select", attrs, h("option", { value: "" }, "(not set)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
      if (typeof schema.default === "boolean") sel.value = String(schema.default);
      return { el: h("div", { class: "field" }, labelEl, sel, hint), read: () => (sel.value === "" ? undefined : sel.value === "true") };
    }
    case "enum": {
      const sel = h("select", attrs, required ? null : h("option", { value: "" }, "(not set)"),
        schema.enum.map((v, i) => h("option", { value: String(i) }, typeof v === "string" ? v : JSON.stringify(v))));
      if (schema.default !== undefined) {
        const i = schema.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(schema.default));
        if (i >= 0) sel.value = String(i);
      }
      return { el: h("div", { class: "field" }, labelEl, sel, hint), read: () => (sel.value === "" ? undefined : schema.enum[Number(sel.value)]) };
    }
    case "array": {
      const items = [];
      const list = h("ol", { class: "items" });
      const legend = h("legend", {}, label, required ? " *" : "", h("span", { class: "type" }, " (array)"));
      const add = () => {
        const f = field(schema.items || {}, `${label}[${items.length}]`, true);
        const entry = { f };
        const remove = h("button", { type: "button", class: "small", onclick: () => {
          items.splice(items.indexOf(entry), 1);
          li.remove();
        } }, "Remove");
        const li = h("li", {}, f.el, remove);
        items.push(entry);
        list.append(li);
        const first = li.querySelector("input,select,textarea");
        if (first) first.focus();
      };
      const el = h("fieldset", { class: "array", id }, legend, hint, list, h("button", { type: "button", class: "small", onclick: add }, `Add an item to ${label}`));
      return { el, read: () => (items.length === 0 && !required ? undefined : items.map((e) => e.f.read())) };
    }
    case "object": {
      const o = objectFields(schema);
      const el = h("fieldset", { class: "object", id }, h("legend", {}, label, required ? " *" : "", h("span", { class: "type" }, " (object)")), hint, o.el);
      return { el, read: () => o.read(required) };
    }
    default: {
      const area = h("textarea", { ...attrs, rows: 3, spellcheck: "false" }, schema && schema.default !== undefined ? json(schema.default) : "");
      return {
        el: h("div", { class: "field" }, labelEl, area, hint),
        read: () => {
          if (area.value.trim() === "") {
            if (required) throw new Error(`${label} is required`);
            return undefined;
          }
          try {
            return JSON.parse(area.value);
          } catch (e) {
            throw new Error(`${label} is not valid JSON: ${e.message}`);
          }
        },
      };
    }
  }
}

// objectFields lays out the properties of an object schema.
function objectFields(schema) {
  const req = new Set(schema.required || []);
  // Required fields first, each group in the schema's order.
  const entries = Object.entries(schema.properties || {});
  const ordered = [...entries.filter(([n]) => req.has(n)), ...entries.filter(([n]) => !req.has(n))];
  const fields = ordered.map(([name, s]) => [name, field(s, name, req.has(name))]);
  return {
    el: h("div", { class: "fields" }, fields.map(([, f]) => f.el)),
    read: (required) => {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.read();
        if (v !== undefined) out[name] = v;
      }
      return Object.keys(out).length === 0 && !required ? undefined : out;
    },
  };
}

// paramsForm is the form of a tool's params: the generated fields, and a
// raw JSON editor that replaces them when chosen.
export function paramsForm(schema) {
  const structured = typeOf(schema) === "object";
  const o = structured ? objectFields(schema) : null;
  const rawId = uid("raw");
  const raw = h("textarea", { id: rawId, name: "raw", rows: 6, spellcheck: "false" }, "{}");
  const toggle = h("input", { type: "checkbox", id: uid("useraw"), checked: !structured });
  const rawBox = h("div", { class: "field raw", hidden: structured }, h("label", { for: rawId }, "Arguments as JSON"), raw);
  toggle.addEventListener("change", () => {
    if (toggle.checked && o) {
      try { raw.value = json(o.read(true) || {}); } catch { /* keep what is there */ }
    }
    rawBox.hidden = !toggle.checked;
    if (o) o.el.hidden = toggle.checked;
  });
  const el = h("div", { class: "params" },
    o ? o.el : h("p", { class: "hint" }, "The input schema has no properties to lay out: give the arguments as JSON."),
    h("div", { class: "field check" }, toggle, h("label", { for: toggle.id }, "Edit the arguments as raw JSON")),
    rawBox);
  return {
    el,
    read: () => {
      if (!toggle.checked && o) return o.read(true);
      let v;
      try { v = JSON.parse(raw.value || "{}"); } catch (e) { throw new Error(`the arguments are not valid JSON: ${e.message}`); }
      if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("the arguments must be a JSON object");
      return v;
    },
  };
}
