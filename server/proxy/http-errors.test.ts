import { describe, expect, it } from "vitest";
import {
  AccessDeniedError,
  AlreadyExistsError,
  BadParameterError,
  CompareFailedError,
  LimitExceededError,
  NotAuthenticatedError,
  NotFoundError,
  SvcError,
  UnavailableError,
} from "../../core/errors.ts";
import { clientErrorResponse, HttpError, mapError } from "./http-errors.ts";

describe("mapError", () => {
  it.each([
    [new BadParameterError("bad"), 400, "bad_parameter"],
    [new NotAuthenticatedError(), 401, "not_authenticated"],
    [new AccessDeniedError(), 403, "access_denied"],
    [new NotFoundError("no"), 404, "not_found"],
    [new AlreadyExistsError("dup"), 409, "already_exists"],
    [new CompareFailedError("race"), 409, "compare_failed"],
    [new LimitExceededError("slow down"), 429, "limit_exceeded"],
    [new UnavailableError("down"), 503, "unavailable"],
  ])("maps %s", (err, status, code) => {
    const m = mapError(err);
    expect(m.status).toBe(status);
    expect(m.body).toEqual({ error: { code, message: err.message } });
  });

  it("hides internals of unknown and internal errors", () => {
    for (const err of [new Error("db password=hunter2"), new SvcError("internal", "stack at x"), "boom"]) {
      const m = mapError(err);
      expect(m).toEqual({
        status: 500,
        body: { error: { code: "internal", message: "internal error" } },
        internal: true,
      });
    }
  });

  it("maps fastify's own errors", () => {
    expect(mapError({ code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413, message: "x" }).status).toBe(413);
    expect(mapError({ code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415, message: "x" }).status).toBe(
      415,
    );
    expect(
      mapError({ validation: [], statusCode: 400, message: "body/username must be string" }).body,
    ).toEqual({
      error: { code: "bad_parameter", message: "body/username must be string" },
    });
    expect(
      mapError(Object.assign(new SyntaxError("Unexpected token"), { statusCode: 400 })).body.error.message,
    ).toBe("malformed JSON body");
  });

  it("maps the framework's URL errors and HTTP-level refusals", () => {
    expect(mapError({ code: "FST_ERR_BAD_URL", statusCode: 400, message: "x" }).body.error.code).toBe(
      "bad_parameter",
    );
    expect(mapError({ code: "FST_ERR_MAX_PARAM_LENGTH", statusCode: 414, message: "x" }).status).toBe(414);
    expect(mapError(new HttpError(405, "method_not_allowed", "no")).body).toEqual({
      error: { code: "method_not_allowed", message: "no" },
    });
  });

  it("answers node's parser errors with the error body", () => {
    const text = clientErrorResponse("HPE_HEADER_OVERFLOW");
    expect(text.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    const body = text.slice(text.indexOf("\r\n\r\n") + 4);
    expect(JSON.parse(body)).toEqual({
      error: { code: "headers_too_large", message: "request headers too large" },
    });
    expect(text).toContain(`content-length: ${Buffer.byteLength(body)}\r\n`);
    expect(clientErrorResponse("HPE_INVALID_HEADER_TOKEN").split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
  });
});
