// `svc login --auth <connector>`: single sign-on for a CLI as RFC 8252 says. A loopback listener
// on 127.0.0.1 (ephemeral port) receives the browser at the end; a PKCE-style verifier whose
// SHA-256 went to the proxy at the start proves that the one-time code it receives is ours to
// exchange, so a code planted by someone else on the loopback port is useless to them and to us.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { NotAuthenticatedError } from "../core/errors.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { type ProxyTarget, proxyCall } from "./proxy-client.ts";

export interface SsoSession {
  session_id: string;
  expires_at: string;
  scope?: string;
}

export interface SsoLoginOptions {
  target: ProxyTarget;
  connector: string;
  /** how long to wait for the browser */
  timeoutMs: number;
  /** false: only print the URL */
  openBrowser: boolean;
  /** where the URL and progress go (stderr) */
  say: (line: string) => void;
}

/** The PKCE pair: 32 random bytes as the verifier, base64url(SHA-256(verifier)) as the challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

/** Answers a small page; resolves once it is handed to the socket. */
function page(res: ServerResponse, status: number, title: string, text: string): Promise<void> {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p id="message">${escapeHtml(text)}</p></body></html>\n`;
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    connection: "close",
  });
  return new Promise((resolve) => res.end(body, () => resolve()));
}

/**
 * Opens `url` in the user's browser when there is one: $BROWSER, else `open` on macOS, else
 * xdg-open where a desktop session runs. Never fails: the URL is printed in any case.
 */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  let command: string | undefined;
  if (env["BROWSER"]) command = env["BROWSER"];
  else if (process.platform === "darwin") command = "open";
  // Without a display, xdg-open may start a text browser on this very terminal.
  else if (env["DISPLAY"] || env["WAYLAND_DISPLAY"]) command = "xdg-open";
  if (command === undefined) return false;
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

interface Loopback {
  server: Server;
  redirectUrl: string;
  /** resolves with the code the browser brings, rejects on the provider's error */
  code: Promise<Arrival>;
}

interface Arrival {
  code: string;
  /** the page for the browser; resolves once written */
  answer: (ok: boolean, text: string) => Promise<void>;
}

/** The listener the browser comes back to; only GET /callback, only the first arrival counts. */
async function listenLoopback(): Promise<Loopback> {
  let settled = false;
  let resolveCode: (v: Arrival) => void = () => {};
  let rejectCode: (err: Error) => void = () => {};
  const code = new Promise<Arrival>((res, rej) => {
    resolveCode = res;
    rejectCode = rej;
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/callback") {
      void page(res, 404, "Not found", "This address only receives the end of an svc sign-in.");
      return;
    }
    if (settled) {
      void page(res, 410, "Already used", "This sign-in has already finished; look at your terminal.");
      return;
    }
    const error = url.searchParams.get("error");
    const got = url.searchParams.get("code");
    if (error !== null || got === null || !/^[A-Za-z0-9_-]{16,128}$/.test(got)) {
      settled = true;
      const why = new NotAuthenticatedError(
        `the browser came back without a sign-in code${error ? ` (${error.slice(0, 64)})` : ""}`,
      );
      void page(res, 400, "Sign-in failed", "The sign-in did not complete; look at your terminal.").then(() =>
        rejectCode(why),
      );
      return;
    }
    settled = true;
    resolveCode({
      code: got,
      answer: (ok, text) => page(res, ok ? 200 : 401, ok ? "Signed in" : "Sign-in failed", text),
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, redirectUrl: `http://127.0.0.1:${port}/callback`, code };
}

/** The whole CLI flow; answers the session exactly as POST /v1/webapi/login does. */
export async function ssoLogin(o: SsoLoginOptions): Promise<SsoSession> {
  const { verifier, challenge } = pkcePair();
  const loopback = await listenLoopback();
  let timer: NodeJS.Timeout | undefined;
  try {
    const started = await proxyCall<{ request_id: string; login_url: string; expires_at: string }>(
      o.target,
      "POST",
      `/v1/webapi/sso/${encodeURIComponent(o.connector)}/cli`,
      { body: { redirect_url: loopback.redirectUrl, code_challenge: challenge } },
    );
    o.say(`To sign in through ${o.connector}, open this URL in a browser:\n\n  ${started.login_url}\n`);
    if (o.openBrowser && openInBrowser(started.login_url)) o.say("(opening it in your browser)");
    o.say(
      `Waiting up to ${Math.round(o.timeoutMs / 1000)} s for the browser to come back to ${loopback.redirectUrl} ...`,
    );
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new CliError(
              `the browser did not finish the sign-in within ${Math.round(o.timeoutMs / 1000)} s (--timeout)`,
              EXIT.notLoggedIn,
            ),
          ),
        o.timeoutMs,
      );
    });
    const arrived = await Promise.race([loopback.code, timeout]);
    try {
      const session = await proxyCall<SsoSession>(o.target, "POST", "/v1/webapi/sso/exchange", {
        body: { code: arrived.code, code_verifier: verifier },
      });
      await arrived.answer(
        true,
        "You are signed in to svc. You may close this tab and go back to your terminal.",
      );
      return session;
    } catch (err) {
      await arrived.answer(false, "The sign-in could not be completed; look at your terminal.");
      throw err;
    }
  } finally {
    clearTimeout(timer);
    // The answer page is written by now; a browser's spare (pre-connected) sockets would
    // otherwise hold the process until their timeout.
    await new Promise<void>((resolve) => {
      loopback.server.close(() => resolve());
      loopback.server.closeAllConnections();
    });
  }
}
