// Webhooks: the endpoints, each one's recent deliveries (what each is about, status, response
// time, outcome, its payload on demand, Resend), adding one (its secret shown once) and removing
// one.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
// The Worker's own list, bundled in at build time, so the two never disagree.
import { EVENT_TYPES as EVENTS } from "../../src/webhooks/events";
import { api } from "./api";
import type { Delivery, Webhook } from "./types";
import { CheckList, ConfirmButton, CopyButton, Heads, Message, Title, useAction, useLoad, when } from "./ui";

export function WebhooksPage() {
  const { data, error, reload } = useLoad(
    () => api<{ webhooks: Webhook[] }>("GET", "/v1/webhooks").then((r) => r.body.webhooks),
    [],
  );
  const [open, setOpen] = useState<number | null>(null);
  return (
    <>
      <Title>Webhooks</Title>
      <Message error={error} />
      {data && (
        <>
          {data.length === 0 && <p>No endpoints yet.</p>}
          <ul class="cards">
            {data.map((w) => (
              <li class="card">
                <Endpoint
                  w={w}
                  open={open === w.id}
                  toggle={() => setOpen(open === w.id ? null : w.id)}
                  reload={reload}
                />
              </li>
            ))}
          </ul>
        </>
      )}
      <AddEndpoint reload={reload} existing={data ?? []} />
    </>
  );
}

function Endpoint({ w, open, toggle, reload }: { w: Webhook; open: boolean; toggle: () => void; reload: () => void }) {
  const [tests, setTests] = useState(0);
  const action = useAction();
  const test = () =>
    action.run(async () => {
      const { body: t } = await api<{ outcome: string; error?: string; status?: number }>(
        "POST",
        `/v1/webhooks/${w.id}/test`,
      );
      setTests(tests + 1);
      if (!open) toggle();
      if (t.outcome !== "delivered") throw new Error(`Test not delivered: ${t.error ?? `HTTP ${t.status}`}`);
    }, "Test delivered.");
  const remove = () =>
    action.run(async () => {
      await api("DELETE", `/v1/webhooks/${w.id}`);
      await reload();
    }, "Removed.");
  return (
    <>
      <h2 class="url">{w.url}</h2>
      <p>
        <span class={`badge ${w.enabled ? "status-paid" : "status-cancelled"}`}>
          {w.enabled ? "enabled" : "disabled"}
        </span>{" "}
        {w.format} · {w.events.join(", ")}
        {w.disabled_reason && (
          <>
            <br />
            Disabled: {w.disabled_reason}
          </>
        )}
      </p>
      <Message error={action.error} ok={action.ok} />
      <div class="row">
        <button type="button" aria-expanded={open} onClick={toggle}>
          {open ? "Hide deliveries" : "Recent deliveries"}
        </button>
        <button type="button" disabled={action.busy} onClick={test}>
          Send test
        </button>
        <ConfirmButton
          label="Remove"
          action="Remove"
          question="Remove this endpoint and its delivery log?"
          busy={action.busy}
          onConfirm={remove}
        />
      </div>
      {open && <Deliveries key={tests} id={w.id} />}
    </>
  );
}

