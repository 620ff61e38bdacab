#!/usr/bin/env node
// The API reference page's static assets (docs/development.md, "OpenAPI and docs"): Scalar's browser bundle,
// copied from the installed @scalar/api-reference into public/ (ignored by git), and the manual
// rendered to HTML under public/guide/ (guide.mjs), the admin under public/admin/ (admin/build.mjs), which
// wrangler.toml serves as Workers static assets. Run by `npm run dev`, `npm test` (pretest),
// `npm run deploy` and CI, so the page never loads anything from a CDN and the bundle is never
// part of the Worker's own code.
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildAdmin } from "../../admin/build.mjs";
import { renderGuide } from "./guide.mjs";

const root = path.resolve(import.meta.dirname, "../..");
export const SCALAR_SOURCE = path.join(
  root,
  "node_modules",
  "@scalar",
  "api-reference",
  "dist",
  "browser",
  "standalone.js",
);
export const SCALAR_TARGET = path.join(root, "public", "scalar", "standalone.js");

/** Copies the bundle when the target is missing or differs in size or age from the installed one. */
export function copyAssets() {
  const src = statSync(SCALAR_SOURCE);
  let fresh = false;
  try {
    const dst = statSync(SCALAR_TARGET);
    fresh = dst.size === src.size && dst.mtimeMs >= src.mtimeMs;
  } catch {
    // not copied yet
  }
  // The manual's pages are small: rendered every time, so they never lag behind an edit.
  renderGuide();
  // The admin's bundle takes esbuild a fraction of a second: rebuilt every time too.
  buildAdmin();
  if (fresh) return;
  mkdirSync(path.dirname(SCALAR_TARGET), { recursive: true });
  copyFileSync(SCALAR_SOURCE, SCALAR_TARGET);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) copyAssets();
