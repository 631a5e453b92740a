// A local stand-in for AWS STS (GetCallerIdentity only), over HTTPS on a free loopback port with a
// certificate from a throwaway CA. It checks what real STS checks: a SigV4 signature made with
// credentials it knows, the session token, x-amz-date within 15 minutes, the credential scope,
// the action and version; it answers like STS, in XML, with ErrorResponse and 403 on refusal.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsServerCert,
  privateKeyToPem,
} from "../../core/certs/x509.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { isSvcError } from "../../core/errors.ts";
import { parseAmzDate, parseSigV4Authorization, sigV4SignatureMatches } from "../../core/iam/sigv4.ts";

/** A principal the stand-in knows: its credentials and what GetCallerIdentity returns for it. */
export interface StsTestPrincipal {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  account: string;
  arn: string;
  userId: string;
}

export interface StsTestServerOptions {
  principals: readonly StsTestPrincipal[];
  /** regions a credential scope may name; default us-east-1 */
  regions?: readonly string[];
  clock?: Clock;
}

export interface StsTestServer {
  /** "127.0.0.1:<port>", what goes on the allowlist and into the node's Host header */
  hostPort: string;
  port: number;
  /** PEM of the CA that issued the server certificate */
  caPem: string;
  /** HTTP requests received so far */
  requests(): number;
  close(): Promise<void>;
}

const MAX_SKEW_MS = 15 * 60_000;
const NS = "https://sts.amazonaws.com/doc/2011-06-15/";

function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

