#!/usr/bin/env node
// A stand-in `wrangler` for test/node/deploy.test.mjs: put on PATH as `wrangler`, it records each
// call in $FAKE_WRANGLER_STATE (a JSON file that also holds the pretend account) and answers the
// commands npm run deploy uses the way wrangler 4.164 does: same output shapes, same exit codes,
// same "already exists" errors. It never touches the network.
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const file = /** @type {string} */ (process.env.FAKE_WRANGLER_STATE);
/**
 * @type {{ calls: string[][], loggedIn: boolean, databases: {uuid: string, name: string}[],
 *   queues: string[], migrations: Record<string, string[]>, worker: boolean,
 *   secrets: Record<string, string>, deploys: number, secretsFiles: string[] }}
 */
const state = JSON.parse(readFileSync(file, "utf8"));
const args = process.argv.slice(2);
state.calls.push(args);
const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
const BANNER = "\n ⛅️ wrangler 4.164.0\n───────────────────\n";

/** @param {string} text @param {number} [code] @returns {never} */
function answer(text, code = 0) {
  save();
  (code === 0 ? process.stdout : process.stderr).write(text);
  process.exit(code);
}
/** @param {string} text @returns {never} */
const error = (text) => answer(`${BANNER}\n✘ [ERROR] ${text}\n`, 1);
/** @param {string} route @param {string} text @param {number} code @returns {never} */
const apiError = (route, text, code) =>
  error(`A request to the Cloudflare API (/accounts/0123/${route}) failed.\n\n  ${text} [code: ${code}]\n`);

const cmd = ["d1", "queues", "secret"].includes(args[0]) ? args.slice(0, 2).join(" ") : args[0];
const flag = (/** @type {string} */ name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const config = readFileSync(path.join(process.cwd(), "wrangler.toml"), "utf8");

if (cmd === "whoami") {
  if (!state.loggedIn)
    answer(`${BANNER}Getting User settings...\nYou are not authenticated. Please run \`wrangler login\`.\n`);
  answer(
    `${BANNER}Getting User settings...\n👋 You are logged in with an OAuth Token, associated with the email dev@example.com.\n`,
  );
}
if (!state.loggedIn) {
  error(
    "In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN environment variable for wrangler to work.",
  );
}

switch (cmd) {
  case "d1 list": {
    const rows = state.databases.map((d) => ({
      uuid: d.uuid,
      name: d.name,
      created_at: "2026-11-22T08:00:00.000Z",
      version: "production",
      num_tables: 0,
      file_size: 12288,
    }));
    answer(`${JSON.stringify(rows, null, 2)}\n`);
    break;
  }
  case "d1 create": {
    const name = args[2];
    if (state.databases.some((d) => d.name === name)) error("A database with that name already exists");
    const uuid = randomUUID();
    state.databases.push({ uuid, name });
    answer(
      `${BANNER}✅ Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n\n` +
        `To access your new D1 Database in your Worker, add the following snippet to your configuration file:\n` +
        `[[d1_databases]]\nbinding = "${name}"\ndatabase_name = "${name}"\ndatabase_id = "${uuid}"\n`,
    );
    break;
  }
  case "d1 migrations": {
    // d1 migrations apply <name> --remote: needs the real id in wrangler.toml, as wrangler does.
    const name = args[3];
    const id = /database_id\s*=\s*"([^"]+)"/.exec(config)?.[1];
    const db = state.databases.find((d) => d.uuid === id && d.name === name);
    if (!args.includes("--remote")) error("the fake only knows --remote");
    if (!db) apiError(`d1/database/${id}`, "The database could not be found.", 7404);
    const dir = path.join(process.cwd(), "drizzle");
    const bundled = readFileSync(path.join(dir, "meta", "_journal.json"), "utf8");
    const names = JSON.parse(bundled).entries.map((/** @type {{tag: string}} */ e) => `${e.tag}.sql`);
    state.migrations[db.uuid] ??= [];
    const done = state.migrations[db.uuid];
    const todo = names.filter((/** @type {string} */ n) => !done.includes(n));
    if (!todo.length) answer(`${BANNER}✅ No migrations to apply!\n`);
    done.push(...todo);
    answer(
      `${BANNER}Migrations to be applied:\n${todo.map((/** @type {string} */ n) => `│ ${n} │`).join("\n")}\n🚣 Executed ${todo.length} migrations\n`,
    );
    break;
  }
  case "queues create": {
    const name = args[2];
    if (state.queues.includes(name)) apiError("queues", `Queue name '${name}' is already taken.`, 11009);
    state.queues.push(name);
    answer(`${BANNER}🌀 Creating queue '${name}'\n✅ Created queue '${name}'\n`);
    break;
  }
  case "queues info": {
    if (!state.queues.includes(args[2])) apiError(`queues/${args[2]}`, "Queue not found.", 11000);
    answer(`${BANNER}Queue Name: ${args[2]}\n`);
    break;
  }
  case "secret list": {
    if (!state.worker)
      apiError("workers/scripts/edge-store/secrets", "This Worker does not exist on your account.", 10007);
    answer(
      `${JSON.stringify(
        Object.keys(state.secrets).map((name) => ({ name, type: "secret_text" })),
        null,
        "  ",
      )}\n`,
    );
    break;
  }
  case "deploy": {
    const secretsFile = flag("--secrets-file");
    if (secretsFile) {
      Object.assign(state.secrets, JSON.parse(readFileSync(secretsFile, "utf8")));
      state.secretsFiles.push(secretsFile);
    }
    // wrangler.toml's [secrets] required: a new Worker cannot be deployed without them.
    if (!state.worker && !("API_KEY" in state.secrets)) {
      error(
        "The following required secrets have not been set: API_KEY\nUse `wrangler secret put <NAME>` to set secrets before deploying.",
      );
    }
    // Since wrangler 4.1xx, deploy provisions the queues the Worker binds; a consumer's
    // dead_letter_queue that no binding names must exist already.
    for (const q of [...config.matchAll(/^queue\s*=\s*"([^"]+)"/gm)].map((m) => m[1])) {
      if (!state.queues.includes(q)) state.queues.push(q);
    }
    for (const q of [...config.matchAll(/dead_letter_queue\s*=\s*"([^"]+)"/g)].map((m) => m[1])) {
      if (!state.queues.includes(q)) apiError("workers/scripts/edge-store", `Queue "${q}" does not exist.`, 11000);
    }
    state.worker = true;
    state.deploys++;
    answer(
      `${BANNER}Total Upload: 412.33 KiB / gzip: 96.12 KiB\nUploaded edge-store (3.21 sec)\n` +
        `Deployed edge-store triggers (0.92 sec)\n  https://edge-store.dev-example.workers.dev\n  schedule: */5 * * * *\n` +
        `Current Version ID: ${randomUUID()}\n`,
    );
    break;
  }
  default:
    error(`the fake wrangler does not know: wrangler ${args.join(" ")}`);
}
