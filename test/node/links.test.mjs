// npm run test:links: every link of the repo's Markdown (README.md, CHANGELOG.md, docs/, bench/,
// examples/) resolves: the file exists and a #anchor names a heading of the target, as GitHub
// makes them. Then the manual as /guide/ serves it (src/scripts/guide.mjs renders it): every link
// of every page names a page and an id that /guide/ has, a path the Worker serves, or a file that
// exists in the repository. Offline: web addresses outside the repository are not fetched.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { GUIDE_DIR, REPO_URL, renderGuide, slug } from "../../src/scripts/guide.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const MARKDOWN = execFileSync("git", ["ls-files", "*.md"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => f && !f.startsWith("test/fixtures/"));

/** A Markdown text without its fenced blocks and inline code, where a [x](y) is not a link. */
const prose = (/** @type {string} */ md) => md.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");

/** The anchors GitHub gives a Markdown file's headings. */
function anchors(/** @type {string} */ file) {
  const md = readFileSync(path.join(root, file), "utf8");
  return new Set([...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1].replace(/[`*]/g, ""))));
}

/** The ids of a rendered page. */
const ids = (/** @type {string} */ html) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));

/** Paths the Worker itself serves, which a /guide/ page may link. */
const SERVED = ["/docs", "/openapi.json", "/admin", "/admin/", "/health"];

/**
 * Checks one link of a Markdown file of the repo; returns a problem or undefined.
 * @param {string} file @param {string} href
 */
function checkRepoLink(file, href) {
  if (/^[a-z]+:/i.test(href)) return; // a web address (or mailto:): not fetched
  const [target, hash] = href.split("#");
  const resolved = target ? path.posix.normalize(path.posix.join(path.posix.dirname(file), target)) : file;
  if (resolved.startsWith("..")) return `${href}: outside the repository`;
  if (!existsSync(path.join(root, resolved))) return `${href}: no file ${resolved}`;
  if (hash && resolved.endsWith(".md") && !anchors(resolved).has(hash))
    return `${href}: no heading #${hash} in ${resolved}`;
}

for (const file of MARKDOWN) {
  test(`${file}: every link resolves (files and #anchors)`, () => {
    const md = readFileSync(path.join(root, file), "utf8");
    const problems = [];
    for (const m of prose(md).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const problem = checkRepoLink(file, m[1]);
      if (problem) problems.push(problem);
    }
    assert.deepEqual(problems, [], `${file}:\n  ${problems.join("\n  ")}`);
  });
}

test("/guide/: every link of every page resolves", () => {
  const pages = renderGuide();
  assert.ok(pages.includes("index"));
  /** @type {string[]} */
  const problems = [];
  for (const name of pages) {
    const html = readFileSync(path.join(GUIDE_DIR, `${name}.html`), "utf8");
    for (const [, attr, href] of html.matchAll(/ (href|src)="([^"]+)"/g)) {
      const where = `${name}.html ${attr}="${href}"`;
      if (href.startsWith(`${REPO_URL}/blob/main/`)) {
        const problem = checkRepoLink("README.md", href.slice(`${REPO_URL}/blob/main/`.length));
        if (problem) problems.push(`${where}: ${problem}`);
        continue;
      }
      if (/^https?:\/\/127\.0\.0\.1:8787\//.test(href)) continue; // the local server's pages, as the reader types them
      if (/^[a-z]+:/i.test(href)) continue;
      if (href.startsWith("/")) {
        if (!SERVED.includes(href.split("#")[0]) && !href.startsWith("/guide/")) problems.push(`${where}: not served`);
        continue;
      }
      const [file, hash] = href.split("#");
      const target = path.join(GUIDE_DIR, file || `${name}.html`);
      if (!existsSync(target) || !statSync(target).isFile()) {
        problems.push(`${where}: no ${file} under /guide/`);
        continue;
      }
      if (hash && !ids(readFileSync(target, "utf8")).has(hash)) problems.push(`${where}: no id ${hash} in ${file}`);
    }
  }
  assert.deepEqual(problems, [], problems.join("\n"));
});

test("/guide/ renders every page of docs/ and the README", () => {
  const pages = renderGuide();
  const docs = readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md"));
  assert.deepEqual([...pages].sort(), ["index", ...docs.map((f) => f.slice(0, -3))].sort());
});
