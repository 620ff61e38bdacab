// GET /docs: Scalar's API reference (docs/development.md, "OpenAPI and docs"), rendered in the browser from
// GET /openapi.json. Its script is a Workers static asset (/scalar/standalone.js, copied from the
// installed @scalar/api-reference by src/scripts/assets.mjs), so the page loads nothing from
// anywhere else and works offline; its "Test Request" sends real requests to this same origin.

/** Scalar's options (data-configuration): no web fonts, no calls home, Basic auth preselected. */
const CONFIG = {
  withDefaultFonts: false,
  hideDownloadButton: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: "basicAuth" },
  metaData: { title: "edge-store: API reference" },
};

const attr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>edge-store: API reference</title></head>
<body><noscript>The API reference needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a>.</noscript>
<script id="api-reference" data-url="/openapi.json" data-configuration="${attr(JSON.stringify(CONFIG))}"></script>
<script src="/scalar/standalone.js"></script></body></html>`;

/**
 * Everything from this origin only. Scalar sets styles at run time (inline style attributes and
 * style elements), hence 'unsafe-inline' for styles; no inline or foreign script runs.
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";
