// The admin's shell: sign-in, the navigation between its pages, sign-out (src/docs/admin.md).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can, currentSession, signIn, signOut, whenSignedOut } from "./api.js";
import { KeysPage } from "./keys.js";
import { OrderPage, OrdersPage } from "./orders.js";
import { ProductPage, ProductsPage } from "./products.js";
import { html, Message, Title, useRoute } from "./ui.js";
import { WebhooksPage } from "./webhooks.js";

const PAGES = [
  { id: "orders", label: "Orders", scope: "orders:read" },
  { id: "products", label: "Products", scope: "products:read" },
  { id: "webhooks", label: "Webhooks", scope: "webhooks" },
  { id: "keys", label: "Keys", scope: "keys" },
];

function SignIn({ notice, onIn }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await signIn(key);
      setKey("");
      onIn();
    } catch (err) {
      setError(err.status === 401 ? "That key is not a live secret key of this store." : err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="signin">
    <${Title}>Sign in to the store admin<//>
    ${notice && html`<p class="msg" role="status">${notice}</p>`}
    <form onSubmit=${submit}>
      <label for="key">Secret key</label>
      <input id="key" name="key" type="password" autocomplete="off" required value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)} />
      <p class="hint">The environment's API_KEY, or a stored sk_ key. It is exchanged for a session and not kept in this browser.</p>
      <button type="submit" disabled=${busy}>Sign in</button>
      <${Message} error=${error} />
    </form>
  </main>`;
}

function Shell({ session, onOut }) {
  const [page, id] = useRoute();
  const pages = PAGES.filter((p) => can(p.scope));
  const [error, setError] = useState("");
  const out = async () => {
    try {
      await signOut();
    } catch (e) {
      setError(e.message);
    }
    onOut("Signed out.");
  };
  let body;
  if (!pages.some((p) => p.id === page)) body = html`<${Title}>Not a page<//><p>Pick one in the menu.</p>`;
  else if (page === "orders") body = id ? html`<${OrderPage} key=${id} id=${id} />` : html`<${OrdersPage} />`;
  else if (page === "products") body = id ? html`<${ProductPage} key=${id} id=${id} />` : html`<${ProductsPage} />`;
  else if (page === "webhooks") body = html`<${WebhooksPage} />`;
  else body = html`<${KeysPage} />`;
  return html`<header class="top">
      <a class="brand" href="#/orders">edge-store admin</a>
      <nav aria-label="Pages">
        <ul>
          ${pages.map(
            (p) =>
              html`<li><a href=${`#/${p.id}`} aria-current=${p.id === page ? "page" : undefined}>${p.label}</a></li>`,
          )}
        </ul>
      </nav>
      <div class="who">
        <span>${session.key.name}</span>
        <button type="button" class="link" onClick=${out}>Sign out</button>
      </div>
    </header>
    <main id="main">${body}<${Message} error=${error} /></main>`;
}

function App() {
  const [session, setSession] = useState(currentSession);
  const [notice, setNotice] = useState("");
  useEffect(
    () =>
      whenSignedOut((why) => {
        setNotice(why);
        setSession(null);
      }),
    [],
  );
  if (!session) return html`<${SignIn} notice=${notice} onIn=${() => setSession(currentSession())} />`;
  return html`<${Shell}
    session=${session}
    onOut=${(why) => {
      setNotice(why);
      setSession(null);
    }}
  />`;
}

const root = document.getElementById("app");
root.textContent = ""; // the "Loading" line of index.html
render(html`<${App} />`, root);
