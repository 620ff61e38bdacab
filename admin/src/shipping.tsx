// Shipping: the store's shipping methods (docs/storefront.md, "Shipping methods"), which a
// storefront's orders name and pay; list them, add one, change one's price, free-over amount,
// countries or visibility, delete one.
import { useState } from "preact/hooks";
import { api, currentSession } from "./api";
import { ConfirmButton, Message, money, parseMoney, Title, useAction, useDirty, useLoad } from "./ui";

type Method = {
  id: number;
  name: string;
  price: number;
  free_over: number | null;
  countries: string[];
  visible: boolean;
  updated_at: string;
};
type Form = { name: string; price: string; free_over: string; countries: string; visible: boolean };

/** "se, no" as ["SE", "NO"]; "" as [] (ships anywhere). */
const countryList = (text: string) =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((c) => c.toUpperCase());

/** The form's fields as the API's body: money as typed, with a decimal comma or point. */
const bodyOf = (f: Form) => ({
  name: f.name,
  price: parseMoney(f.price) ?? f.price,
  free_over: f.free_over === "" ? null : (parseMoney(f.free_over) ?? f.free_over),
  countries: countryList(f.countries),
  visible: f.visible,
});

const formOf = (m?: Method): Form => ({
  name: m?.name ?? "",
  price: m ? String(m.price) : "",
  free_over: m?.free_over == null ? "" : String(m.free_over),
  countries: m ? m.countries.join(", ") : "",
  visible: m?.visible ?? true,
});

const LABELS: Record<string, string> = { name: "Name", price: "Price", free_over: "Free from", countries: "Countries" };

export function ShippingPage() {
  const { data, error, reload } = useLoad(
    () => api<{ shipping_methods: Method[] }>("GET", "/v1/shipping-methods").then((r) => r.body.shipping_methods),
    [],
  );
  return (
    <>
      <Title>Shipping</Title>
      <p>What a storefront's order can pick, at these prices. Hidden methods are not offered to storefronts.</p>
      <Message error={error} />
      {data && (
        <>
          {data.length === 0 && <p>No shipping methods yet.</p>}
          <ul class="cards">
            {data.map((m) => (
              <li class="card" key={m.updated_at}>
                <MethodCard m={m} reload={reload} />
              </li>
            ))}
          </ul>
        </>
      )}
      {can() && (
        <MethodForm id="new" title="Add a shipping method" submit="Add method" done="Method added." reload={reload} />
      )}
    </>
  );
}

/** Managing methods takes orders:write; reading them orders:read. */
const can = () => currentSession()?.key.scopes.includes("orders:write") ?? false;

function MethodCard({ m, reload }: { m: Method; reload: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const currency = currentSession()?.currency ?? "";
  const remove = () =>
    action.run(async () => {
      await api("DELETE", `/v1/shipping-methods/${m.id}`);
      await reload();
    }, "Deleted.");
  return (
    <>
      <h2>{m.name}</h2>
      <p>
        <span class={`badge ${m.visible ? "status-paid" : "status-cancelled"}`}>
          {m.visible ? "visible" : "hidden"}
        </span>{" "}
        {money(m.price, currency)}
        {m.free_over != null && ` · free from ${money(m.free_over, currency)}`}
        {" · "}
        {m.countries.length ? m.countries.join(", ") : "all countries"}
      </p>
      <Message error={action.error} ok={action.ok} />
      {!can() ? null : editing ? (
        <MethodForm
          id={`m${m.id}`}
          m={m}
          title={`Change ${m.name}`}
          submit="Save"
          done="Saved."
          reload={reload}
          onDone={() => setEditing(false)}
        />
      ) : (
        <div class="row">
          <button type="button" onClick={() => setEditing(true)}>
            Change…
          </button>
          <ConfirmButton
            label="Delete"
            action="Delete"
            question={`Delete ${m.name}? Past orders keep what they were charged.`}
            busy={action.busy}
            onConfirm={remove}
          />
        </div>
      )}
    </>
  );
}

function MethodForm(props: {
  id: string;
  m?: Method;
  title: string;
  submit: string;
  done: string;
  reload: () => Promise<void>;
  onDone?: () => void;
}) {
  const { id, m, title, submit, done, reload, onDone } = props;
  const [f, setF] = useState(formOf(m));
  const action = useAction();
  useDirty(JSON.stringify(f) !== JSON.stringify(formOf(m)));
  const set = (k: keyof Form) => (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    setF({ ...f, [k]: input.type === "checkbox" ? input.checked : input.value });
  };
  const save = (e: Event) => {
    e.preventDefault();
    action.run(
      async () => {
        if (m) await api("PATCH", `/v1/shipping-methods/${m.id}`, bodyOf(f));
        else await api("POST", "/v1/shipping-methods", bodyOf(f));
        if (!m) setF(formOf());
        await reload();
        onDone?.();
      },
      done,
      (path) => LABELS[path.split(/[.[]/)[0]],
    );
  };
  return (
    <form class="add" onSubmit={save}>
      <h2>{title}</h2>
      <div>
        <label for={`${id}-name`}>Name</label>
        <input id={`${id}-name`} required maxLength={255} value={f.name} onInput={set("name")} />
      </div>
      <div>
        <label for={`${id}-price`}>Price</label>
        <input id={`${id}-price`} required inputMode="decimal" value={f.price} onInput={set("price")} />
      </div>
      <div>
        <label for={`${id}-free`}>Free from (empty: never free)</label>
        <input id={`${id}-free`} inputMode="decimal" value={f.free_over} onInput={set("free_over")} />
      </div>
      <div>
        <label for={`${id}-countries`}>Countries (two-letter codes; empty: all)</label>
        <input id={`${id}-countries`} value={f.countries} onInput={set("countries")} />
      </div>
      <label class="check">
        <input type="checkbox" checked={f.visible} onChange={set("visible")} /> Offered to storefronts
      </label>
      <button type="submit" disabled={action.busy}>
        {submit}
      </button>
      <Message error={action.error} ok={action.ok} />
    </form>
  );
}
