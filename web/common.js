// Shared by the pages: calls to the web API with the session cookie (and the CSRF token on
// state-changing requests), and the way back to the login page when the session is gone.

/** The __Host-svc_csrf cookie (readable by design: it is derived from, not equal to, the session id). */
export function csrfToken() {
  const m = /(?:^|;\s*)__Host-svc_csrf=([^;]+)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : "";
}

export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    /** the parsed error body (a 401 mfa_required also carries `mfa`) */
    this.body = body;
  }
}

export async function api(path, { method = "GET", body } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && method !== "HEAD") headers["x-csrf-token"] = csrfToken();
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.ok) return res;
  let code = "internal";
  let message = `HTTP ${res.status}`;
  let errorBody;
  try {
    errorBody = await res.json();
    code = errorBody?.error?.code ?? code;
    message = errorBody?.error?.message ?? message;
  } catch {
    // not JSON: keep the status line
  }
  throw new ApiError(res.status, code, message, errorBody);
}

/** Sends the browser to the login page, coming back here afterwards. */
export function toLogin() {
  const next = location.pathname + location.search;
  location.assign(`/web/login?next=${encodeURIComponent(next)}`);
}

export function setStatus(el, state, text) {
  el.dataset.state = state;
  el.textContent = text;
}
