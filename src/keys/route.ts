import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { id, parseItem } from "../platform/fields";
import { zv } from "../platform/zv";
import { forgetKey } from "./auth";
import { keyCreate, keyProblems, MAX_KEYS } from "./schema";
import type { Scope } from "./scope-names";
import { createKey, listKeys, revokeKey } from "./store";

/** What a publishable key can do, and so what its maker must hold. */
const PUBLISHABLE_MAKER: readonly Scope[] = ["products:read", "orders:write"];

export const keysRoute = new Hono<AppEnv>()
  .post("/", jsonBody, async (c) => {
    const body = c.var.body;
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new ApiError(400, "body must be a key object");
    }
    const p = parseItem(keyCreate, body);
    if (!p.ok) throw new ApiError(400, "invalid body", p.errors);
    const now = Date.now();
    const maker = c.var.credential;
    const problems = keyProblems(p.data, now, maker?.expiresAt ?? null);
    if (problems.length) throw new ApiError(400, "invalid body", problems);
    // No key hands out more than it holds: a key with scope `keys` cannot mint a broader one, nor
    // a publishable key that sees what it cannot (stock, datafields), nor one that reads the
    // catalogue and creates orders when it can do neither (docs/keys.md, "Creating, listing and
    // revoking keys").
    const held = maker?.scopes ?? [];
    const beyond = (p.data.scopes ?? []).filter((s) => !held.includes(s));
    if (beyond.length) {
      throw new ApiError(403, `this key cannot grant scopes it lacks: ${beyond.join(", ")}`, [
        `scopes: this key lacks ${beyond.join(", ")}`,
      ]);
    }
    const lacking = PUBLISHABLE_MAKER.filter((s) => !held.includes(s));
    if (p.data.type === "publishable" && lacking.length) {
      throw new ApiError(403, "this key cannot create publishable keys", [
        `type: a publishable key reads the catalogue and creates orders; creating one needs ${PUBLISHABLE_MAKER.join(" and ")}, and this key lacks ${lacking.join(", ")}`,
      ]);
    }
    const created = await createKey(c.var.db, p.data, now);
    if (!created) throw new ApiError(409, `at most ${MAX_KEYS} live keys; revoke one first`);
    return c.json({ ...created, notices: p.notices }, 201);
  })
  .get("/", async (c) => c.json({ keys: await listKeys(c.var.db) }))
  .delete("/:id", zv("param", z.object({ id })), async (c) => {
    const { id } = c.req.valid("param");
    if (!(await revokeKey(c.var.db, id, Date.now()))) throw new ApiError(404, `key ${id} not found`);
    forgetKey(id);
    return c.body(null, 204);
  });
