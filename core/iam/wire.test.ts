import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import { headerValue, MAX_HTTP_REQUEST_BYTES, parseHttpRequest, serializeHttpRequest } from "./wire.ts";

const BODY = "Action=GetCallerIdentity&Version=2011-06-15";
const good = (extraHead = "", body = BODY, length = String(body.length)) =>
  Buffer.from(
    `POST / HTTP/1.1\r\nHost: sts.amazonaws.com\r\nContent-Length: ${length}\r\n${extraHead}X-Svc-Challenge: abc\r\n\r\n${body}`,
    "latin1",
  );

describe("HTTP/1.1 wire form", () => {
  it("round-trips through serialize and parse, keeping names and order", () => {
    const parts = parseHttpRequest(good());
    expect(parts.method).toBe("POST");
    expect(parts.target).toBe("/");
    expect(parts.headers.map(([n]) => n)).toEqual(["Host", "Content-Length", "X-Svc-Challenge"]);
    expect(headerValue(parts.headers, "x-svc-challenge")).toBe("abc");
    expect(parts.body.toString()).toBe(BODY);
    expect(serializeHttpRequest(parts).equals(good())).toBe(true);
  });

  it("trims optional whitespace around values", () => {
    const parts = parseHttpRequest(good("X-Pad: \t padded \t\r\n"));
    expect(headerValue(parts.headers, "x-pad")).toBe("padded");
  });

  it.each([
    ["no blank line", Buffer.from(`POST / HTTP/1.1\r\nContent-Length: 0\r\n`)],
    ["HTTP/1.0", Buffer.from(good().toString("latin1").replace("HTTP/1.1", "HTTP/1.0"))],
    ["an absolute-form target", Buffer.from(good().toString("latin1").replace("POST / ", "POST http://x/ "))],
    ["a lower-case method", Buffer.from(good().toString("latin1").replace("POST", "post"))],
    ["a duplicate header", good("host: 127.0.0.1:1\r\n")],
    ["a folded header", good("X-A: a\r\n  folded\r\n")],
    ["a bare LF", good("X-A: a\nX-B: b\r\n")],
    ["a bare CR in a value", good("X-A: a\rb\r\n")],
    ["transfer-encoding", good("Transfer-Encoding: chunked\r\n")],
    ["connection", good("Connection: close\r\n")],
    ["expect", good("Expect: 100-continue\r\n")],
    ["a control character", good("X-A: a\x01b\r\n")],
    ["a non-token header name", good("X A: b\r\n")],
    [
      "a missing content-length",
      Buffer.from(
        good()
          .toString("latin1")
          .replace(/Content-Length: \d+\r\n/, ""),
      ),
    ],
    ["a short content-length", good("", BODY, String(BODY.length - 1))],
    ["a long content-length", good("", BODY, String(BODY.length + 1))],
    ["a signed content-length", good("", BODY, `+${BODY.length}`)],
    ["a zero-padded content-length", good("", BODY, `0${BODY.length}`)],
    ["too many headers", good(Array.from({ length: 40 }, (_, i) => `X-H${i}: v\r\n`).join(""))],
    ["too many bytes", good("", "x".repeat(MAX_HTTP_REQUEST_BYTES))],
  ])("refuses %s", (_why, bytes) => {
    expect(() => parseHttpRequest(bytes)).toThrow(BadParameterError);
  });

  it("never echoes a header value in its errors", () => {
    let err: unknown;
    try {
      parseHttpRequest(good("Authorization: AWS4-HMAC-SHA256 Credential=SECRETISH\x01\r\n"));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadParameterError);
    expect(String(err)).not.toContain("SECRETISH");
  });
});
