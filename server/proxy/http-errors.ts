// The one mapping from errors to HTTP status and the one error body. Pure, so it is tested alone;
// the error-handler plugin is the only caller.
import type { ErrorCode } from "../../core/errors.ts";
import { isSvcError } from "../../core/errors.ts";

export type HttpErrorCode =
  | ErrorCode
  | "body_too_large"
  | "unsupported_media_type"
  | "mfa_required"
  | "method_not_allowed"
  | "uri_too_long"
  | "headers_too_large"
  | "request_timeout";

/** An HTTP-level refusal with no core error behind it (405, 414). */
export class HttpError extends Error {
  readonly status: number;
  readonly code: HttpErrorCode;
  constructor(status: number, code: HttpErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface ErrorBody {
  error: { code: HttpErrorCode; message: string };
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** true when the cause is ours (5xx): log it, show nothing of it */
  internal: boolean;
}

const statusOf: Record<ErrorCode, number> = {
  bad_parameter: 400,
  not_authenticated: 401,
  access_denied: 403,
  not_found: 404,
  already_exists: 409,
  compare_failed: 409,
  precondition_failed: 412,
  limit_exceeded: 429,
  internal: 500,
  not_implemented: 501,
  unavailable: 503,
};

export function errorBody(code: HttpErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}

/** Fields fastify puts on its own errors (validation, body parsing, limits). */
interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
  message?: unknown;
}

function asFastifyError(err: unknown): FastifyLikeError | undefined {
  return typeof err === "object" && err !== null ? (err as FastifyLikeError) : undefined;
}

export function mapError(err: unknown): MappedError {
  if (isSvcError(err)) {
    const status = statusOf[err.code];
    if (status >= 500 && err.code !== "unavailable" && err.code !== "not_implemented") {
      return { status: 500, body: errorBody("internal", "internal error"), internal: true };
    }
    return { status, body: errorBody(err.code, err.message), internal: status >= 500 };
  }
  if (err instanceof HttpError) {
    return { status: err.status, body: errorBody(err.code, err.message), internal: err.status >= 500 };
  }
  const f = asFastifyError(err);
  const message = typeof f?.message === "string" ? f.message : "";
  if (f?.validation !== undefined) {
    return { status: 400, body: errorBody("bad_parameter", message || "invalid request"), internal: false };
  }
  switch (f?.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, body: errorBody("body_too_large", "request body too large"), internal: false };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        status: 415,
        body: errorBody("unsupported_media_type", "content type must be application/json"),
        internal: false,
      };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { status: 400, body: errorBody("bad_parameter", "empty JSON body"), internal: false };
    case "FST_ERR_BAD_URL":
      return { status: 400, body: errorBody("bad_parameter", "malformed URL"), internal: false };
    case "FST_ERR_MAX_PARAM_LENGTH":
      return { status: 414, body: errorBody("uri_too_long", "URL path segment too long"), internal: false };
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, body: errorBody("bad_parameter", "malformed JSON body"), internal: false };
  }
  // JSON.parse errors from the body parser carry statusCode 400 and a SyntaxError message.
  if (err instanceof SyntaxError || (f?.statusCode === 400 && message.includes("JSON"))) {
    return { status: 400, body: errorBody("bad_parameter", "malformed JSON body"), internal: false };
  }
  if (typeof f?.statusCode === "number" && f.statusCode >= 400 && f.statusCode < 500) {
    const code: HttpErrorCode =
      f.statusCode === 401
        ? "not_authenticated"
        : f.statusCode === 403
          ? "access_denied"
          : f.statusCode === 404
            ? "not_found"
            : f.statusCode === 413
              ? "body_too_large"
              : f.statusCode === 429
                ? "limit_exceeded"
                : "bad_parameter";
    return { status: f.statusCode, body: errorBody(code, message || "bad request"), internal: false };
  }
  return { status: 500, body: errorBody("internal", "internal error"), internal: true };
}

/**
 * The answer to an error node's HTTP parser raises before fastify sees a request (bad framing,
 * headers over 16 KiB, a request that took too long): our body, then the connection closes.
 */
export function clientErrorResponse(errCode: unknown): string {
  const [status, code, message]: [number, HttpErrorCode, string] =
    errCode === "HPE_HEADER_OVERFLOW"
      ? [431, "headers_too_large", "request headers too large"]
      : errCode === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "request_timeout", "request not received in time"]
        : [400, "bad_parameter", "malformed HTTP request"];
  const body = JSON.stringify(errorBody(code, message));
  const reason =
    status === 431 ? "Request Header Fields Too Large" : status === 408 ? "Request Timeout" : "Bad Request";
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
