// npm run test:readme: the README runs as written. Every ```sh block of README.md, in order, in
// one bash process started in the repo (as a reader pastes them into one terminal), against a
// fresh `npm run dev` on a free port with a fresh --persist-to directory; KEY and BASE are set
// from that server, as the README's first block would set them. ```shell blocks (installing,
// serving, deploying) are not run here.
//
// Each curl of the README runs through a bash function that reads the HTTP status: anything but
// 2xx fails the test, unless the line before the curl says `# expect <status>` (`# expect 401`,
// `# expect 4xx`), which then must match. A block that fails stops the run (set -e).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { root, startServer } from "./serve.mjs";

const README = readFileSync(path.join(root, "README.md"), "utf8");

/** The ```sh blocks of a Markdown text, with the line each starts on. */
function shellBlocks(/** @type {string} */ md) {
  /** @type {{ line: number, code: string }[]} */
  const blocks = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```sh") continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join("\n") });
    i = end;
  }
  return blocks;
}

/** A block made checkable: `# expect N` comments set what the next curl must answer. */
function instrument(/** @type {string} */ code) {
  return code.replace(/^(\s*)#\s*expect\s+([1-5](?:\d\d|xx))\b.*$/gm, "$1README_EXPECT=$2");
}

const PRELUDE = `. ${JSON.stringify(path.join(import.meta.dirname, "readme-curl.sh"))}`;

test("README: every shell block is fenced sh (run here) or shell (setup, not run)", () => {
  const fences = [...README.matchAll(/^```([\w-]*)\s*$/gm)].map((m) => m[1]).filter(Boolean);
  for (const f of fences) assert.ok(!["bash", "zsh", "console"].includes(f), `fence \`\`\`${f}: use sh or shell`);
  assert.ok(shellBlocks(README).length >= 5, "the README has runnable examples");
});

test("README: no reference to documents outside the repo", () => {
  for (const pattern of [
    /contract section/i,
    /\(contract \d/i,
    /\.\.\/shared/,
    /our machines/i,
    /interface\.md/,
    /modelled-api\.md/,
  ]) {
    assert.doesNotMatch(README, pattern);
  }
});

test("README: opens with the two commands a newcomer needs", () => {
  const first = /```shell\n([\s\S]*?)```/.exec(README)?.[1] ?? "";
  assert.match(first, /npm ci && npm run dev/);
  assert.match(first, /npm ci && npm test/);
  assert.ok(README.indexOf(first) < README.indexOf("## "), "before the first section");
});

test("README: the example URLs are quoted (zsh globs an unquoted ?)", () => {
  for (const { line, code } of shellBlocks(README)) {
    for (const l of code.split("\n")) {
      if (l.trim().startsWith("#")) continue;
      assert.doesNotMatch(l, /(^|\s)https?:\/\/\S*[?*[]/, `README.md:${line}: quote the URL: ${l}`);
      assert.doesNotMatch(l, /(^|\s)\$BASE\S*[?*[]/, `README.md:${line}: quote the URL: ${l}`);
    }
  }
});

/** @type {import("./serve.mjs").Server} */
let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** Runs `code` as the README test runs a block; returns bash's exit status and fd 3 log. */
function runBlocks(/** @type {string} */ code) {
  const r = spawnSync("bash", ["-c", `exec 3>&2\n${PRELUDE}\n${instrument(code)}`], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, KEY: server.key, BASE: server.base },
  });
  return { status: r.status, log: r.stderr };
}

test("README check: a non-2xx answer fails unless announced, and an announced one must match", () => {
  const missing = 'curl -s -u "$KEY:$KEY" "$BASE/v1/products/999999"';
  assert.notEqual(runBlocks(missing).status, 0, "an unannounced 404 fails");
  assert.equal(runBlocks(`# expect 404\n${missing}`).status, 0, "an announced 404 passes");
  assert.equal(runBlocks(`# expect 4xx\n${missing}`).status, 0, "4xx matches 404");
  assert.notEqual(runBlocks(`# expect 401\n${missing}`).status, 0, "a different error fails");
  assert.notEqual(
    runBlocks('# expect 404\ncurl -s "$BASE/health"').status,
    0,
    "an announced error that succeeds fails",
  );
  const ok = runBlocks('X=$(curl -s "$BASE/health")\n[ "$X" = \'{"status":"ok"}\' ]');
  assert.equal(ok.status, 0, `captures hold the body only:\n${ok.log}`);
});

test("README: the sh blocks run as written, in order, against a fresh npm run dev", () => {
  const blocks = shellBlocks(README);
  const script = [
    PRELUDE,
    ...blocks.map(({ line, code }) => `echo "[readme] block at README.md:${line}" >&3\n${instrument(code)}\necho >&3`),
  ].join("\n");
  const r = spawnSync("bash", ["-c", `exec 3>&2\n${script}`], {
    cwd: root,
    encoding: "utf8",
    timeout: 300_000,
    env: { ...process.env, KEY: server.key, BASE: server.base, NO_COLOR: "1" },
  });
  const log = `${r.stderr}`;
  assert.equal(
    r.status,
    0,
    `a README block failed:\n${log.split("\n").slice(-30).join("\n")}\n--- stdout (tail) ---\n${r.stdout.slice(-2000)}`,
  );
  const ran = (log.match(/^\[readme\] block at/gm) ?? []).length;
  assert.equal(ran, blocks.length, "every block ran");
  assert.ok((log.match(/^\[readme\] curl /gm) ?? []).length >= 5, "the examples call the API");
});
