import { type OpenApiDocument, openApiDocument } from "./document";

// GET /docs: a self-contained HTML reference rendered from the OpenAPI document. Inline CSS, no
// script, no font or asset from anywhere (the route's Content-Security-Policy forbids them), so it
// works offline and behind any firewall.

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as untyped JSON; test/openapi.test.ts checks its shape
type Json = Record<string, any>;
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const esc = (s: unknown) =>
  String(s).replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string,
  );

const refName = (ref: string) => ref.replace("#/components/schemas/", "");
export const operationAnchor = (method: string, path: string) =>
  `op-${method}-${path.replace(/[^a-zA-Z0-9]+/g, "-").replace(/^-|-$/g, "") || "root"}`;

/** A short, linked description of a schema's type: `string | null`, `array of Product`. */
function typeLabel(s: Json | undefined): string {
  if (!s || Object.keys(s).length === 0) return "any";
  if (s.$ref) {
    const name = refName(s.$ref);
    return `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
  }
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) return alts.map(typeLabel).join(" | ");
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return types
    .map((t) => {
      if (t === "array") return `array of ${typeLabel(s.items)}`;
      if (t === "object" && s.additionalProperties && typeof s.additionalProperties === "object") {
        return `object of ${typeLabel(s.additionalProperties)}`;
      }
      return esc(t);
    })
    .join(" | ");
}

function constraints(s: Json): string {
  const c: string[] = [];
  const add = (k: string, label: string) => s[k] !== undefined && c.push(`${label} ${esc(s[k])}`);
  add("minimum", "min");
  add("exclusiveMinimum", "&gt;");
  if (s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER) add("maximum", "max");
  add("minLength", "min length");
  add("maxLength", "max length");
  add("minItems", "min items");
  add("maxItems", "max items");
  add("default", "default");
  if (s.pattern) c.push(`pattern <code>${esc(s.pattern)}</code>`);
  return c.join(", ");
}

/** The object (possibly nullable, or an array's element) whose properties deserve a nested table. */
function nestedObject(s: Json | undefined): Json | undefined {
  if (!s) return undefined;
  if (s.properties) return s;
  if (s.items) return nestedObject(s.items);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts)) {
    const objs = alts.filter((a: Json) => a.properties || a.items?.properties);
    if (objs.length === 1) return nestedObject(objs[0]);
  }
  return undefined;
}

function propsTable(s: Json, depth = 0): string {
  const props: [string, Json][] = Object.entries(s.properties ?? {});
  if (!props.length) return "";
  const required = new Set<string>(s.required ?? []);
  const rows = props.map(([name, p]) => {
    const nested = depth < 5 ? nestedObject(p) : undefined;
    const desc = [p.description && esc(p.description), constraints(p)].filter(Boolean).join("<br>");
    return `<tr><td><code>${esc(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ""}</td>
<td>${typeLabel(p)}</td><td>${desc}${nested ? propsTable(nested, depth + 1) : ""}</td></tr>`;
  });
  return `<table class="props"><thead><tr><th>field</th><th>type</th><th>notes</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function schemaBlock(s: Json | undefined): string {
  if (!s) return "";
  const direct = s.properties ? s : undefined;
  return `<p class="type">${typeLabel(s)}</p>${direct ? propsTable(direct) : ""}`;
}

const example = (v: unknown) =>
  v === undefined
    ? ""
    : `<details open><summary>Example</summary><pre>${esc(JSON.stringify(v, null, 2))}</pre></details>`;

function operation(path: string, method: string, op: Json): string {
  const params: Json[] = op.parameters ?? [];
  const body = op.requestBody?.content?.["application/json"];
  const open = Array.isArray(op.security) && op.security.length === 0;
  const responses = Object.entries(op.responses as Record<string, Json>)
    .map(([status, r]) => {
      const media = r.content?.["application/json"];
      return `<tr><td class="status s${esc(status[0])}">${esc(status)}</td><td>${esc(r.description)}</td>
<td>${media ? typeLabel(media.schema) : ""}${example(media?.example)}</td></tr>`;
    })
    .join("");
  return `<section class="op" id="${operationAnchor(method, path)}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code class="path">${esc(path)}</code>
<span class="summary">${esc(op.summary ?? "")}</span>${open ? ' <span class="open">no auth</span>' : ""}</h3>
${op.description ? `<p>${esc(op.description)}</p>` : ""}
${
  params.length
    ? `<h4>Parameters</h4><table class="props"><thead><tr><th>name</th><th>in</th><th>type</th><th>notes</th></tr></thead><tbody>${params
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ""}</td><td>${esc(p.in)}</td><td>${typeLabel(p.schema)}</td><td>${[p.description && esc(p.description), constraints(p.schema ?? {})].filter(Boolean).join("<br>")}</td></tr>`,
        )
        .join("")}</tbody></table>`
    : ""
}
${body ? `<h4>Request body</h4>${schemaBlock(body.schema)}${example(body.example)}` : ""}
<h4>Responses</h4><table class="responses"><thead><tr><th>status</th><th>meaning</th><th>body</th></tr></thead><tbody>${responses}</tbody></table>
</section>`;
}

const CSS = `
:root{--fg:#1d2330;--muted:#5b6478;--line:#d9dee8;--bg:#fff;--code:#f4f6fa;--accent:#2456c7}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{padding:24px 32px;border-bottom:1px solid var(--line);background:#f8f9fc}header h1{margin:0 0 4px;font-size:26px}
header p{margin:4px 0;color:var(--muted);max-width:900px}
.layout{display:flex;align-items:flex-start}nav{position:sticky;top:0;width:300px;flex:none;padding:16px 20px;border-right:1px solid var(--line);max-height:100vh;overflow:auto;font-size:14px}
nav ul{list-style:none;margin:0 0 16px;padding:0}nav li{margin:3px 0}nav a{color:var(--fg);text-decoration:none}nav a:hover{color:var(--accent)}
nav h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:12px 0 6px}
main{flex:1;min-width:0;padding:8px 32px 48px}h2.group{margin:32px 0 8px;font-size:20px;border-bottom:1px solid var(--line);padding-bottom:6px}
.op{margin:20px 0 28px;padding:16px 20px;border:1px solid var(--line);border-radius:8px}
.op h3{margin:0 0 8px;font-size:17px;display:flex;flex-wrap:wrap;gap:10px;align-items:center}
.method{display:inline-block;min-width:58px;text-align:center;padding:2px 8px;border-radius:4px;color:#fff;font-size:13px;font-weight:700}
.get{background:#1f7a4d}.post{background:#2456c7}.put{background:#a05a00}.delete{background:#b3261e}.patch{background:#6b3fa0}
.path{font-size:15px}.summary{font-weight:400;color:var(--muted)}.open{font-size:12px;font-weight:600;color:#1f7a4d;border:1px solid #1f7a4d;border-radius:10px;padding:0 8px}
h4{margin:16px 0 6px;font-size:14px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
table{border-collapse:collapse;width:100%;font-size:14px;margin:4px 0}th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid var(--line)}
th{font-weight:600;color:var(--muted);font-size:12px;text-transform:uppercase}td table{margin-top:6px;background:#fbfcfe}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}code{background:var(--code);padding:1px 4px;border-radius:3px}
pre{background:var(--code);padding:10px 12px;border-radius:6px;overflow:auto;max-height:420px;margin:6px 0}
summary{cursor:pointer;color:var(--muted);font-size:13px}.req{color:#b3261e;font-size:11px;font-weight:600}
.status{font-weight:700;font-family:ui-monospace,monospace}.s2{color:#1f7a4d}.s4{color:#a05a00}.s5{color:#b3261e}
.type{margin:4px 0}a{color:var(--accent)}.schema{margin:20px 0;padding:12px 20px;border:1px solid var(--line);border-radius:8px}.schema h3{margin:0 0 4px}
`;

export function renderDocs(doc: OpenApiDocument): string {
  const paths = doc.paths as Record<string, Json>;
  const ops: { path: string; method: string; op: Json }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) ops.push({ path, method, op: item[method] });
  }
  const tags = doc.tags.map((t) => t.name);
  const byTag = (tag: string) => ops.filter((o) => (o.op.tags?.[0] ?? "other") === tag);
  const schemas = doc.components.schemas as Record<string, Json>;
  const nav = tags
    .map(
      (tag) =>
        `<h2>${esc(tag)}</h2><ul>${byTag(tag)
          .map(
            (o) =>
              `<li><a href="#${operationAnchor(o.method, o.path)}"><span class="method ${o.method}">${o.method.toUpperCase()}</span> ${esc(o.path)}</a></li>`,
          )
          .join("")}</ul>`,
    )
    .join("");
  const schemaNav = Object.keys(schemas)
    .map((n) => `<li><a href="#schema-${esc(n)}">${esc(n)}</a></li>`)
    .join("");
  const groups = tags
    .map(
      (tag) =>
        `<h2 class="group">${esc(tag)}</h2>${esc(doc.tags.find((t) => t.name === tag)?.description ?? "")}${byTag(tag)
          .map((o) => operation(o.path, o.method, o.op))
          .join("")}`,
    )
    .join("");
  const schemaSections = Object.entries(schemas)
    .map(
      ([name, s]) =>
        `<section class="schema" id="schema-${esc(name)}"><h3>${esc(name)}</h3>${s.description ? `<p>${esc(s.description)}</p>` : ""}${schemaBlock(s)}</section>`,
    )
    .join("");
  const auth = doc.components.securitySchemes.basicAuth;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)}: API reference</title><style>${CSS}</style></head>
<body><header><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>${esc(doc.info.summary)}</p><p>${esc(doc.info.description)}</p>
<p><strong>Authentication:</strong> HTTP Basic on every <code>/v1/*</code> request. ${esc(auth.description)}
The machine-readable document is <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(doc.openapi)}).</p></header>
<div class="layout"><nav>${nav}<h2>schemas</h2><ul>${schemaNav}</ul></nav>
<main>${groups}<h2 class="group">Schemas</h2>${schemaSections}</main></div></body></html>`;
}

let cached: string | undefined;
export const docsHtml = () => {
  cached ??= renderDocs(openApiDocument());
  return cached;
};

/** Only inline styles; nothing is fetched, no script runs. */
export const DOCS_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";
