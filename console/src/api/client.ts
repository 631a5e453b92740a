// The console's one way to the web API: an openapi-fetch client typed by schema.d.ts (generated
// from the proxy's OpenAPI document, so an API change breaks the build). It sends the session
// cookie, the CSRF token on every state-changing request, and on a 401 sends the user to
// sign-in with the current page kept in `next`.
import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema.d.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Set once this page had a session: a 401 after that means it ended, before it, none existed. */
export const sessionSeen = { value: false };

/** The __Host-svc_csrf cookie (readable by design: derived from the session id, not equal to it). */
export function csrfToken(): string {
  const m = /(?:^|;\s*)__Host-svc_csrf=([^;]+)/.exec(document.cookie);
  return m?.[1] ? decodeURIComponent(m[1]) : "";
}

/** Only our own console pages are places to come back to (never an outside address). */
export function safeNext(next: string | null | undefined): string {
  return next && (/^\/web\/[^/\\]/.test(next) || next === "/web/") ? next : "/web/nodes";
}

/** The sign-in page, coming back to the current page afterwards. */
export function loginUrl(reason?: "expired"): string {
  const params = new URLSearchParams({ next: location.pathname + location.search });
  if (reason) params.set("reason", reason);
  return `/web/login?${params}`;
}

export function toLogin(reason?: "expired"): void {
  if (location.pathname === "/web/login" || location.pathname === "/web/reset") return;
  location.assign(loginUrl(reason));
}

/** The web API's error body, with the status and the Retry-After of a 429. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: unknown;
  readonly retryAfter: number | undefined;
  constructor(status: number, code: string, message: string, body: unknown, retryAfter?: number) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (!SAFE.has(request.method)) request.headers.set("x-csrf-token", csrfToken());
    return request;
  },
  onResponse({ request, response }) {
    // A 401 on sign-in itself is a wrong password or the MFA step, not an ended session.
    const signingIn = /\/v1\/webapi\/(login|mfa\/webauthn\/login)/.test(new URL(request.url).pathname);
    if (response.status === 401 && !signingIn) toLogin(sessionSeen.value ? "expired" : undefined);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: "same-origin" });
api.use(csrf);

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Unwraps an openapi-fetch answer: the data, or an ApiError carrying the error body. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && error === undefined) return data as T;
  const body = error as { error?: { code?: string; message?: string } } | undefined;
  const retry = Number(response.headers.get("retry-after"));
  throw new ApiError(
    response.status,
    body?.error?.code ?? "internal",
    body?.error?.message ?? `HTTP ${response.status}`,
    error,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/** A message for a person: what happened and, where it helps, what to do. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429) {
      const wait = err.retryAfter ? ` Try again in ${err.retryAfter} s.` : " Try again shortly.";
      return `Too many attempts.${wait}`;
    }
    if (err.status === 403 && err.code === "access_denied") return `Not allowed: ${err.message}`;
    return err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}
