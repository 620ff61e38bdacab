// Keys: every key (never the keys themselves), creating one (shown once), revoking one; the live
// sessions of every key, each with an End button.
import { useState } from "preact/hooks";
// The Worker's own lists, bundled in at build time, so the two never disagree.
import { PUBLISHABLE_SCOPES, SCOPES as SECRET_SCOPES } from "../../src/keys/scope-names";
import { api, currentSession } from "./api";
import type { Key, ListedSession } from "./types";
import { CheckList, ConfirmButton, CopyButton, Heads, Message, Title, useAction, useLoad, when } from "./ui";

export function KeysPage() {
  const { data, error, reload } = useLoad(() => api<{ keys: Key[] }>("GET", "/v1/keys").then((r) => r.body.keys), []);
  const live = data?.filter((k) => !k.revoked) ?? [];
  const revoked = data?.filter((k) => k.revoked) ?? [];
  return (
    <>
      <Title>Keys</Title>
      <Message error={error} />
      {data && (
        <>
          <div class="scroll" tabindex={0}>
            <table class="list">
              <caption class="sr-only">Live keys</caption>
              <Heads columns={["Name", "Key", "Scopes", "Last used", "Expires", ["Actions", "hidden"]]} />
              <tbody>
                {live.map((k) => (
                  <KeyRow k={k} reload={reload} />
                ))}
              </tbody>
            </table>
          </div>
          {live.length === 0 && <p>No stored keys: only the environment's API_KEY.</p>}
          {revoked.length > 0 && (
            <details>
              <summary>{revoked.length} revoked</summary>
              <ul>
                {revoked.map((k) => (
                  <li>
                    {k.name} <code>{k.prefix}…</code>, revoked {when(k.revoked_at)}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </>
      )}
      <Sessions />
      <CreateKey reload={reload} />
    </>
  );
}

/** "Chrome 131 on Linux"-like words for a User-Agent, enough to tell one's browsers apart. */
function browser(ua: string | null): string {
  if (!ua) return "unknown browser";
  const name = /(Edg|Firefox|Chrome|Safari)\/(\d+)/.exec(ua);
  // Phones name Linux or Mac OS X too: the more particular first.
  const os = ["Android", "iPhone", "iPad", "Windows", "Mac OS X", "Linux"]
    .find((o) => ua.includes(o))
    ?.replace("Mac OS X", "macOS");
  return [name ? `${name[1] === "Edg" ? "Edge" : name[1]} ${name[2]}` : ua.slice(0, 40), os && `on ${os}`]
    .filter(Boolean)
    .join(" ");
}

function Sessions() {
  const { data, error, reload } = useLoad(
    () => api<{ sessions: ListedSession[] }>("GET", "/v1/sessions").then((r) => r.body.sessions),
    [],
  );
  const action = useAction();
  const end = (s: ListedSession) =>
    action.run(
      async () => {
        await api("DELETE", `/v1/sessions/${s.id}`);
        await reload();
      },
      `Ended the session of ${s.key.name} in ${browser(s.user_agent)}.`,
    );
  return (
    <section aria-labelledby="sessions-h">
      <h2 id="sessions-h">Signed-in sessions</h2>
      <Message error={error || action.error} ok={action.ok} />
      {data && data.length === 0 && <p>No one is signed in.</p>}
      {data && data.length > 0 && (
        <div class="scroll" tabindex={0}>
          <table class="list sessions">
            <caption class="sr-only">Live sessions of every key, newest first</caption>
            <Heads columns={["Key", "Browser", "Signed in", "Last used", "Ends", ["Actions", "hidden"]]} />
            <tbody>
              {data.map((s) => (
                <tr>
                  <td>{s.key.name}</td>
                  <td>
                    {browser(s.user_agent)}
                    {s.current && <span class="muted"> (this browser)</span>}
                  </td>
                  <td>{when(s.created_at)}</td>
                  <td>{when(s.last_seen_at)}</td>
                  <td>{when(s.expires_at)}</td>
                  <td>
                    <button type="button" class="danger" disabled={action.busy} onClick={() => end(s)}>
                      End<span class="sr-only"> the session of {s.key.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function KeyRow({ k, reload }: { k: Key; reload: () => void }) {
  const action = useAction();
  const mine = currentSession()?.key.id === k.id;
  const revoke = () =>
    action.run(async () => {
      await api("DELETE", `/v1/keys/${k.id}`);
      await reload();
    }, "Revoked.");
  return (
    <tr>
      <td>
        {k.name}
        {mine && (
          <>
            {" "}
            <span class="muted">(this session)</span>
          </>
        )}
      </td>
      <td>
        <code>{k.prefix}…</code> <span class="muted">{k.type}</span>
      </td>
      <td>
        {k.type === "publishable"
          ? [...k.scopes, ...k.allowed_origins].join(", ") || "catalog, orders"
          : k.scopes.join(", ")}
      </td>
      <td>{when(k.last_used_at) || "never"}</td>
      <td>{when(k.expires_at) || "never"}</td>
      <td>
        <ConfirmButton label="Revoke" action={`Revoke ${k.name}`} busy={action.busy} onConfirm={revoke} />
        <Message error={action.error} />
      </td>
    </tr>
  );
}

function CreateKey({ reload }: { reload: () => void }) {
  const [name, setName] = useState("");
  const [type, setType] = useState("secret");
  const [scopes, setScopes] = useState<string[]>([]);
  const [origins, setOrigins] = useState("");
  const [created, setCreated] = useState("");
  const action = useAction();
  const choices: readonly string[] = type === "secret" ? SECRET_SCOPES : PUBLISHABLE_SCOPES;
  const create = (e: Event) => {
    e.preventDefault();
    setCreated("");
    const body: { name: string; type: string; scopes: string[]; allowed_origins?: string[] } = {
      name,
      type,
      scopes: scopes.filter((s) => choices.includes(s)),
    };
    if (type === "publishable") {
      body.allowed_origins = origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean);
    }
    action.run(async () => {
      const r = await api<{ key: string }>("POST", "/v1/keys", body);
      setCreated(r.body.key);
      setName("");
      await reload();
    }, "Key created.");
  };
  return (
    <form class="add" onSubmit={create}>
      <h2>Create a key</h2>
      <div>
        <label for="key-name">Name</label>
        <input id="key-name" required maxlength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div>
        <label for="key-type">Type</label>
        <select id="key-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="secret">secret (sk_: servers, tools, this admin)</option>
          <option value="publishable">publishable (pk_: storefront pages)</option>
        </select>
      </div>
      <fieldset>
        <legend>Scopes</legend>
        <CheckList options={choices} value={scopes} onChange={setScopes} />
      </fieldset>
      {type === "publishable" && (
        <div>
          <label for="key-origins">Allowed origins (one per line)</label>
          <textarea id="key-origins" rows={2} value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} />
        </div>
      )}
      <button type="submit" disabled={action.busy}>
        Create key
      </button>
      <Message error={action.error} ok={action.ok} />
      {created && (
        <p class="secret">
          The key, shown this once: copy it now.
          <br />
          <code>{created}</code> <CopyButton text={created} />
        </p>
      )}
    </form>
  );
}
