// The sign-in page: password login (POST /v1/webapi/login), a button per SSO connector (each
// goes to the proxy's /v1/webapi/sso/<name>/login), and the WebAuthn step that follows either
// when the user's roles require it. The session arrives as HttpOnly cookies; the page then goes to
// `next` when it is one of our own /web/ pages (never an outside address).
import { api } from "./common.js";

const form = document.getElementById("login");
const connectors = document.getElementById("connectors");
const mfa = document.getElementById("mfa");
const error = document.getElementById("error");

function nextPage() {
  const next = new URLSearchParams(location.search).get("next") ?? "";
  return /^\/web\/[^/\\]/.test(next) || next === "/web/" ? next : "/web/";
}

const fromB64u = (s) =>
  Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const toB64u = (buf) =>
  btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** navigator.credentials.get() for PublicKeyCredentialRequestOptionsJSON; the answer as JSON. */
async function assertWithSecurityKey(options) {
  const publicKey = {
    ...options,
    challenge: fromB64u(options.challenge),
    allowCredentials: (options.allowCredentials ?? []).map((c) => ({ ...c, id: fromB64u(c.id) })),
  };
  const cred = await navigator.credentials.get({ publicKey });
  const r = cred.response;
  return {
    id: cred.id,
    rawId: toB64u(cred.rawId),
    type: cred.type,
    response: {
      clientDataJSON: toB64u(r.clientDataJSON),
      authenticatorData: toB64u(r.authenticatorData),
      signature: toB64u(r.signature),
      ...(r.userHandle ? { userHandle: toB64u(r.userHandle) } : {}),
    },
    clientExtensionResults: cred.getClientExtensionResults(),
    ...(cred.authenticatorAttachment ? { authenticatorAttachment: cred.authenticatorAttachment } : {}),
  };
}

/**
 * The WebAuthn step: a challenge (given, or fresh from the MFA token), the key's answer, then the
 * session, or for a CLI's SSO login the way back to the CLI.
 */
async function webauthnStep({ mfaToken, challengeId, options, ssoRequest }) {
  if (challengeId === undefined) {
    const c = await (
      await api("/v1/webapi/mfa/webauthn/login/begin", { method: "POST", body: { mfa_token: mfaToken } })
    ).json();
    challengeId = c.challenge_id;
    options = c.webauthn;
  }
  const credential = await assertWithSecurityKey(options);
  const body = { challenge_id: challengeId, credential, ...(ssoRequest ? { sso_request: ssoRequest } : {}) };
  const done = await (await api("/v1/webapi/mfa/webauthn/login/finish", { method: "POST", body })).json();
  // Only the CLI's loopback listener: the proxy checked it, and so do we.
  if (typeof done.redirect_url === "string") {
    if (!/^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):\d{1,5}\//.test(done.redirect_url))
      throw new Error("unexpected redirect");
    location.assign(done.redirect_url);
    return;
  }
  location.assign(nextPage());
}

function showError(err) {
  error.textContent = err?.message ?? String(err);
}

/** MFA after SSO arrives in the fragment (never sent to a server): #sso_mfa=<token>&sso_request=<id>. */
function ssoFragment() {
  const h = new URLSearchParams(location.hash.slice(1));
  // Read once: a reload must not replay it, and the token should not linger in the address bar.
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  return { mfaToken: h.get("sso_mfa"), ssoRequest: h.get("sso_request"), ssoError: h.get("sso_error") };
}

async function runSsoMfa(mfaToken, ssoRequest) {
  form.hidden = true;
  connectors.hidden = true;
  mfa.hidden = false;
  const attempt = async () => {
    error.textContent = "";
    try {
      await webauthnStep({ mfaToken, ssoRequest: ssoRequest ?? undefined });
    } catch (err) {
      showError(err);
    }
  };
  document.getElementById("mfa-retry").addEventListener("click", attempt);
  await attempt();
}

async function showConnectors() {
  const [ping, list] = await Promise.all([
    api("/v1/webapi/ping").then((r) => r.json()),
    api("/v1/webapi/connectors/public").then((r) => r.json()),
  ]);
  // auth.local_login false: auth refuses passwords, so do not offer the form.
  // The first administrator keeps a password (auth.first_admin) so that a broken identity
  // provider never locks everyone out: a link shows the form on demand.
  if (ping.auth?.local_login === false && location.hash !== "#password") {
    form.hidden = true;
    const link = document.getElementById("password-link");
    link.hidden = false;
    link.querySelector("a").addEventListener("click", () => {
      form.hidden = false;
      link.hidden = true;
    });
  }
  for (const c of list.items ?? []) {
    const a = document.createElement("a");
    a.className = "connector";
    a.dataset.connector = c.name;
    a.textContent = `Sign in with ${c.display_name || c.name}`;
    a.href = `/v1/webapi/sso/${encodeURIComponent(c.name)}/login?redirect_url=${encodeURIComponent(nextPage())}`;
    connectors.append(a);
  }
  connectors.hidden = connectors.childElementCount === 0;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const username = document.getElementById("username").value;
  const password = document.getElementById("password").value;
  try {
    await api("/v1/webapi/login", { method: "POST", body: { username, password } });
    location.assign(nextPage());
  } catch (err) {
    if (err.code === "mfa_required" && err.body?.mfa) {
      const m = err.body.mfa;
      try {
        await webauthnStep({ challengeId: m.challenge_id, options: m.webauthn });
      } catch (e) {
        showError(e);
      }
      return;
    }
    showError(err);
  }
});

const { mfaToken, ssoRequest, ssoError } = ssoFragment();
if (ssoError) error.textContent = `Single sign-on failed: ${ssoError}`;
if (mfaToken) runSsoMfa(mfaToken, ssoRequest);
else showConnectors().catch(showError);
