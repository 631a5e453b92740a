// The message framing of /v1/webapi/ssh/connect (docs/terminal.md). Binary frames carry terminal
// bytes untouched in both directions; text frames carry small JSON control messages. Keeping data
// out of JSON makes the stream binary-safe and costs no encoding on the hot path.
import type { ErrorCode } from "../../core/errors.ts";
import { BadParameterError, isSvcError } from "../../core/errors.ts";

/** Browser -> proxy control messages. */
export type ClientControl = { type: "resize"; cols: number; rows: number } | { type: "close" };

/** Proxy -> browser control messages. */
export type ServerControl =
  | { type: "ready"; node: string; login: string }
  | { type: "error"; code: ErrorCode; message: string }
  | { type: "exit"; code: number | null; signal?: string };

export const MAX_COLS = 1000;
export const MAX_ROWS = 1000;
/** A control message is tiny; anything longer is refused before JSON.parse. */
const MAX_CONTROL_BYTES = 1024;

/** WebSocket close codes: 1000 for a normal end, 4000 + HTTP-like status for a refusal. */
export const CLOSE_NORMAL = 1000;
const closeCodeByError: Record<ErrorCode, number> = {
  bad_parameter: 4400,
  not_authenticated: 4401,
  access_denied: 4403,
  not_found: 4404,
  already_exists: 4409,
  compare_failed: 4409,
  precondition_failed: 4412,
  limit_exceeded: 4429,
  internal: 4500,
  not_implemented: 4501,
  unavailable: 4503,
};

export function closeCodeOf(code: ErrorCode): number {
  return closeCodeByError[code];
}

function dimension(v: unknown, max: number, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) {
    throw new BadParameterError(`${what} must be an integer in 1..${max}`);
  }
  return v;
}

/** Parses one text frame from the browser; throws BadParameterError on anything unexpected. */
export function parseClientControl(text: Buffer | string): ClientControl {
  if (text.length > MAX_CONTROL_BYTES) throw new BadParameterError("control message too long");
  let v: unknown;
  try {
    v = JSON.parse(typeof text === "string" ? text : text.toString("utf8"));
  } catch {
    throw new BadParameterError("control message is not JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new BadParameterError("control message must be an object");
  }
  const m = v as Record<string, unknown>;
  switch (m["type"]) {
    case "resize":
      return {
        type: "resize",
        cols: dimension(m["cols"], MAX_COLS, "cols"),
        rows: dimension(m["rows"], MAX_ROWS, "rows"),
      };
    case "close":
      return { type: "close" };
    default:
      throw new BadParameterError("unknown control message type");
  }
}

/**
 * The error frame for a failure: typed errors keep their code and message (they are written for
 * users); anything else is reported as "internal" without details.
 */
export function errorControl(err: unknown): Extract<ServerControl, { type: "error" }> {
  if (isSvcError(err) && err.code !== "internal")
    return { type: "error", code: err.code, message: err.message };
  return { type: "error", code: "internal", message: "internal error" };
}

export function encodeControl(msg: ServerControl): string {
  return JSON.stringify(msg);
}
