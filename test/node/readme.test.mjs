// npm run test:readme: the README and the manual run as written. Every ```sh block of README.md,
// then of each page under docs/ in the order of the README's docs map, in order, in one shell
// process started in the repo (as a reader pastes them into one terminal), against a fresh
// `npm run dev` on a free port with a fresh --persist-to directory; KEY and BASE are set from that
// server, as the README's first block would set them. Once in bash, once in an interactive zsh
// without rc files (as pasted into a stock zsh: no comments, no unquoted globs). ```shell blocks
// (installing, serving, deploying) are not run here.
//
// Each curl of a page runs through a shell function that reads the HTTP status: anything but
// 2xx fails the test, unless the block's fence announces the error its first curl answers
// (```sh expect=401, expect=4xx), which then must match. A failing command stops the run (set -e).
// A ```json block right after a ```sh block is that block's answer: the last JSON the block printed
// must equal it, but for the keys its fence names (```json ignore=created_at,key: ids, times,
// tokens and keys a fresh run gives anew), whose values are only required to be there. A JSON
// block that is a body or a payload, not an answer, is fenced ```json example.
// README_UPDATE=1 npm run test:readme writes the server's answers into the pages.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { root, startServer } from "./serve.mjs";

// The pages show a product's url as `npm run dev` gives it on its default port, whatever port the
// test's server listens on.
const PAGES_SERVER = { args: ["--var", "STORE_URL:http://127.0.0.1:8787/products"] };

const README = readFileSync(path.join(root, "README.md"), "utf8");
/** The manual's pages in the order the README's docs map (its section after the marker) links them. */
const DOCS_MAP = README.slice(README.indexOf("<!-- section: docs-map -->")).split(/^## /m)[0];
const DOCS = [...new Set([...DOCS_MAP.matchAll(/\]\((docs\/[\w-]+\.md)[)#]/g)].map((m) => m[1]))];
/** @type {{ name: string, text: string }[]} */
const PAGES = [
  { name: "README.md", text: README },
  ...DOCS.map((name) => ({ name, text: readFileSync(path.join(root, name), "utf8") })),
];

/**
 * The fenced blocks of a Markdown text: language, the rest of the fence line, first line number.
 * @param {string} md
 */
function fencedBlocks(md) {
  /** @type {{ lang: string, info: string, line: number, code: string }[]} */
  const blocks = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)(?:\s+(.*))?$/.exec(lines[i].trim());
    if (!fence) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    blocks.push({ lang: fence[1], info: fence[2] ?? "", line: start + 1, code: lines.slice(start, end).join("\n") });
    i = end;
  }
  return blocks;
}

/**
 * The ```sh blocks of a Markdown text, with the line each starts on, its announced error, and the
 * answer it shows: the ```json block that is the next block after it (unless fenced
 * ```json example: a body or payload, not an answer), with the keys its fence names
 * (ignore=created_at,updated_at) compared by presence only.
 * @param {string} md
 */
function shellBlocks(md) {
  const all = fencedBlocks(md);
  /** @type {{ line: number, code: string, expect?: string, answer?: { line: number, json: string, ignore: string[] } }[]} */
  const blocks = [];
  all.forEach((b, i) => {
    if (b.lang !== "sh") return;
    const expect = /\bexpect=([1-5](?:\d\d|xx))\b/.exec(b.info)?.[1];
    const next = all[i + 1];
    const answer =
      next?.lang === "json" && !/\bexample\b/.test(next.info)
        ? { line: next.line, json: next.code, ignore: /\bignore=([\w,]+)/.exec(next.info)?.[1].split(",") ?? [] }
        : undefined;
    blocks.push({ line: b.line, code: b.code, expect, answer });
  });
  return blocks;
}

/** The last JSON value a block printed: its whole output, or its last line that parses. */
function lastJson(/** @type {string} */ out) {
  const text = out.trim();
  try {
    return { value: JSON.parse(text) };
  } catch {
    for (const line of text.split("\n").reverse()) {
      try {
        return { value: JSON.parse(line) };
      } catch {}
    }
  }
  return undefined;
}

/**
 * Replaces shown answers with the server's, one line or indented as the page had them.
 * @param {{ page: string, answer: { line: number, json: string }, value: unknown }[]} updates
 */
function writeAnswers(updates) {
  for (const page of new Set(updates.map((u) => u.page))) {
    const file = path.join(root, page);
    const lines = readFileSync(file, "utf8").split("\n");
    for (const u of updates.filter((x) => x.page === page).sort((a, b) => b.answer.line - a.answer.line)) {
      const count = u.answer.json.split("\n").length;
      const text = count > 1 ? JSON.stringify(u.value, null, 2) : JSON.stringify(u.value);
      lines.splice(u.answer.line - 1, count, ...text.split("\n"));
    }
    writeFileSync(file, lines.join("\n"));
  }
}

/**
 * A value with the named keys' values, at any depth, replaced by a mark (the keys must exist).
 * @param {unknown} v @param {Set<string>} ignore @returns {unknown}
 */
function masked(v, ignore) {
  if (Array.isArray(v)) return v.map((x) => masked(x, ignore));
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ignore.has(k) ? "<ignored>" : masked(x, ignore)]));
  }
  return v;
}

