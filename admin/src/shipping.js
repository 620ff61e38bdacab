// Shipping: the store's shipping methods (src/docs/storefront.md, "Shipping methods"), which a
// storefront's orders name and pay; list them, add one, change one's price, free-over amount,
// countries or visibility, delete one.
import { useState } from "preact/hooks";
import { api } from "./api.js";
import { html, Message, money, Title, useAction, useLoad } from "./ui.js";

/** "se, no" as ["SE", "NO"]; "" as [] (ships anywhere). */
const countryList = (text) =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((c) => c.toUpperCase());

/** The form's fields as the API's body: money as typed (the API reads "49.50"). */
const bodyOf = (f) => ({
  name: f.name,
  price: f.price,
  free_over: f.free_over === "" ? null : f.free_over,
  countries: countryList(f.countries),
  visible: f.visible,
});

const formOf = (m) => ({
  name: m?.name ?? "",
  price: m ? String(m.price) : "",
  free_over: m?.free_over == null ? "" : String(m.free_over),
  countries: m ? m.countries.join(", ") : "",
  visible: m?.visible ?? true,
});

export function ShippingPage() {
  const { data, error, reload } = useLoad(
    () => api("GET", "/v1/shipping-methods").then((r) => r.body.shipping_methods),
    [],
  );
  return html`<${Title}>Shipping<//>
    <p>What a storefront's order can pick, at these prices. Hidden methods are not offered to storefronts.</p>
    <${Message} error=${error} />
    ${
      data &&
      html`${data.length === 0 && html`<p>No shipping methods yet.</p>`}
      <ul class="cards">
        ${data.map((m) => html`<li class="card"><${Method} key=${m.updated_at} m=${m} reload=${reload} /></li>`)}
      </ul>`
    }
    <${MethodForm} id="new" title="Add a shipping method" submit="Add method" done="Method added." reload=${reload} />`;
}

function Method({ m, reload }) {
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const action = useAction();
  const remove = () =>
    action.run(async () => {
      await api("DELETE", `/v1/shipping-methods/${m.id}`);
      await reload();
    }, "Deleted.");
  return html`<h2>${m.name}</h2>
    <p>
      <span class=${`badge ${m.visible ? "status-paid" : "status-cancelled"}`}>${m.visible ? "visible" : "hidden"}</span>
      ${" "}${money(m.price)}${m.free_over != null && ` · free from ${money(m.free_over)}`}
      ${" · "}${m.countries.length ? m.countries.join(", ") : "all countries"}
    </p>
    <${Message} error=${action.error} ok=${action.ok} />
    ${
      editing
        ? html`<${MethodForm} id=${`m${m.id}`} m=${m} title=${`Change ${m.name}`} submit="Save" done="Saved." reload=${reload}
            onDone=${() => setEditing(false)} />`
        : html`<div class="row">
          <button type="button" onClick=${() => setEditing(true)}>Change…</button>
          ${
            confirm
              ? html`<span>Delete ${m.name}? Past orders keep what they were charged.</span>
                <button type="button" class="danger" disabled=${action.busy} onClick=${remove}>Delete</button>
                <button type="button" onClick=${() => setConfirm(false)}>Keep</button>`
              : html`<button type="button" class="danger" onClick=${() => setConfirm(true)}>Delete…</button>`
          }
        </div>`
    }`;
}

function MethodForm({ id, m, title, submit, done, reload, onDone }) {
  const [f, setF] = useState(formOf(m));
  const action = useAction();
  const set = (k) => (e) =>
    setF({ ...f, [k]: e.currentTarget.type === "checkbox" ? e.currentTarget.checked : e.currentTarget.value });
  const save = (e) => {
    e.preventDefault();
    action.run(async () => {
      if (m) await api("PATCH", `/v1/shipping-methods/${m.id}`, bodyOf(f));
      else await api("POST", "/v1/shipping-methods", bodyOf(f));
      if (!m) setF(formOf());
      await reload();
      onDone?.();
    }, done);
  };
  return html`<form class="add" onSubmit=${save}>
    <h2>${title}</h2>
    <div><label for=${`${id}-name`}>Name</label>
      <input id=${`${id}-name`} required maxlength="255" value=${f.name} onInput=${set("name")} /></div>
    <div><label for=${`${id}-price`}>Price</label>
      <input id=${`${id}-price`} required inputmode="decimal" value=${f.price} onInput=${set("price")} /></div>
    <div><label for=${`${id}-free`}>Free from (empty: never free)</label>
      <input id=${`${id}-free`} inputmode="decimal" value=${f.free_over} onInput=${set("free_over")} /></div>
    <div><label for=${`${id}-countries`}>Countries (two-letter codes; empty: all)</label>
      <input id=${`${id}-countries`} value=${f.countries} onInput=${set("countries")} /></div>
    <label class="check"><input type="checkbox" checked=${f.visible} onChange=${set("visible")} /> Offered to storefronts</label>
    <button type="submit" disabled=${action.busy}>${submit}</button>
    <${Message} error=${action.error} ok=${action.ok} />
  </form>`;
}