function Deliveries({ id }: { id: number }) {
  const { data, error, reload, loading } = useLoad(
    () =>
      api<{ deliveries: Delivery[] }>("GET", `/v1/webhooks/${id}/deliveries?limit=20`).then((r) => r.body.deliveries),
    [id],
  );
  const action = useAction();
  // Which delivery's payload is open, by the delivery itself: a refresh moves the rows.
  const [shown, setShown] = useState("");
  const keyOf = (d: Delivery) => `${d.event_id}:${d.attempt}:${d.created_at}`;
  const resend = (d: Delivery) =>
    action.run(async () => {
      await api("POST", `/v1/webhooks/${id}/events/${d.event_id}/resend`);
      setTimeout(reload, 1500);
    }, `Sent ${d.event_type} again: its attempt shows here in a moment.`);
  return (
    <>
      <Message error={error || action.error} ok={action.ok} />
      <button type="button" class="link" disabled={loading} onClick={reload}>
        Refresh
      </button>
      {data && data.length === 0 && <p>No deliveries yet.</p>}
      {data && data.length > 0 && (
        <div class="scroll" tabindex={0}>
          <table class="list">
            <caption class="sr-only">Recent deliveries, newest first</caption>
            <Heads
              columns={[
                "When",
                "Event",
                ["Attempt", "num"],
                ["HTTP", "num"],
                ["Time", "num"],
                "Outcome",
                ["Actions", "hidden"],
              ]}
            />
            <tbody>
              {/* Keyed by delivery: a refresh puts new attempts on top, and a button in hand (or
                  in focus) must stay its own delivery's, not the row's that now sits there. */}
              {data.map((d) => (
                <Fragment key={keyOf(d)}>
                  <tr>
                    <td>{when(d.created_at)}</td>
                    <td>
                      {d.event_type}
                      {d.order_id !== null && (
                        <>
                          {" "}
                          <a href={`#/orders/${d.order_id}`}>order #{d.order_id}</a>
                        </>
                      )}
                      {d.product_id !== null && (
                        <>
                          {" "}
                          <a href={`#/products/${d.product_id}`}>product {d.product_id}</a>
                        </>
                      )}
                    </td>
                    <td class="num">{d.attempt}</td>
                    <td class="num">{d.status ?? "—"}</td>
                    <td class="num">{d.duration_ms == null ? "—" : `${d.duration_ms} ms`}</td>
                    <td>
                      <span class={`badge outcome-${d.outcome}`}>{d.outcome}</span>
                      {d.error && (
                        <>
                          <br />
                          <span class="muted">{d.error}</span>
                        </>
                      )}
                    </td>
                    <td class="row">
                      {d.event_type !== "webhook.test" && (
                        <>
                          <button
                            type="button"
                            aria-expanded={shown === keyOf(d)}
                            aria-controls={`payload-${id}-${keyOf(d)}`}
                            onClick={() => setShown(shown === keyOf(d) ? "" : keyOf(d))}
                          >
                            {shown === keyOf(d) ? "Hide payload" : "Payload"}
                            <span class="sr-only">
                              {" "}
                              of {d.event_type} of {when(d.created_at)}
                            </span>
                          </button>
                          <button type="button" disabled={action.busy} onClick={() => resend(d)}>
                            Resend
                            <span class="sr-only">
                              {" "}
                              {d.event_type} of {when(d.created_at)}
                            </span>
                          </button>
                        </>
                      )}
                    </td>
                  </tr>
                  {shown === keyOf(d) && (
                    <tr class="payload">
                      <td colSpan={7} id={`payload-${id}-${keyOf(d)}`}>
                        <Payload id={id} d={d} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

type EventDelivery = { method: string; url: string; format: string; payload: unknown };

/** What a delivery of the event carries (GET /v1/webhooks/{id}/events/{event_id}), indented. */
function Payload({ id, d }: { id: number; d: Delivery }) {
  const { data, error } = useLoad(
    () => api<EventDelivery>("GET", `/v1/webhooks/${id}/events/${d.event_id}`).then((r) => r.body),
    [id, d.event_id],
  );
  if (error) return <Message error={error} />;
  if (!data) return <p role="status">Loading…</p>;
  return (
    <>
      <p class="hint">
        <code>{data.method}</code> <span class="url">{data.url}</span>
        <br />
        {data.payload === null
          ? "No body: the quickbutik format names the event in the address."
          : "The body as a delivery sends it now (Resend sends this); the order or product is read at each delivery."}
      </p>
      {data.payload !== null && (
        <pre class="json" tabindex={0}>
          {JSON.stringify(data.payload, null, 2)}
        </pre>
      )}
    </>
  );
}

/** The URL as the browser reads it (host case, default port), so two spellings of one URL match. */
const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a.trim()).href === new URL(b.trim()).href;
  } catch {
    return a.trim() === b.trim();
  }
};

function AddEndpoint({ reload, existing }: { reload: () => void; existing: Webhook[] }) {
  const [url, setUrl] = useState("");
  // The endpoint already at this URL, once the merchant was told and has not yet chosen.
  const [twin, setTwin] = useState<Webhook | null>(null);
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState<string[]>([]);
  const [format, setFormat] = useState("standard");
  const [secret, setSecret] = useState("");
  const action = useAction();
  const add = (e: Event | null, again = false) => {
    e?.preventDefault();
    setSecret("");
    // The API takes a URL twice (docs/webhooks.md): say so first, as each event would then arrive twice.
    const same = existing.find((w) => sameUrl(w.url, url));
    if (same && !again) {
      action.clear();
      setTwin(same);
      return;
    }
    setTwin(null);
    action.run(async () => {
      const { body } = await api<{ secret: string }>("POST", "/v1/webhooks", {
        url,
        events: all ? ["*"] : events,
        format,
      });
      setSecret(body.secret);
      setUrl("");
      await reload();
    }, "Endpoint added.");
  };
  return (
    <form class="add" onSubmit={add}>
      <h2>Add an endpoint</h2>
      <div>
        <label for="wh-url">URL (https)</label>
        <input
          id="wh-url"
          type="url"
          required
          value={url}
          onInput={(e) => {
            setUrl(e.currentTarget.value);
            setTwin(null);
          }}
        />
      </div>
      <fieldset>
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Every event
        </label>
        {!all && <CheckList options={EVENTS} value={events} onChange={setEvents} />}
      </fieldset>
      <div>
        <label for="wh-format">Format</label>
        <select id="wh-format" value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          <option value="standard">standard (Standard Webhooks, JSON body)</option>
          <option value="quickbutik">quickbutik (GET with query)</option>
        </select>
      </div>
      {twin ? (
        <div class="msg warn" role="alert">
          <p>
            {twin.url} is already registered (endpoint {twin.id}, {twin.events.join(", ")}, {twin.format}): with a
            second endpoint, each of its events is sent to it twice.
          </p>
          <button type="button" class="danger" disabled={action.busy} onClick={() => add(null, true)}>
            Add it again
          </button>
          <button type="button" onClick={() => setTwin(null)}>
            Keep the one
          </button>
        </div>
      ) : (
        <button type="submit" disabled={action.busy}>
          Add endpoint
        </button>
      )}
      <Message error={action.error} ok={action.ok} />
      {secret && (
        <p class="secret">
          Signing secret, shown this once: store it with the receiver.
          <br />
          <code>{secret}</code> <CopyButton text={secret} />
        </p>
      )}
    </form>
  );
}
