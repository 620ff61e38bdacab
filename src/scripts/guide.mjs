// The manual as pages the Worker serves (docs/development.md, "OpenAPI and docs"): README.md and
// docs/*.md rendered to HTML under public/guide/ (ignored by git) by marked, so each operation of
// the API reference can link its topic page on the same origin, with no Worker CPU (static assets).
// Headings get the ids GitHub gives them, so the same #anchors work on GitHub and here.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Marked } from "marked";

const root = path.resolve(import.meta.dirname, "../..");
export const GUIDE_DIR = path.join(root, "public", "guide");

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(/** @type {string} */ text) {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
/** The repository's web address (package.json `repository`), where files outside the manual are read. */
export const REPO_URL = String(pkg.repository?.url ?? pkg.repository)
  .replace(/^git\+/, "")
  .replace(/\.git$/, "");

/**
 * A link as it resolves under /guide/: README.md is index.html, a manual page (docs/*.md) is its
 * name.html, and any other file of the repo (bench/README.md, LICENSE, examples/) is read in the
 * repository, since /guide/ serves only the manual. `from` is the linking file's folder.
 * @param {string} href @param {string} from "" for README.md, "docs" for a page
 */
export function guideHref(href, from) {
  if (/^[a-z]+:|^#|^\//i.test(href)) return href;
  const [file, hash = ""] = href.split(/(?=#)/);
  const target = path.posix.normalize(path.posix.join(from, file));
  if (target === "README.md") return `index.html${hash}`;
  const page = /^docs\/([\w-]+)\.md$/.exec(target);
  if (page) return `${page[1]}.html${hash}`;
  if (/^docs\/[\w.-]+\.png$/.test(target)) return target.slice("docs/".length);
  return `${REPO_URL}/blob/main/${target}${hash}`;
}

/** @param {string} from the folder of the page being rendered, relative to the repo */
const markedFor = (from) =>
  new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        const inner = this.parser.parseInline(tokens);
        return `<h${depth} id="${slug(inner)}">${inner}</h${depth}>\n`;
      },
      link({ href, title, tokens }) {
        const t = title ? ` title="${title}"` : "";
        return `<a href="${guideHref(href, from)}"${t}>${this.parser.parseInline(tokens)}</a>`;
      },
      // The README shows the pages' images by their repo path; under /guide/ they sit beside the pages.
      image({ href, title, text }) {
        const t = title ? ` title="${title}"` : "";
        return `<img src="${guideHref(href, from)}" alt="${text}"${t}>`;
      },
    },
  });

const page = (/** @type {string} */ title, /** @type {string} */ body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · edge-store</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
pre{background:#f6f8fa;padding:.8rem;overflow:auto}code{font-size:90%}table{border-collapse:collapse}
td,th{border:1px solid #d0d7de;padding:.3rem .5rem;vertical-align:top}nav{margin-bottom:1rem}</style>
</head><body><nav><a href="index.html">edge-store</a> · <a href="/docs">API reference</a></nav>
${body}</body></html>
`;

/**
 * Writes `data` unless the file already holds it, as admin/build.mjs does: a running `wrangler
 * dev` reloads on every write under public/, even of the same bytes.
 * @param {string} file @param {string | Uint8Array} data
 */
function writeIfChanged(file, data) {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  try {
    if (readFileSync(file).equals(bytes)) return;
  } catch {
    // not written yet
  }
  writeFileSync(file, bytes);
}

/** Renders README.md and every docs/*.md page into public/guide/; returns the pages written. */
export function renderGuide() {
  mkdirSync(GUIDE_DIR, { recursive: true });
  const sources = [
    ["index", "README.md"],
    ...readdirSync(path.join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => [f.slice(0, -3), `docs/${f}`]),
  ];
  // The pages' images (docs/*.png) sit next to them, as on GitHub.
  for (const f of readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".png"))) {
    writeIfChanged(path.join(GUIDE_DIR, f), readFileSync(path.join(root, "docs", f)));
  }
  for (const [name, file] of sources) {
    const md = readFileSync(path.join(root, file), "utf8");
    const title = /^# (.+)$/m.exec(md)?.[1] ?? name;
    writeIfChanged(
      path.join(GUIDE_DIR, `${name}.html`),
      page(title, /** @type {string} */ (markedFor(path.posix.dirname(file).replace(/^\.$/, "")).parse(md))),
    );
  }
  return sources.map(([name]) => name);
}
