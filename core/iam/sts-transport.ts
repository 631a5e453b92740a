// How auth forwards the node's signed request to STS: HTTPS only, one request per connection,
// redirects never followed (node:https does not follow them; a 3xx is just a refusal upstream),
// a deadline for the whole exchange, and a cap on the answer's size.
import { request } from "node:https";
import { rootCertificates } from "node:tls";
import { UnavailableError } from "../errors.ts";
import { splitHostPort } from "./allowlist.ts";

export interface StsForwardRequest {
  /** normalized host[:port] taken from the allowlist entry, not from the request */
  hostPort: string;
  headers: ReadonlyArray<readonly [string, string]>;
  body: Buffer;
}

export interface StsHttpResponse {
  status: number;
  body: Buffer;
}

/** Sends one request to STS; rejects with UnavailableError when no complete answer arrives. */
export type StsTransport = (req: StsForwardRequest) => Promise<StsHttpResponse>;

export interface HttpsStsTransportOptions {
  /** extra trust anchors (PEM), e.g. a test CA; default: Node's public roots */
  ca?: string | readonly string[];
  /** whole exchange deadline; default 10 s */
  timeoutMs?: number;
  /** largest answer accepted; default 64 KiB */
  maxResponseBytes?: number;
}

export const DEFAULT_STS_TIMEOUT_MS = 10_000;
export const DEFAULT_STS_MAX_RESPONSE_BYTES = 64 * 1024;

export function httpsStsTransport(opts: HttpsStsTransportOptions = {}): StsTransport {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_STS_TIMEOUT_MS;
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_STS_MAX_RESPONSE_BYTES;
  const ca = opts.ca === undefined ? undefined : typeof opts.ca === "string" ? [opts.ca] : [...opts.ca];
  return (req) =>
    new Promise<StsHttpResponse>((resolve, reject) => {
      const { hostname, port } = splitHostPort(req.hostPort);
      const headers: Record<string, string> = {};
      for (const [name, value] of req.headers) headers[name] = value;
      let settled = false;
      const fail = (why: string, cause?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outgoing.destroy();
        reject(new UnavailableError(`STS endpoint ${req.hostPort}: ${why}`, { cause }));
      };
      const outgoing = request(
        {
          host: hostname,
          port,
          method: "POST",
          path: "/",
          headers,
          // Adding the public roots keeps real STS reachable when a test CA is also given.
          ...(ca ? { ca: [...rootCertificates, ...ca] } : {}),
          agent: false,
          minVersion: "TLSv1.2",
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > maxBytes) fail(`answer larger than ${maxBytes} bytes`);
            else chunks.push(chunk);
          });
          res.on("end", () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
          });
          res.on("error", (err) => fail("answer broke off", err));
        },
      );
      const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
      outgoing.on("error", (err) => fail("request failed", err));
      outgoing.end(req.body);
    });
}
