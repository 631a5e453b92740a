// STS answers GetCallerIdentity in XML. We need three leaf fields, so this is a tiny strict
// reader rather than an XML library: it refuses DTDs, CDATA, comments and any entity beyond the
// five predefined ones and character references, which removes entity-expansion and XXE surface
// entirely, and it refuses a field that appears twice instead of guessing which one counts.
import { AccessDeniedError, UnavailableError } from "../errors.ts";

export interface CallerIdentity {
  /** 12-digit AWS account ID */
  account: string;
  /** e.g. arn:aws:sts::123456789012:assumed-role/node-role/i-0abc */
  arn: string;
  /** unique ID of the principal, e.g. AROA…:session */
  userId: string;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeText(text: string): string | undefined {
  let failed = false;
  const out = text.replace(/&([^;&\s]{0,10});?/g, (whole, name: string) => {
    if (!whole.endsWith(";")) failed = true;
    const named = ENTITIES[name];
    if (named !== undefined) return named;
    const num = /^#(x[0-9a-fA-F]{1,6}|[0-9]{1,7})$/.exec(name);
    const code = num
      ? Number.parseInt(
          name.startsWith("#x") ? name.slice(2) : name.slice(1),
          name.startsWith("#x") ? 16 : 10,
        )
      : -1;
    if (code < 0x20 || code > 0x10ffff) {
      failed = true;
      return "";
    }
    return String.fromCodePoint(code);
  });
  return failed ? undefined : out;
}

/** The inner text of the single `<name …>…</name>` element in `xml`, or undefined (absent or repeated). */
function onlyElement(xml: string, name: string): string | undefined {
  const re = new RegExp(`<${name}(\\s[^<>]*)?>([\\s\\S]*?)</${name}>`, "g");
  const found = [...xml.matchAll(re)];
  return found.length === 1 ? (found[0]?.[2] as string) : undefined;
}

/** Leaf elements `<A>text</A>` directly inside `content`, separated only by whitespace. */
function leafElements(content: string): Map<string, string> | undefined {
  const fields = new Map<string, string>();
  const leaf = /\s*<([A-Za-z][A-Za-z0-9]{0,63})>([^<]*)<\/\1>/y;
  let at = 0;
  while (at < content.length) {
    if (/^\s*$/.test(content.slice(at))) break;
    leaf.lastIndex = at;
    const m = leaf.exec(content);
    if (!m) return undefined;
    const name = m[1] as string;
    const text = decodeText(m[2] as string);
    if (text === undefined || fields.has(name)) return undefined;
    fields.set(name, text);
    at = leaf.lastIndex;
  }
  return fields;
}

function stripProlog(xml: string): string | undefined {
  if (xml.length > 64 * 1024 || xml.includes("<!")) return undefined; // no DTD, CDATA or comments
  return xml.replace(/^\uFEFF?\s*<\?xml[^<>]*\?>/, "");
}

const ARN = /^arn:aws[a-z-]{0,20}:(iam|sts)::(\d{12}):[\x21-\x7e]{1,2000}$/;

/** Account, ARN and UserId from a GetCallerIdentityResponse; UnavailableError when it is not one. */
export function parseGetCallerIdentityResponse(xml: string): CallerIdentity {
  const bad = () =>
    new UnavailableError("STS answered with something other than a GetCallerIdentityResponse");
  const body = stripProlog(xml);
  if (body === undefined) throw bad();
  const root = /^\s*<GetCallerIdentityResponse(\s[^<>]*)?>([\s\S]*)<\/GetCallerIdentityResponse>\s*$/.exec(
    body,
  );
  if (!root) throw bad();
  const result = onlyElement(root[2] as string, "GetCallerIdentityResult");
  if (result === undefined) throw bad();
  const fields = leafElements(result);
  const account = fields?.get("Account");
  const arn = fields?.get("Arn");
  const userId = fields?.get("UserId");
  if (account === undefined || arn === undefined || userId === undefined) throw bad();
  const arnMatch = ARN.exec(arn);
  if (
    !/^\d{12}$/.test(account) ||
    !arnMatch ||
    arnMatch[2] !== account ||
    !/^[\x21-\x7e]{1,256}$/.test(userId)
  )
    throw bad();
  return { account, arn, userId };
}

/** The `<Code>` of an STS ErrorResponse (e.g. SignatureDoesNotMatch), or undefined. */
export function parseStsErrorCode(xml: string): string | undefined {
  const body = stripProlog(xml);
  if (body === undefined) return undefined;
  const error = onlyElement(body, "Error");
  if (error === undefined) return undefined;
  const code = onlyElement(error, "Code");
  return code !== undefined && /^[A-Za-z.]{1,64}$/.test(code) ? code : undefined;
}

/** The AccessDeniedError for an STS refusal; STS's error code is safe to show, its message is not needed. */
export function stsRejected(status: number, code: string | undefined): AccessDeniedError {
  return new AccessDeniedError(`STS rejected the signed request (HTTP ${status}${code ? `, ${code}` : ""})`);
}
