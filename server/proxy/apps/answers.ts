// What the app hosts' server answers by itself, and the request target as it checks it: the
// proxy's one JSON error body, an answer on a socket that asked for an upgrade (no response object
// exists there), and the normalized path the /x-svc/ check and the forwarder both use.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { isSvcError } from "../../../core/errors.ts";
import { type HttpErrorCode, mapError } from "../http-errors.ts";

export type Answer = { status: number; headers?: Record<string, string | string[]>; body?: unknown };

export function answerOf(err: unknown): Answer {
  if (isSvcError(err)) {
    const m = mapError(err);
    return { status: m.status, body: m.body };
  }
  return json(500, "internal", "internal error");
}

/** The proxy's one error body; "bad_gateway" is the app forwarder's own code (upstream down). */
export function json(status: number, code: HttpErrorCode | "bad_gateway", message: string): Answer {
  return { status, body: { error: { code, message } } };
}

/**
 * Rewrites req.url to its normalized path and query (dot segments resolved, as the forwarder would
 * send it) and returns the path: what is checked against /x-svc/ is what the app would get.
 * Undefined for a target that is not a path (absolute-form, "*").
 */
export function normalizeTarget(req: IncomingMessage): string | undefined {
  const raw = req.url ?? "";
  if (!raw.startsWith("/")) return undefined;
  let url: URL;
  try {
    url = new URL(raw.startsWith("//") ? `https://app.invalid${raw}` : raw, "https://app.invalid");
  } catch {
    return undefined;
  }
  req.url = `${url.pathname}${url.search}`;
  return url.pathname;
}

export function hostWithoutPort(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1);
  const colon = h.lastIndexOf(":");
  return colon < 0 ? h : h.slice(0, colon);
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  421: "Misdirected Request",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/** An answer on a socket that asked for an upgrade (no ServerResponse exists), then closed. */
export function writeRaw(socket: Duplex, a: Answer): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = a.body === undefined ? "" : JSON.stringify(a.body);
  socket.end(
    `HTTP/1.1 ${a.status} ${REASONS[a.status] ?? "Error"}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