/**
 * A block as the test runs it: its announced error first, always set, since a curl in a pipeline
 * or `$(...)` runs in a subshell whose reset of README_EXPECT never reaches the next block.
 */
const instrument = (/** @type {{ code: string, expect?: string }} */ b) => `README_EXPECT=${b.expect ?? ""}\n${b.code}`;

const CURL_SH = JSON.stringify(path.join(import.meta.dirname, "readme-curl.sh"));
// zsh: the prelude's own comments need interactive_comments; the README's blocks run without it.
const PRELUDE = {
  bash: `exec 3>&2\n. ${CURL_SH}`,
  zsh: `exec 3>&2\nsetopt interactive_comments\n. ${CURL_SH}\nunsetopt interactive_comments`,
};
const zdotdir = mkdtempSync(path.join(tmpdir(), "edge-store-zsh-"));
writeFileSync(path.join(zdotdir, ".zshrc"), "");

/**
 * Runs a script in bash, or in an interactive zsh without the user's rc files.
 * @param {"bash" | "zsh"} shell @param {string} script @param {Record<string, string>} env
 */
function runShell(shell, script, env) {
  const args = shell === "zsh" ? ["-i", "-c", `${PRELUDE.zsh}\n${script}`] : ["-c", `${PRELUDE.bash}\n${script}`];
  return spawnSync(shell, args, {
    cwd: root,
    encoding: "utf8",
    timeout: 300_000,
    env: { ...process.env, ...env, ZDOTDIR: zdotdir, NO_COLOR: "1" },
  });
}

test("the README's docs map links every page under docs/", () => {
  const files = readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  assert.ok(files.length >= 5, "the manual has pages");
  assert.deepEqual([...files].sort(), [...DOCS].sort());
  // A page is short enough to read in one sitting; the README is a first page, not the manual.
  assert.ok(README.split("\n").length <= 300, "README.md under 300 lines");
  for (const { name, text } of PAGES.slice(1)) assert.ok(text.split("\n").length <= 400, `${name} under 400 lines`);
});

