#!/usr/bin/env node
// `npm run lock:fix`, after any `npm install` that changes package-lock.json.
//
// The npm registry mirror of our machines does not serve every platform build of biome and
// workerd (darwin, win32, musl ...), so `npm install` leaves them out of the lockfile and `npm ci`
// then refuses the lock as out of sync. This adds the entries npm expects for those optional,
// platform-bound packages. They never install here (their os/cpu do not match), and on a machine
// whose registry serves them npm installs them as usual.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const file = path.resolve(import.meta.dirname, "../../package-lock.json");
const lock = JSON.parse(readFileSync(file, "utf8"));
const pkgs = lock.packages;

/** @type {[string, string[], string[]][]} suffix of the package name, os, cpu */
const PLATFORMS = [
  ["android-arm64", ["android"], ["arm64"]],
  ["android-x64", ["android"], ["x64"]],
  ["darwin-arm64", ["darwin"], ["arm64"]],
  ["darwin-x64", ["darwin"], ["x64"]],
  ["darwin-64", ["darwin"], ["x64"]],
  ["linux-arm64-musl", ["linux"], ["arm64"]],
  ["linux-x64-musl", ["linux"], ["x64"]],
  ["linux-arm64", ["linux"], ["arm64"]],
  ["linux-x64", ["linux"], ["x64"]],
  ["linux-64", ["linux"], ["x64"]],
  ["win32-arm64", ["win32"], ["arm64"]],
  ["win32-x64", ["win32"], ["x64"]],
  ["windows-64", ["win32"], ["x64"]],
];

let added = 0;
for (const [where, meta] of Object.entries(pkgs)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = where ? `${where}/node_modules/${dep}` : `node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (pkgs[nested] || pkgs[top]?.version === version) continue;
    const platform = PLATFORMS.find(([suffix]) => dep.endsWith(suffix));
    if (!platform) continue;
    pkgs[pkgs[top] ? nested : top] = { version, dev: true, optional: true, os: platform[1], cpu: platform[2] };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock:fix: added ${added} platform entries`);
