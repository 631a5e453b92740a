// AWS Signature Version 4: signing (node side) and verification (our local STS stand-in).
//
// Signing uses @smithy/signature-v4, the signer inside AWS's own JavaScript SDK, so a node sends
// exactly what AWS expects. Verification is written here (the library only signs). Keeping the
// two independent is deliberate: tests sign with AWS's code and verify with ours, so a mistake in
// our canonicalisation cannot cancel itself out.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { BadParameterError } from "../errors.ts";

export const SIGV4_ALGORITHM = "AWS4-HMAC-SHA256";

/** Credentials of an AWS principal; the secret never leaves the node. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A request to sign; `headers` must already hold `host` and every header that should be signed. */
export interface SigV4Request {
  method: string;
  host: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** node:crypto behind the hash interface @smithy/signature-v4 expects (avoids another package). */
export class NodeSha256 {
  readonly #secret: Uint8Array | undefined;
  #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret === undefined ? undefined : toBytes(secret);
    this.#hash = this.#fresh();
  }
  #fresh() {
    return this.#secret ? createHmac("sha256", this.#secret) : createHash("sha256");
  }
  update(chunk: Uint8Array): void {
    this.#hash.update(chunk);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/**
 * Signs `req` and returns all its headers plus `x-amz-date`, `x-amz-security-token` (when the
 * credentials carry a session token) and `authorization`. Every header given is signed.
 */
export async function signSigV4(
  req: SigV4Request,
  opts: { credentials: AwsCredentials; region: string; service: string; date: Date },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: opts.service,
    region: opts.region,
    credentials: { ...opts.credentials },
    sha256: NodeSha256,
    // STS does not use x-amz-content-sha256; the payload hash is still part of the signature.
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: "https:",
      hostname: req.host,
      path: req.path,
      query: {},
      headers: { ...req.headers },
      body: req.body,
    },
    {
      signingDate: opts.date,
      signableHeaders: new Set(Object.keys(req.headers).map((h) => h.toLowerCase())),
    },
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) out[name.toLowerCase()] = String(value);
  return out;
}

// ---- parsing the Authorization header --------------------------------------------------------

export interface SigV4Authorization {
  accessKeyId: string;
  /** YYYYMMDD */
  date: string;
  region: string;
  service: string;
  /** lowercase header names, sorted, as listed in SignedHeaders */
  signedHeaders: string[];
  /** 64 lowercase hex characters */
  signature: string;
}

const ACCESS_KEY_ID = /^[A-Z0-9]{16,128}$/;
const SCOPE_PART = /^[a-z0-9-]{1,64}$/;
const HEADER_NAME = /^[a-z0-9-]{1,128}$/;

/** Parses `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`; messages never echo it. */
export function parseSigV4Authorization(value: string): SigV4Authorization {
  const bad = (why: string) => new BadParameterError(`authorization header is malformed: ${why}`);
  if (value.length > 4096) throw bad("too long");
  const prefix = `${SIGV4_ALGORITHM} `;
  if (!value.startsWith(prefix)) throw bad(`algorithm must be ${SIGV4_ALGORITHM}`);
  const fields = new Map<string, string>();
  for (const part of value.slice(prefix.length).split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw bad("component without '='");
    const key = part.slice(0, eq).trim();
    if (fields.has(key)) throw bad(`${key} given twice`);
    fields.set(key, part.slice(eq + 1).trim());
  }
  const credential = fields.get("Credential");
  const signedHeaders = fields.get("SignedHeaders");
  const signature = fields.get("Signature");
  if (credential === undefined || signedHeaders === undefined || signature === undefined || fields.size !== 3)
    throw bad("needs exactly Credential, SignedHeaders and Signature");
  const scope = credential.split("/");
  const [accessKeyId, date, region, service, terminator] = scope;
  if (scope.length !== 5 || accessKeyId === undefined || !ACCESS_KEY_ID.test(accessKeyId))
    throw bad("credential is not <access key id>/<date>/<region>/<service>/aws4_request");
  if (date === undefined || !/^\d{8}$/.test(date)) throw bad("credential date is not YYYYMMDD");
  if (region === undefined || !SCOPE_PART.test(region)) throw bad("credential region is invalid");
  if (service === undefined || !SCOPE_PART.test(service)) throw bad("credential service is invalid");
  if (terminator !== "aws4_request") throw bad("credential scope must end in aws4_request");
  const names = signedHeaders.split(";");
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (!HEADER_NAME.test(name)) throw bad("SignedHeaders holds an invalid name");
    if (i > 0 && (names[i - 1] as string) >= name) throw bad("SignedHeaders must be sorted and unique");
  }
  if (!/^[0-9a-f]{64}$/.test(signature)) throw bad("signature is not 64 hex characters");
  return { accessKeyId, date, region, service, signedHeaders: names, signature };
}

