// npm run test:readme: the README and the manual run as written. Each page (README.md, then the
// pages under docs/ in the order of the README's docs map) runs on its own: its ```sh blocks, in
// order, in one shell process of its own started in the repo (as a reader pastes them into one
// terminal), against a server whose database is as fresh as a first `npm run dev` leaves it
// (test/node/fresh-db.mjs empties it between pages). The server is `npm run dev` on a free port
// that is never 8787, with a fresh --persist-to directory; KEY and BASE are set from it, as the
// README's first block would set them. Once in bash, once in an interactive zsh without rc files
// (as pasted into a stock zsh: no comments, no unquoted globs). ```shell blocks (installing,
// serving, deploying) are not run here.
//
// Each curl of a page runs through a shell function that reads the HTTP status: anything but
// 2xx fails the test, unless the block's fence announces the error its first curl answers
// (```sh expect=401, expect=4xx), which then must match. A failing command stops the page (set -e).
// The block right after a ```sh block is that block's answer, and is compared:
// - ```json: the last JSON the block printed must equal it, but for the keys its fence names
//   (```json ignore=created_at,key: ids, times, tokens and keys a fresh run gives anew), whose
//   values are only required to be there;
// - ```text: the block's whole output, line by line; a `Name: value` header line whose name the
//   fence names (```text ignore=x-request-id) is compared by name only, and a line of JSON as above.
// The pages show the answers of the default port: the server's own origin in its answers (the
// `url` of a product) is read as http://127.0.0.1:8787. A JSON block that is a body or a payload,
// not an answer, is fenced ```json example (```text example for other output not compared).
// README_UPDATE=1 npm run test:readme writes the server's answers into the pages.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { freshDatabase } from "./fresh-db.mjs";
import { freePort, root, startServer } from "./serve.mjs";

/** The origin the pages' answers show: `npm run dev`'s default. */
const SHOWN_BASE = "http://127.0.0.1:8787";
/** The port docs/webhooks.md's receiver listens on unless RECEIVER_PORT names another. */
const SHOWN_RECEIVER = "127.0.0.1:3000";

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

/** @typedef {{ lang: "json" | "text", line: number, shown: string, ignore: string[] }} Answer */

/**
 * The ```sh blocks of a Markdown text, with the line each starts on, its announced error, and the
 * answer it shows: the ```json or ```text block that is the next block after it (unless fenced
 * example: a body or payload, not an answer), with the keys or header names its fence names
 * (ignore=created_at,updated_at) compared by presence only.
 * @param {string} md
 */