class StsFault extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.byteLength;
      if (size > limit) {
        reject(new StsFault(413, "RequestEntityTooLarge", "request too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function headerPairs(req: IncomingMessage): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    pairs.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
  return pairs;
}

function authenticate(
  req: IncomingMessage,
  body: Buffer,
  principals: ReadonlyMap<string, StsTestPrincipal>,
  regions: ReadonlySet<string>,
  clock: Clock,
): StsTestPrincipal {
  const header = req.headers.authorization;
  if (header === undefined)
    throw new StsFault(403, "MissingAuthenticationToken", "Request is missing Authentication Token");
  let auth: ReturnType<typeof parseSigV4Authorization>;
  try {
    auth = parseSigV4Authorization(header);
  } catch (err) {
    throw new StsFault(400, "IncompleteSignature", isSvcError(err) ? err.message : "malformed authorization");
  }
  const principal = principals.get(auth.accessKeyId);
  if (principal === undefined)
    throw new StsFault(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
  const token = req.headers["x-amz-security-token"];
  if ((principal.sessionToken ?? undefined) !== token)
    throw new StsFault(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
  if (token !== undefined && !auth.signedHeaders.includes("x-amz-security-token"))
    throw new StsFault(403, "SignatureDoesNotMatch", "x-amz-security-token must be signed");
  const amzDate = req.headers["x-amz-date"];
  if (typeof amzDate !== "string") throw new StsFault(400, "IncompleteSignature", "x-amz-date is missing");
  let at: Date;
  try {
    at = parseAmzDate(amzDate);
  } catch {
    throw new StsFault(400, "IncompleteSignature", "x-amz-date is malformed");
  }
  if (Math.abs(at.getTime() - clock.now().getTime()) > MAX_SKEW_MS)
    throw new StsFault(
      403,
      "SignatureDoesNotMatch",
      `Signature expired: ${amzDate} is outside the 15 minute window`,
    );
  if (!amzDate.startsWith(auth.date) || auth.service !== "sts" || !regions.has(auth.region))
    throw new StsFault(
      403,
      "SignatureDoesNotMatch",
      "Credential should be scoped to a valid date, region and sts",
    );
  if (!auth.signedHeaders.includes("host") || !auth.signedHeaders.includes("x-amz-date"))
    throw new StsFault(403, "SignatureDoesNotMatch", "host and x-amz-date must be signed");
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const received = {
    method: req.method ?? "",
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? "" : url.slice(q + 1),
    headers: headerPairs(req),
    body,
  };
  let matches = false;
  try {
    matches = sigV4SignatureMatches(received, auth, amzDate, principal.secretAccessKey);
  } catch {
    matches = false; // a signed header missing from the request cannot match
  }
  if (!matches)
    throw new StsFault(
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided.",
    );
  return principal;
}

function checkAction(req: IncomingMessage, body: Buffer): void {
  if (req.method !== "POST" || (req.url ?? "") !== "/")
    throw new StsFault(400, "InvalidAction", "only POST / is served here");
  const form = new URLSearchParams(body.toString("utf8"));
  if (form.get("Action") !== "GetCallerIdentity")
    throw new StsFault(400, "InvalidAction", "Could not find operation for the request");
  if (form.get("Version") !== "2011-06-15")
    throw new StsFault(400, "InvalidAction", "Could not find operation for the request with this version");
}

function answer(res: ServerResponse, status: number, xml: string): void {
  res.writeHead(status, { "content-type": "text/xml", "x-amzn-requestid": randomUUID() });
  res.end(xml);
}

function identityXml(p: StsTestPrincipal): string {
  return (
    `<GetCallerIdentityResponse xmlns="${NS}">\n  <GetCallerIdentityResult>\n` +
    `    <Arn>${xmlEscape(p.arn)}</Arn>\n    <UserId>${xmlEscape(p.userId)}</UserId>\n` +
    `    <Account>${xmlEscape(p.account)}</Account>\n  </GetCallerIdentityResult>\n` +
    `  <ResponseMetadata>\n    <RequestId>${randomUUID()}</RequestId>\n  </ResponseMetadata>\n` +
    `</GetCallerIdentityResponse>\n`
  );
}

function errorXml(f: StsFault): string {
  const type = f.status >= 500 ? "Receiver" : "Sender";
  return (
    `<ErrorResponse xmlns="${NS}">\n  <Error>\n    <Type>${type}</Type>\n` +
    `    <Code>${xmlEscape(f.code)}</Code>\n    <Message>${xmlEscape(f.message)}</Message>\n  </Error>\n` +
    `  <RequestId>${randomUUID()}</RequestId>\n</ErrorResponse>\n`
  );
}

/** A throwaway CA and a server certificate for 127.0.0.1 issued by it (PEM). */
export async function loopbackTls(
  clock: Clock = systemClock,
): Promise<{ caPem: string; key: string; cert: string }> {
  const caKey = generateEcdsaP256();
  const caPem = await createRootCa({ privateKey: caKey.privateKey, commonName: "local test CA", clock });
  const serverKey = generateEcdsaP256();
  const cert = await issueTlsServerCert(
    { certPem: caPem, privateKey: caKey.privateKey },
    { publicKey: serverKey.publicKey, commonName: "loopback", ips: ["127.0.0.1"], clock, ttlSeconds: 3600 },
  );
  return { caPem, key: privateKeyToPem(serverKey.privateKey), cert };
}

export async function startStsServer(opts: StsTestServerOptions): Promise<StsTestServer> {
  const clock = opts.clock ?? systemClock;
  const principals = new Map(opts.principals.map((p) => [p.accessKeyId, p]));
  const regions = new Set(opts.regions ?? ["us-east-1"]);
  const { caPem, key, cert } = await loopbackTls(clock);
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer({ key, cert }, (req, res) => {
    requests++;
    readBody(req, 64 * 1024)
      .then((body) => {
        const principal = authenticate(req, body, principals, regions, clock);
        checkAction(req, body);
        answer(res, 200, identityXml(principal));
      })
      .catch((err: unknown) => {
        const fault =
          err instanceof StsFault ? err : new StsFault(500, "InternalFailure", "internal failure");
        if (!res.headersSent) answer(res, fault.status, errorXml(fault));
      });
  });
  server.on("secureConnection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    hostPort: `127.0.0.1:${port}`,
    port,
    caPem,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