for (const { name, text } of PAGES) {
  test(`${name}: every shell block is fenced sh (run here) or shell (setup, not run)`, () => {
    const fences = [...text.matchAll(/^```([\w-]*)\s*$/gm)].map((m) => m[1]).filter(Boolean);
    for (const f of fences) assert.ok(!["bash", "zsh", "console"].includes(f), `fence \`\`\`${f}: use sh or shell`);
  });

  test(`${name}: no reference to documents outside the repo`, () => {
    for (const pattern of [
      /contract section/i,
      /\(contract \d/i,
      /\.\.\/shared/,
      /our machines/i,
      /interface\.md/,
      /modelled-api\.md/,
    ]) {
      assert.doesNotMatch(text, pattern);
    }
  });

  test(`${name}: every JSON block is the answer of the sh block before it, or fenced json example`, () => {
    const all = fencedBlocks(text);
    all.forEach((b, i) => {
      if (b.lang !== "json" || /\bexample\b/.test(b.info)) return;
      assert.equal(
        all[i - 1]?.lang,
        "sh",
        `${name}:${b.line}: a \`\`\`json block shows the answer of the sh block before it; a body or payload is fenced \`\`\`json example`,
      );
      assert.doesNotThrow(() => JSON.parse(b.code), `${name}:${b.line}: the answer is JSON`);
    });
  });

  test(`${name}: the example URLs are quoted (zsh globs an unquoted ?)`, () => {
    for (const { line, code } of shellBlocks(text)) {
      for (const l of code.split("\n")) {
        if (l.trim().startsWith("#")) continue;
        assert.doesNotMatch(l, /(^|\s)https?:\/\/\S*[?*[]/, `${name}:${line}: quote the URL: ${l}`);
        assert.doesNotMatch(l, /(^|\s)\$BASE\S*[?*[]/, `${name}:${line}: quote the URL: ${l}`);
      }
    }
  });
}

test("the README and the manual have runnable examples", () => {
  assert.ok(PAGES.flatMap((p) => shellBlocks(p.text)).length >= 5);
});

test("README: opens with the two commands a newcomer needs", () => {
  const first = /```shell\n([\s\S]*?)```/.exec(README)?.[1] ?? "";
  assert.match(first, /npm ci && npm run dev/);
  assert.match(first, /npm ci && npm test/);
  assert.ok(README.indexOf(first) < README.indexOf("## "), "before the first section");
});

/** @type {import("./serve.mjs").Server} */
let server;
before(async () => {
  server = await startServer(PAGES_SERVER);
});
after(async () => {
  await server?.stop();
  rmSync(zdotdir, { recursive: true, force: true });
});

test("README check: a non-2xx answer fails unless announced, and an announced one must match", () => {
  const env = { KEY: server.key, BASE: server.base };
  const run = (/** @type {string} */ code, /** @type {string | undefined} */ expect) =>
    runShell("bash", instrument({ code, expect }), env).status;
  const missing = 'curl -s -u "$KEY:$KEY" "$BASE/v1/products/999999"';
  assert.notEqual(run(missing, undefined), 0, "an unannounced 404 fails");
  assert.equal(run(missing, "404"), 0, "an announced 404 passes");
  assert.equal(run(missing, "4xx"), 0, "4xx matches 404");
  assert.notEqual(run(missing, "401"), 0, "a different error fails");
  assert.notEqual(run('curl -s "$BASE/health"', "404"), 0, "an announced error that succeeds fails");
  assert.equal(
    run(`X=$(curl -s "$BASE/health")\n[ "$X" = '{"status":"ok"}' ]`, undefined),
    0,
    "captures hold bodies only",
  );
  assert.equal(runShell("zsh", instrument({ code: missing, expect: "404" }), env).status, 0, "zsh: announced 404");
  assert.notEqual(runShell("zsh", missing, env).status, 0, "zsh: unannounced 404 fails");
  assert.notEqual(
    runShell("zsh", `curl -s ${server.base}/v1/products?limit=1`, env).status,
    0,
    "zsh refuses an unquoted ?",
  );
});

for (const shell of /** @type {const} */ (["bash", "zsh"])) {
  test(`README and docs/: the sh blocks run as written, in order, in ${shell}, against a fresh npm run dev`, async () => {
    // A fresh server per shell: the blocks create SKUs that a second run would find taken.
    const own = shell === "bash" ? server : await startServer(PAGES_SERVER);
    try {
      const blocks = PAGES.flatMap((p) => shellBlocks(p.text).map((b) => ({ ...b, page: p.name })));
      // Each block's output ends with a mark on its own line, so its answer can be found.
      const script = blocks
        .map(
          (b, i) =>
            `echo "[readme] block at ${b.page}:${b.line}" >&3\n${instrument(b)}\necho >&3\nprintf '\\n@@readme-block ${i}@@\\n'`,
        )
        .join("\n");
      const r = runShell(shell, script, { KEY: own.key, BASE: own.base });
      const log = `${r.stderr}`;
      assert.equal(
        r.status,
        0,
        `a block failed in ${shell}:\n${log.split("\n").slice(-30).join("\n")}\n--- stdout (tail) ---\n${r.stdout.slice(-2000)}`,
      );
      assert.equal((log.match(/^\[readme\] block at/gm) ?? []).length, blocks.length, "every block ran");
      // Every shown answer is the server's, but for the keys its fence names (ids, times, keys).
      const outputs = r.stdout.split(/^@@readme-block \d+@@$/m);
      /** @type {string[]} */
      const drift = [];
      /** @type {{ page: string, answer: { line: number, json: string }, value: unknown }[]} */
      const updates = [];
      blocks.forEach((b, i) => {
        if (!b.answer) return;
        const shown = JSON.parse(b.answer.json);
        const got = lastJson(outputs[i] ?? "");
        const ignore = new Set(b.answer.ignore);
        const where = `${b.page}:${b.answer.line}`;
        if (!got) drift.push(`${where}: the block printed no JSON:\n${outputs[i]}`);
        else if (!isDeepStrictEqual(masked(got.value, ignore), masked(shown, ignore))) {
          drift.push(
            `${where}: shown\n  ${JSON.stringify(shown)}\nbut the server answered\n  ${JSON.stringify(got.value)}`,
          );
          updates.push({ page: b.page, answer: b.answer, value: got.value });
        }
      });
      // README_UPDATE=1 npm run test:readme writes the server's answers into the pages (then review the diff).
      if (process.env.README_UPDATE && shell === "bash") writeAnswers(updates);
      assert.deepEqual(drift, [], `answers that differ from the page in ${shell}:\n${drift.join("\n")}`);
      assert.ok((log.match(/^\[readme\] curl /gm) ?? []).length >= 5, "the examples call the API");
    } finally {
      if (own !== server) await own.stop();
    }
  });
}