function shellBlocks(md) {
  const all = fencedBlocks(md);
  /** @type {{ line: number, code: string, expect?: string, answer?: Answer }[]} */
  const blocks = [];
  all.forEach((b, i) => {
    if (b.lang !== "sh") return;
    const expect = /\bexpect=([1-5](?:\d\d|xx))\b/.exec(b.info)?.[1];
    const next = all[i + 1];
    const answer =
      (next?.lang === "json" || next?.lang === "text") && !/\bexample\b/.test(next.info)
        ? {
            lang: /** @type {"json" | "text"} */ (next.lang),
            line: next.line,
            shown: next.code,
            ignore: /\bignore=([\w,-]+)/.exec(next.info)?.[1].split(",") ?? [],
          }
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
 * Replaces shown answers with the server's: JSON on one line or indented as the page had it,
 * text as printed.
 * @param {{ page: string, answer: Answer, value: unknown }[]} updates
 */
function writeAnswers(updates) {
  for (const page of new Set(updates.map((u) => u.page))) {
    const file = path.join(root, page);
    const lines = readFileSync(file, "utf8").split("\n");
    for (const u of updates.filter((x) => x.page === page).sort((a, b) => b.answer.line - a.answer.line)) {
      const count = u.answer.shown.split("\n").length;
      const text =
        u.answer.lang === "text"
          ? String(u.value)
          : count > 1
            ? JSON.stringify(u.value, null, 2)
            : JSON.stringify(u.value);
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
 * A text answer as compared: lines without trailing blanks or carriage returns; a header line's
 * name in lower case (HTTP/1.1 names are case-insensitive) and its value masked when the fence
 * names it; a line of JSON parsed, its named keys masked.
 * @param {string} text @param {Set<string>} ignore
 */
function textLines(text, ignore) {
  return text
    .replaceAll("\r", "")
    .trim()
    .split("\n")
    .map((line) => {
      const header = /^([A-Za-z][\w-]*):\s*(.*?)\s*$/.exec(line);
      if (header) {
        const name = header[1].toLowerCase();
        return `${name}: ${ignore.has(name) ? "<ignored>" : header[2]}`;
      }
      try {
        return JSON.stringify(masked(JSON.parse(line), ignore));
      } catch {
        return line.trimEnd();
      }
    });
}

/**
 * Whether a block's output shows what its page says, and the server's answer to write back.
 * @param {Answer} answer @param {string} output
 * @returns {{ same: boolean, got?: unknown }}
 */
function compareAnswer(answer, output) {
  const ignore = new Set(answer.ignore);
  if (answer.lang === "text") {
    for (const name of answer.ignore) ignore.add(name.toLowerCase());
    const got = output.replaceAll("\r", "").trim();
    return { same: isDeepStrictEqual(textLines(got, ignore), textLines(answer.shown, ignore)), got };
  }
  const got = lastJson(output);
  if (!got) return { same: false };
  return {
    same: isDeepStrictEqual(masked(got.value, ignore), masked(JSON.parse(answer.shown), ignore)),
    got: got.value,
  };
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

  test(`${name}: output after an sh block is its compared answer (json or text) or fenced example`, () => {
    const all = fencedBlocks(text);
    all.forEach((b, i) => {
      if (all[i - 1]?.lang !== "sh" || /\bexample\b/.test(b.info)) return;
      assert.ok(
        b.lang !== "",
        `${name}:${b.line}: an unlabelled block after an sh block reads as its answer: fence it \`\`\`json or \`\`\`text (compared), or \`\`\`text example`,
      );
    });
  });

  if (name !== "README.md" && shellBlocks(text).length > 0) {
    test(`${name}: says before its first example what to run first`, () => {
      const before = text.slice(0, text.search(/^```sh(?=[ \t]|$)/m));
      assert.match(before, /`npm run dev`/);
      assert.match(before, /`KEY` and `BASE`|`KEY=\.\.\. BASE=\.\.\.`/);
    });
  }

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

test("docs/webhooks.md shows examples/webhook-receiver.mjs as it is, the file its examples run", () => {
  const page = readFileSync(path.join(root, "docs", "webhooks.md"), "utf8");
  const file = readFileSync(path.join(root, "examples", "webhook-receiver.mjs"), "utf8");
  const shown = fencedBlocks(page).find((b) => b.lang === "js")?.code;
  assert.equal(`${shown}\n`, file);
});

test("the README and the manual have runnable examples", () => {
  assert.ok(PAGES.flatMap((p) => shellBlocks(p.text)).length >= 5);
});

test("README: opens with the two commands a newcomer needs, in the form that works on Node 20", () => {
  const first = /```shell\n([\s\S]*?)```/.exec(README)?.[1] ?? "";
  const lines = first.trim().split("\n");
  assert.equal(lines.length, 2, "two commands");
  // Plain npm ci on Node 20 prints an EBADENGINE warning per package that wants a newer Node.
  assert.match(lines[0], /^npx -y -p node@24 npm ci && npm run dev\s/);
  assert.match(lines[1], /^npx -y -p node@24 npm ci && npm test\s/);
  assert.ok(README.indexOf(first) < README.indexOf("## "), "before the first section");
});

test("README: the first screen says what the store leaves to the merchant, and links the first sale", () => {
  const screen = README.slice(0, README.indexOf("## "));
  assert.match(screen, /payments, e-mail and the storefront's pages are\s+the merchant's/);
  assert.match(screen, /\(docs\/storefront\.md#paying-an-order\)/);
  assert.match(screen, /\(docs\/first-sale\.md\)/);
  // Figures that age (test counts, durations) are not written by hand.
  assert.doesNotMatch(README, /\b\d[\d,]* tests\b|load averages? of/);
});

/** @type {import("./serve.mjs").Server} */
let server;
before(async () => {
  server = await startServer();
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

test("README check: text answers compare line by line, named headers by name only", () => {
  const answer = (/** @type {string} */ shown, /** @type {string[]} */ ignore) =>
    /** @type {Answer} */ ({ lang: "text", line: 1, shown, ignore });
  const out = 'HTTP/1.1 401 Unauthorized\r\nx-request-id: 1f2e\r\n\r\n{"code":401,"at":"now"}\r\n';
  const shown = 'HTTP/1.1 401 Unauthorized\nX-Request-Id: 441d\n\n{"code":401,"at":"then"}';
  assert.equal(compareAnswer(answer(shown, ["x-request-id", "at"]), out).same, true);
  assert.equal(compareAnswer(answer(shown, ["at"]), out).same, false, "an unnamed header's value counts");
  assert.equal(compareAnswer(answer("HTTP/1.1 401 Unauthorized", ["x-request-id"]), out).same, false, "every line");
});

test("README check: each page starts from an empty database on a port that is not 8787", async () => {
  assert.doesNotMatch(server.base, /:8787$/);
  const reset = await freshDatabase(server.persist);
  const make = async () => {
    const r = await fetch(`${server.base}/v1/products`, {
      method: "POST",
      headers: { authorization: server.auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "Reset check", price: 1, sku: "RESET-CHECK" }),
    });
    return (await r.json()).products?.[0]?.product_id;
  };
  const first = await make();
  reset();
  assert.equal(await make(), first, "the same SKU is free again, and ids start over");
  reset();
});

/**
 * Runs one page's sh blocks in a shell process of its own; its drift and the answers to write back.
 * @param {"bash" | "zsh"} shell @param {{ name: string, text: string }} page @param {import("./serve.mjs").Server} own
 */
async function runPage(shell, page, own) {
  const blocks = shellBlocks(page.text);
  /** @type {string[]} */
  const drift = [];
  /** @type {{ page: string, answer: Answer, value: unknown }[]} */
  const updates = [];
  if (blocks.length === 0) return { drift, updates, curls: 0 };
  // Each block's output ends with a mark on its own line, so its answer can be found.
  const script = blocks
    .map(
      (b, i) =>
        `echo "[readme] block at ${page.name}:${b.line}" >&3\n${instrument(b)}\necho >&3\nprintf '\\n@@readme-block ${i}@@\\n'`,
    )
    .join("\n");
  const receiver = `127.0.0.1:${await freePort()}`;
  const r = runShell(shell, script, { KEY: own.key, BASE: own.base, RECEIVER_PORT: receiver.split(":")[1] });
  const log = `${r.stderr}`;
  if (r.status !== 0) {
    drift.push(
      `${page.name}: a block failed in ${shell}:\n${log.split("\n").slice(-30).join("\n")}\n--- stdout (tail) ---\n${r.stdout.slice(-2000)}`,
    );
    return { drift, updates, curls: 0 };
  }
  const ran = (log.match(/^\[readme\] block at/gm) ?? []).length;
  if (ran !== blocks.length) drift.push(`${page.name}: ${ran} of ${blocks.length} blocks ran`);
  // Every shown answer is the server's, but for the keys its fence names (ids, times, keys).
  const outputs = r.stdout
    .replaceAll(own.base, SHOWN_BASE)
    .replaceAll(receiver, SHOWN_RECEIVER)
    .split(/^@@readme-block \d+@@$/m);
  blocks.forEach((b, i) => {
    if (!b.answer) return;
    const { same, got } = compareAnswer(b.answer, outputs[i] ?? "");
    const where = `${page.name}:${b.answer.line}`;
    if (got === undefined) drift.push(`${where}: the block printed no JSON:\n${outputs[i]}`);
    else if (!same) {
      const show = (/** @type {unknown} */ v) => (b.answer?.lang === "text" ? `\n${v}` : JSON.stringify(v));
      drift.push(
        `${where}: shown\n  ${show(b.answer.lang === "text" ? b.answer.shown : JSON.parse(b.answer.shown))}\nbut the server answered\n  ${show(got)}`,
      );
      updates.push({ page: page.name, answer: b.answer, value: got });
    }
  });
  return { drift, updates, curls: (log.match(/^\[readme\] curl /gm) ?? []).length };
}

for (const shell of /** @type {const} */ (["bash", "zsh"])) {
  test(`README and docs/: each page's sh blocks run as written, in order, in ${shell}, on an empty database`, async () => {
    // A server per shell; the database emptied before each page, so that no page leans on another.
    const own = shell === "bash" ? server : await startServer();
    try {
      const reset = await freshDatabase(own.persist);
      /** @type {string[]} */
      const drift = [];
      /** @type {{ page: string, answer: Answer, value: unknown }[]} */
      const updates = [];
      let curls = 0;
      // README_PAGES=docs/stock.md,docs/orders.md runs only those pages (while writing one).
      const only = process.env.README_PAGES?.split(",").filter(Boolean);
      for (const page of PAGES.filter((p) => !only || only.includes(p.name))) {
        reset();
        const r = await runPage(shell, page, own);
        drift.push(...r.drift);
        updates.push(...r.updates);
        curls += r.curls;
      }
      // README_UPDATE=1 npm run test:readme writes the server's answers into the pages (then review the diff).
      if (process.env.README_UPDATE && shell === "bash") writeAnswers(updates);
      assert.deepEqual(drift, [], `pages that differ from the server in ${shell}:\n${drift.join("\n")}`);
      assert.ok(curls >= 5, "the examples call the API");
    } finally {
      if (own !== server) await own.stop();
    }
  });
}
