// The wire form of the node's proof (SignedStsRequest.http_request in the proto): one complete
// HTTP/1.1 request as bytes — request line, headers, blank line, body. The parser is strict on
// purpose: what auth checks must be exactly what it forwards, so anything that two HTTP parsers
// could read differently (duplicate headers, folding, bare LF, chunking) is refused.
import { BadParameterError } from "../errors.ts";

export interface HttpRequestParts {
  method: string;
  /** request target as sent: path plus optional "?query" */
  target: string;
  /** in the order sent, names as sent; no two share a name (case-insensitively) */
  headers: ReadonlyArray<readonly [string, string]>;
  body: Buffer;
}

export const MAX_HTTP_REQUEST_BYTES = 16 * 1024;
export const MAX_HTTP_HEADERS = 32;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
/** Hop-by-hop or framing headers: a proof needs none, and each could change what is forwarded. */
const REFUSED_HEADERS = new Set([
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-authorization",
  "proxy-connection",
]);

/** The first value of header `name` (case-insensitive), or undefined. */
export function headerValue(
  headers: ReadonlyArray<readonly [string, string]>,
  name: string,
): string | undefined {
  const lower = name.toLowerCase();
  for (const [n, v] of headers) if (n.toLowerCase() === lower) return v;
  return undefined;
}

/** Bytes of an HTTP/1.1 request; `content-length` must already be among the headers. */
export function serializeHttpRequest(parts: HttpRequestParts): Buffer {
  const head = [
    `${parts.method} ${parts.target} HTTP/1.1`,
    ...parts.headers.map(([n, v]) => `${n}: ${v}`),
    "",
    "",
  ];
  return Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), parts.body]);
}

/** Parses one HTTP/1.1 request; BadParameterError (never echoing header values) when it is not strict. */
export function parseHttpRequest(bytes: Uint8Array): HttpRequestParts {
  const bad = (why: string) =>
    new BadParameterError(`signed request is not a valid HTTP/1.1 request: ${why}`);
  if (bytes.byteLength > MAX_HTTP_REQUEST_BYTES) throw bad(`larger than ${MAX_HTTP_REQUEST_BYTES} bytes`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) throw bad("no end of headers");
  const head = buf.subarray(0, end).toString("latin1");
  // After splitting on CRLF no CR or LF may remain: a bare one would be read differently elsewhere.
  const lines = head.split("\r\n");
  if (lines.some((l) => l.includes("\r") || l.includes("\n"))) throw bad("bare CR or LF");
  const requestLine = /^([A-Z]{1,16}) (\/[\x21-\x7e]*) HTTP\/1\.1$/.exec(lines[0] ?? "");
  if (!requestLine) throw bad("request line must be 'METHOD /path HTTP/1.1'");
  const headers: [string, string][] = [];
  const seen = new Set<string>();
  for (const line of lines.slice(1)) {
    if (line.startsWith(" ") || line.startsWith("\t")) throw bad("folded header lines are not allowed");
    const colon = line.indexOf(":");
    if (colon <= 0) throw bad("header line without a name");
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw bad("header name has invalid characters");
    const lower = name.toLowerCase();
    if (REFUSED_HEADERS.has(lower)) throw bad(`header ${lower} is not allowed`);
    if (seen.has(lower)) throw bad(`header ${lower} appears twice`);
    seen.add(lower);
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (!FIELD_VALUE.test(value)) throw bad(`header ${lower} has invalid characters`);
    headers.push([name, value]);
    if (headers.length > MAX_HTTP_HEADERS) throw bad(`more than ${MAX_HTTP_HEADERS} headers`);
  }
  const body = Buffer.from(buf.subarray(end + 4));
  const length = headerValue(headers, "content-length");
  if (length === undefined || !/^(0|[1-9]\d{0,5})$/.test(length))
    throw bad("content-length is missing or not a number");
  if (Number(length) !== body.byteLength) throw bad("content-length does not match the body");
  return { method: requestLine[1] as string, target: requestLine[2] as string, headers, body };
}
