// Argument handling shared by the Node-side scripts (dev, deploy), kept apart so it can be tested
// without starting anything (test/node/scripts.test.mjs).

/**
 * The value of `--name value` or `--name=value` among the arguments, if given.
 * @param {readonly string[]} args
 * @param {string} name
 */
export function argValue(args, name) {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  return args[i].includes("=") ? args[i].slice(name.length + 1) : args[i + 1];
}

/**
 * Parses a .dev.vars file (KEY=value lines, # comments, optional quotes).
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseDevVars(text) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    out[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

/**
 * `npm run dev`'s STORE_URL when none is given: a storefront's product pages on the dev server's
 * origin (docs/products.md, "URL and slug").
 * @param {string} port
 */
export const localStoreUrl = (port) => `http://127.0.0.1:${port}/products`;

/**
 * The `wrangler dev` command line of `npm run dev`: loopback on 8787 unless the caller names its
 * own --ip or --port, then every caller argument unchanged. wrangler.toml declares API_KEY as the
 * one secret, so wrangler reads only that from .dev.vars; the file's other entries (a local
 * DEFAULT_CURRENCY, say) go over as --var, as a developer who wrote them there expects.
 * @param {readonly string[]} args
 * @param {Record<string, string>} devVars
 */
export function wranglerDevArgs(args, devVars) {
  const given = (/** @type {string} */ name) => argValue(args, name) !== undefined || args.includes(name);
  const vars = Object.entries(devVars)
    .filter(([k]) => k !== "API_KEY")
    .flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const storeUrlGiven =
    "STORE_URL" in devVars || args.some((a, i) => args[i - 1] === "--var" && a.startsWith("STORE_URL:"));
  return [
    "dev",
    ...(given("--ip") ? [] : ["--ip", "127.0.0.1"]),
    ...(given("--port") ? [] : ["--port", "8787"]),
    // Webhooks to http://127.0.0.1 receivers are how local development tests them (docs/webhooks.md, "Webhooks").
    "--var",
    "ALLOW_LOCAL_WEBHOOKS:true",
    // The local simulator passes a client's own CF-Connecting-IP through: not an address to trust.
    "--var",
    "LOCAL_DEV:true",
    // Every product gets a url locally, unique by its slug (docs/products.md, "URL and slug"),
    // unless .dev.vars or the command line names the storefront.
    ...(storeUrlGiven ? [] : ["--var", `STORE_URL:${localStoreUrl(argValue(args, "--port") ?? "8787")}`]),
    ...vars,
    ...args,
  ];
}

/** Where `npm run dev` records the origin it serves, for the scripts that call it (npm run seed). */
export const DEV_BASE_FILE = ".wrangler/dev-base";

/**
 * The server a script talks to and the key it sends, each with where it came from (for its
 * messages): `--base`/`--key`, then the environment's BASE and KEY (the line `npm run dev`
 * prints to paste), then the origin `npm run dev` last served and .dev.vars's first API_KEY,
 * then the default port. SEED_BASE_URL and API_KEY are read after BASE and KEY, as before.
 * @param {{ args: readonly string[], env: Record<string, string | undefined>, devVars?: Record<string, string>, recordedBase?: string }} from
 */
export function serverTarget({ args, env, devVars = {}, recordedBase }) {
  /** @type {[string | undefined, string][]} */
  const bases = [
    [argValue(args, "--base"), "--base"],
    [env.BASE, "BASE"],
    [env.SEED_BASE_URL, "SEED_BASE_URL"],
    [recordedBase?.trim(), `${DEV_BASE_FILE}, where npm run dev last served`],
    ["http://127.0.0.1:8787", "npm run dev's default port"],
  ];
  const firstKey = (/** @type {string | undefined} */ v) => v?.split(",")[0]?.trim() || undefined;
  /** @type {[string | undefined, string][]} */
  const keys = [
    [argValue(args, "--key"), "--key"],
    [env.KEY, "KEY"],
    [firstKey(env.API_KEY), "API_KEY"],
    [firstKey(devVars.API_KEY), ".dev.vars"],
  ];
  const [base, baseFrom] = /** @type {[string, string]} */ (bases.find(([v]) => v));
  const [key, keyFrom] = keys.find(([v]) => v) ?? [undefined, ""];
  return { base: base.replace(/\/+$/, ""), baseFrom, key, keyFrom };
}