/** `YYYYMMDDTHHMMSSZ` → Date; BadParameterError otherwise. */
export function parseAmzDate(value: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) throw new BadParameterError("x-amz-date is not YYYYMMDDTHHMMSSZ");
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
    throw new BadParameterError("x-amz-date is not a valid time");
  return at;
}

// ---- computing and checking a signature ------------------------------------------------------

/** A received request as the verifier sees it; header names in any case, duplicates allowed. */
export interface SigV4ReceivedRequest {
  method: string;
  /** path without the query, as sent */
  path: string;
  /** raw query string without '?', "" when none */
  query: string;
  headers: ReadonlyArray<readonly [string, string]>;
  body: Uint8Array;
}

const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex");
const hmac = (key: Uint8Array | string, data: string): Buffer =>
  createHmac("sha256", key).update(data).digest();

/** RFC 3986 unreserved characters stay, everything else is %XX (upper case), as SigV4 wants. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalUri(path: string): string {
  if (path === "/" || path === "") return "/";
  // Non-S3 services encode each segment of the path as sent once more.
  return path
    .split("/")
    .map((seg) => uriEncode(seg))
    .join("/");
}

function canonicalQuery(query: string): string {
  if (query === "") return "";
  const pairs = query.split("&").map((kv) => {
    const eq = kv.indexOf("=");
    const k = decodeURIComponent(eq < 0 ? kv : kv.slice(0, eq));
    const v = eq < 0 ? "" : decodeURIComponent(kv.slice(eq + 1));
    return [uriEncode(k), uriEncode(v)] as const;
  });
  pairs.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

/** The canonical request over the headers named in `signedHeaders` (BadParameterError if one is absent). */
export function canonicalRequest(req: SigV4ReceivedRequest, signedHeaders: readonly string[]): string {
  const values = new Map<string, string[]>();
  for (const [name, value] of req.headers) {
    const key = name.toLowerCase();
    const list = values.get(key) ?? [];
    list.push(value.trim().replace(/ {2,}/g, " "));
    values.set(key, list);
  }
  const lines = signedHeaders.map((name) => {
    const v = values.get(name);
    if (v === undefined) throw new BadParameterError(`signed header ${name} is missing from the request`);
    return `${name}:${v.join(",")}\n`;
  });
  return [
    req.method,
    canonicalUri(req.path),
    canonicalQuery(req.query),
    lines.join(""),
    signedHeaders.join(";"),
    sha256Hex(req.body),
  ].join("\n");
}

/** The hex signature of `req` under `auth`'s scope with `secretAccessKey`. */
export function sigV4Signature(
  req: SigV4ReceivedRequest,
  auth: Pick<SigV4Authorization, "date" | "region" | "service" | "signedHeaders">,
  amzDate: string,
  secretAccessKey: string,
): string {
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = [
    SIGV4_ALGORITHM,
    amzDate,
    scope,
    sha256Hex(canonicalRequest(req, auth.signedHeaders)),
  ].join("\n");
  const kDate = hmac(`AWS4${secretAccessKey}`, auth.date);
  const kRegion = hmac(kDate, auth.region);
  const kService = hmac(kRegion, auth.service);
  const kSigning = hmac(kService, "aws4_request");
  return hmac(kSigning, stringToSign).toString("hex");
}

/** Constant-time check of `auth.signature` against the signature recomputed with the secret. */
export function sigV4SignatureMatches(
  req: SigV4ReceivedRequest,
  auth: SigV4Authorization,
  amzDate: string,
  secretAccessKey: string,
): boolean {
  const expected = Buffer.from(sigV4Signature(req, auth, amzDate, secretAccessKey), "hex");
  const given = Buffer.from(auth.signature, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
