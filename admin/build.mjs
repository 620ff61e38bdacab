#!/usr/bin/env node
// Builds the admin (docs/admin.md) into public/admin/ (ignored by git), which wrangler.toml
// serves as Workers static assets: the Worker never runs for these files. esbuild bundles
// admin/src/main.tsx (TypeScript and JSX for Preact; `npm run typecheck` checks it with
// admin/tsconfig.json) into one minified script; index.html and
// style.css are copied; public/_headers gives /admin/* its Content-Security-Policy. Run by
// src/scripts/assets.mjs, so `npm run dev`, `npm test`, `npm run deploy` and CI always have it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildSync } from "esbuild";

const here = import.meta.dirname;
const root = path.resolve(here, "..");
export const ADMIN_DIR = path.join(root, "public", "admin");
const HEADERS_FILE = path.join(root, "public", "_headers");

/**
 * The admin's page may load only its own files and call only its own origin; nothing may frame
 * it (docs/admin.md, "Security").
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Product images are https URLs on other hosts (a CDN); the editor previews them.
  "img-src 'self' https:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

// Cloudflare reads _headers at the root of the assets directory only; the rules apply to both
// /admin/ and every file under it.
const HEADERS = `/admin/*
  Content-Security-Policy: ${ADMIN_CSP}
  X-Content-Type-Options: nosniff
  Referrer-Policy: no-referrer
  X-Frame-Options: DENY
`;

/**
 * Writes `data` unless the file already holds it: a running `wrangler dev` reloads its Worker on
 * any write under public/, so a second `npm run dev` (the tests run two at once) rewriting the
 * same bytes would reload the first mid-request.
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

/** Builds the admin; answers the files written under public/admin/. */
export function buildAdmin() {
  mkdirSync(ADMIN_DIR, { recursive: true });
  const { outputFiles } = buildSync({
    entryPoints: [path.join(here, "src", "main.tsx")],
    bundle: true,
    tsconfig: path.join(here, "tsconfig.json"),
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    format: "esm",
    target: "es2020",
    legalComments: "none",
    outfile: path.join(ADMIN_DIR, "app.js"),
    logLevel: "warning",
    write: false,
  });
  for (const out of outputFiles) writeIfChanged(out.path, out.contents);
  for (const f of ["index.html", "style.css", "favicon.svg"])
    writeIfChanged(path.join(ADMIN_DIR, f), readFileSync(path.join(here, f)));
  writeIfChanged(HEADERS_FILE, HEADERS);
  return ["index.html", "style.css", "app.js"].map((f) => path.join(ADMIN_DIR, f));
}

/** The size of the first load: every file of the page, as they would be sent gzip-compressed. */
export async function firstLoadBytes() {
  const { gzipSync } = await import("node:zlib");
  return buildAdmin().reduce((n, f) => n + gzipSync(readFileSync(f)).length, 0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(`admin built into ${ADMIN_DIR}: first load ${await firstLoadBytes()} bytes gzip`);
}
