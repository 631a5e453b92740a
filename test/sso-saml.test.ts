// The SAML protocol (server/auth/sso/saml.ts) against a real identity provider, SimpleSAMLphp
// from Debian (test/harness/saml-idp/): a real login validates into the right identity, and each
// rule has a test that edits a real response to break it (test/harness/saml-idp/tamper.ts).
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { XMLSerializer } from "@xmldom/xmldom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { Clock } from "../core/clock.ts";
import { SvcError } from "../core/errors.ts";
import { type Connector, semanticProblems, validateResource } from "../core/resources/index.ts";
import type { PendingProtocolState, ProtocolDeps, SsoProtocol } from "../server/auth/sso/protocol.ts";
import { samlProtocol, samlServiceProviderMetadata } from "../server/auth/sso/saml.ts";
import { clearIdpMetadataCache } from "../server/auth/sso/saml-metadata.ts";
import { launchChromium } from "./harness/chromium.ts";
import {
  loginAtIdp,
  loginAtSamlIdpPage,
  type RunningSamlIdp,
  startSamlIdp,
} from "./harness/saml-idp/saml-idp.ts";
import {
  assertionOf,
  DSIG,
  decodeResponse,
  editAndResign,
  editOnly,
  encodeResponse,
  first,
  forgedCopy,
  SAML,
  SAMLP,
  setAttributeValues,
  signElement,
  stripSignature,
} from "./harness/saml-idp/tamper.ts";

const run = promisify(execFile);
const SP = "https://proxy.svc.test/v1/webapi/sso/corp-saml/saml/metadata";
const ACS = "https://proxy.svc.test/v1/webapi/sso/saml/acs";

let idp: RunningSamlIdp;
let work: string;
/** Another key and certificate: a signature by it must never pass. */
let otherKey: string;
let otherCert: string;

/** Moves the protocol's clock relative to real time (the library checks real time too). */
let clockOffsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + clockOffsetMs) };
const claimed = new Map<string, Date>();
const deps: ProtocolDeps = {
  clock,
  claimOnce: async (kind, id, until) => {
    const key = `${kind}/${id}`;
    if (claimed.has(key)) return false;
    claimed.set(key, until);
    return true;
  },
};

function connector(settings: Record<string, unknown>): Connector {
  return {
    apiVersion: "svc.dev/v1",
    kind: "Connector",
    metadata: { name: "corp-saml" },
    spec: {
      type: "saml",
      display_name: "Corp SAML",
      settings: {
        entity_id: SP,
        acs_url: ACS,
        sso_url: idp.ssoUrl,
        idp_certificate: idp.certPem,
        ...settings,
      },
    },
  } as Connector;
}

/** A pending request, its login at the provider, and the SAMLResponse the provider posts. */
async function login(protocol: SsoProtocol, user = "alice", password = "alice-pw") {
  const requestId = `req-${Math.random().toString(36).slice(2)}`;
  const base = { requestId, nonce: "", codeVerifier: "" };
  const { url, extra } = await protocol.loginUrl(base);
  const posted = await loginAtIdp(url, user, password);
  const pending: PendingProtocolState = { ...base, extra: extra ?? {} };
  return { url, posted, pending, samlResponse: posted.samlResponse };
}

async function refused(p: Promise<unknown>, code: string, why: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the response was accepted").toBeInstanceOf(SvcError);
  const e = err as SvcError;
  expect(e.code).toBe(code);
  expect(e.message).toMatch(why);
  // Nothing from the assertion is echoed (user, attribute values, ids).
  expect(e.message).not.toMatch(/alice|engineering|admins|_[0-9a-f]{20}/);
}

let protocol: SsoProtocol;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "svc-saml-test-"));
  await run("openssl", [
    ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2"],
    ...["-subj", "/CN=not the idp", "-keyout", join(work, "other.key"), "-out", join(work, "other.crt")],
  ]);
  otherKey = await readFile(join(work, "other.key"), "utf8");
  otherCert = await readFile(join(work, "other.crt"), "utf8");
  idp = await startSamlIdp({
    spEntityId: SP,
    acsUrl: ACS,
    users: [
      {
        username: "alice",
        password: "alice-pw",
        attributes: {
          groups: ["engineering", "oncall"],
          email: ["alice@corp.test"],
          logins: ["alice", "ubuntu"],
        },
      },
      {
        username: "bob",
        password: "bob-pw",
        attributes: { groups: ["sales"], email: ["b1@corp.test", "b2@corp.test"] },
      },
    ],
  });
  protocol = await samlProtocol(connector({}), undefined, deps);
}, 60_000);

afterAll(async () => {
  await idp?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("a real login at SimpleSAMLphp", () => {
  it("starts with a Redirect-binding AuthnRequest carrying the request id as RelayState", async () => {
    const { url, extra } = await protocol.loginUrl({ requestId: "the-request", nonce: "", codeVerifier: "" });
    const u = new URL(url);
    expect(`${u.origin}${u.pathname}`).toBe(idp.ssoUrl);
    expect(u.searchParams.get("RelayState")).toBe("the-request");
    expect(u.searchParams.get("SAMLRequest")).toBeTruthy();
    expect(u.searchParams.get("Signature")).toBeNull();
    expect(extra?.["authnRequestId"]).toMatch(/^_[0-9a-f]{40}$/);
  });

  it("validates into the user, the NameID, every attribute as a list and the session cap", async () => {
    const { posted, pending } = await login(protocol);
    expect(posted.action).toBe(ACS);
    expect(posted.relayState).toBe(pending.requestId);
    const id = await protocol.validate({ samlResponse: posted.samlResponse }, pending);
    expect(id.username).toBe("alice");
    expect(id.subject).toBe("alice");
    expect(id.claims).toEqual({
      uid: ["alice"],
      groups: ["engineering", "oncall"],
      email: ["alice@corp.test"],
      logins: ["alice", "ubuntu"],
    });
    const session = first(assertionOf(decodeResponse(posted.samlResponse)), SAML, "AuthnStatement");
    expect(id.notAfter?.toISOString()).toBe(
      new Date(session.getAttribute("SessionNotOnOrAfter")!).toISOString(),
    );
  });

  it("works in a browser: headless Chromium fills SimpleSAMLphp's own login page", async () => {
    const requestId = "browser-request";
    const { url, extra } = await protocol.loginUrl({ requestId, nonce: "", codeVerifier: "" });
    const browser = await launchChromium();
    try {
      // The provider's auto-submitted form lands on the ACS URL: capture the POST there.
      let posted: URLSearchParams | undefined;
      await browser.context.route(`${ACS}*`, async (route) => {
        posted = new URLSearchParams(route.request().postData() ?? "");
        await route.fulfill({ status: 200, contentType: "text/plain", body: "received" });
      });
      const page = await browser.context.newPage();
      await page.goto(url);
      await loginAtSamlIdpPage(page, "alice", "alice-pw");
      await page.waitForURL(`${ACS}*`);
      expect(await page.textContent("body")).toBe("received");
      expect(posted?.get("RelayState")).toBe(requestId);
      const pending = { requestId, nonce: "", codeVerifier: "", extra: extra ?? {} };
      const id = await protocol.validate({ samlResponse: posted?.get("SAMLResponse") ?? "" }, pending);
      expect(id.username).toBe("alice");
      expect(id.claims["groups"]).toEqual(["engineering", "oncall"]);

      // A wrong password stays at the provider, which says so on its own page (its session
      // cookie from the login above is dropped first, or it would sign alice in silently).
      await browser.context.clearCookies();
      const again = await protocol.loginUrl({ requestId: "browser-request-2", nonce: "", codeVerifier: "" });
      const page2 = await browser.context.newPage();
      await page2.goto(again.url);
      await expect(loginAtSamlIdpPage(page2, "alice", "wrong")).rejects.toThrow(/refused the sign-in/);
    } finally {
      await browser.close();
    }
  });

  it("names the user by settings.username_claim, refusing an attribute with several values", async () => {
    const byEmail = await samlProtocol(connector({ username_claim: "email" }), undefined, deps);
    const a = await login(byEmail);
    expect((await byEmail.validate({ samlResponse: a.samlResponse }, a.pending)).username).toBe(
      "alice@corp.test",
    );
    const b = await login(byEmail, "bob", "bob-pw");
    await refused(
      byEmail.validate({ samlResponse: b.samlResponse }, b.pending),
      "not_authenticated",
      /email/,
    );
  });
});

describe("each rule, broken on a real response", () => {
  it("(control) accepts a real response re-signed untouched by the provider's key, so the edits below are what is refused", async () => {
    const { samlResponse, pending } = await login(protocol);
    const resigned = editAndResign(samlResponse, () => {}, idp.keyPem, idp.certPem);
    expect(resigned).not.toBe(samlResponse);
    expect((await protocol.validate({ samlResponse: resigned }, pending)).claims["groups"]).toEqual([
      "engineering",
      "oncall",
    ]);
  });

  it("refuses an assertion without a signature", async () => {
    const { samlResponse, pending } = await login(protocol);
    const tampered = editOnly(samlResponse, (a) => stripSignature(a));
    await refused(protocol.validate({ samlResponse: tampered }, pending), "not_authenticated", /not signed/);
  });

  it("refuses an unsigned assertion even inside a response the provider's key signed", async () => {
    const signResponse = (doc: Document) =>
      encodeResponse(
        signElement(
          new XMLSerializer().serializeToString(doc),
          doc.documentElement.getAttribute("ID")!,
          idp.keyPem,
          idp.certPem,
        ),
      );
    // Control: the same response signing around a still-signed assertion is accepted.
    const ok = await login(protocol);
    expect(
      (await protocol.validate({ samlResponse: signResponse(decodeResponse(ok.samlResponse)) }, ok.pending))
        .username,
    ).toBe("alice");

    const { samlResponse, pending } = await login(protocol);
    const doc = decodeResponse(samlResponse);
    stripSignature(assertionOf(doc));
    setAttributeValues(assertionOf(doc), "groups", ["admins"]);
    await refused(
      protocol.validate({ samlResponse: signResponse(doc) }, pending),
      "not_authenticated",
      /not signed/,
    );
  });

  it("refuses an assertion signed by another key (with that key's certificate embedded)", async () => {
    const { samlResponse, pending } = await login(protocol);
    const tampered = editAndResign(samlResponse, () => {}, otherKey, otherCert);
    await refused(protocol.validate({ samlResponse: tampered }, pending), "not_authenticated", /not signed/);
  });

  it("refuses an HMAC signature keyed with the provider's public certificate (key confusion)", async () => {
    const { samlResponse, pending } = await login(protocol);
    const tampered = editAndResign(
      samlResponse,
      (a) => setAttributeValues(a, "groups", ["admins"]),
      idp.certPem,
      idp.certPem,
      { hmac: true },
    );
    expect(Buffer.from(tampered, "base64").toString()).toContain("hmac-sha1");
    await refused(protocol.validate({ samlResponse: tampered }, pending), "not_authenticated", /not signed/);
  });

  it("reads a NameID or value split by an XML comment whole (comments are outside the signature)", async () => {
    // The known attack: a provider signs "alice@corp.test.evil.test"; a comment after
    // "alice@corp.test" keeps the signature valid, and a parser reading the first text node
    // would see "alice@corp.test". Here the whole name must come through.
    const { samlResponse, pending } = await login(protocol);
    const split = (el: Element, at: number) => {
      const text = el.textContent ?? "";
      while (el.firstChild) el.removeChild(el.firstChild);
      const doc = el.ownerDocument;
      el.appendChild(doc.createTextNode(text.slice(0, at)));
      el.appendChild(doc.createComment(""));
      el.appendChild(doc.createTextNode(text.slice(at)));
    };
    const tampered = editOnly(samlResponse, (a) => {
      split(first(a, SAML, "NameID"), 2);
      const groups = Array.from(a.getElementsByTagNameNS(SAML, "Attribute")).find(
        (x) => x.getAttribute("Name") === "groups",
      )!;
      split(first(groups, SAML, "AttributeValue"), 4);
    });
    expect(Buffer.from(tampered, "base64").toString()).toContain("al<!---->ice");
    const id = await protocol.validate({ samlResponse: tampered }, pending);
    expect(id.username).toBe("alice");
    expect(id.subject).toBe("alice");
    expect(id.claims["groups"]).toEqual(["engineering", "oncall"]);
  });

  it("refuses an attribute modified after signing", async () => {
    const { samlResponse, pending } = await login(protocol);
    const tampered = editOnly(samlResponse, (a) => setAttributeValues(a, "groups", ["admins"]));
    await refused(protocol.validate({ samlResponse: tampered }, pending), "not_authenticated", /not signed/);
  });

  describe("signature wrapping", () => {
    it("refuses a forged unsigned assertion next to the signed one", async () => {
      const { samlResponse, pending } = await login(protocol);
      const tampered = editOnly(samlResponse, (a, doc) => {
        doc.documentElement.insertBefore(forgedCopy(a, "_forged", ["admins"]), a);
      });
      await refused(
        protocol.validate({ samlResponse: tampered }, pending),
        "not_authenticated",
        /not signed/,
      );
    });

    it("refuses a forged assertion wrapped around the signed one", async () => {
      const { samlResponse, pending } = await login(protocol);
      const tampered = editOnly(samlResponse, (a, doc) => {
        const evil = forgedCopy(a, "_forged", ["admins"]);
        doc.documentElement.replaceChild(evil, a);
        evil.appendChild(a);
      });
      await refused(
        protocol.validate({ samlResponse: tampered }, pending),
        "not_authenticated",
        /not signed/,
      );
    });

    it("refuses a forged assertion with the signed one's ID, the signed one hidden in Extensions", async () => {
      const { samlResponse, pending } = await login(protocol);
      const tampered = editOnly(samlResponse, (a, doc) => {
        const evil = forgedCopy(a, a.getAttribute("ID")!, ["admins"]);
        const sig = first(a, DSIG, "Signature").cloneNode(true);
        evil.insertBefore(sig, first(evil, SAML, "Subject"));
        const ext = doc.createElementNS(SAMLP, "samlp:Extensions");
        doc.documentElement.replaceChild(evil, a);
        ext.appendChild(a);
        doc.documentElement.insertBefore(ext, first(doc, SAMLP, "Status"));
      });
      await refused(
        protocol.validate({ samlResponse: tampered }, pending),
        "not_authenticated",
        /not signed/,
      );
    });
  });

  it("refuses another audience, even signed by the provider's key", async () => {
    const { samlResponse, pending } = await login(protocol);
    const tampered = editAndResign(
      samlResponse,
      (a) => {
        first(a, SAML, "Audience").textContent = "https://other-sp.test/";
      },
      idp.keyPem,
      idp.certPem,
    );
    await refused(protocol.validate({ samlResponse: tampered }, pending), "not_authenticated", /audience/);
  });

  it("refuses another recipient, even signed by the provider's key, and another Destination", async () => {
    const a1 = await login(protocol);
    const recipient = editAndResign(
      a1.samlResponse,
      (a) => first(a, SAML, "SubjectConfirmationData").setAttribute("Recipient", "https://evil.test/acs"),
      idp.keyPem,
      idp.certPem,
    );
    await refused(
      protocol.validate({ samlResponse: recipient }, a1.pending),
      "not_authenticated",
      /recipient/,
    );
    const a2 = await login(protocol);
    const destination = editOnly(a2.samlResponse, (_a, doc) =>
      doc.documentElement.setAttribute("Destination", "https://evil.test/acs"),
    );
    await refused(
      protocol.validate({ samlResponse: destination }, a2.pending),
      "not_authenticated",
      /destination/,
    );
  });

  it("refuses an expired assertion: NotOnOrAfter in the past (re-signed), or our clock past it beyond 60 s", async () => {
    const a1 = await login(protocol);
    const past = new Date(Date.now() - 5 * 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const expired = editAndResign(
      a1.samlResponse,
      (a) => {
        first(a, SAML, "Conditions").setAttribute("NotOnOrAfter", past);
        first(a, SAML, "SubjectConfirmationData").setAttribute("NotOnOrAfter", past);
      },
      idp.keyPem,
      idp.certPem,
    );
    await refused(protocol.validate({ samlResponse: expired }, a1.pending), "not_authenticated", /validity/);

    const a2 = await login(protocol);
    const until = Date.parse(
      first(assertionOf(decodeResponse(a2.samlResponse)), SAML, "Conditions").getAttribute("NotOnOrAfter")!,
    );
    try {
      clockOffsetMs = until + 61_000 - Date.now();
      await refused(
        protocol.validate({ samlResponse: a2.samlResponse }, a2.pending),
        "not_authenticated",
        /validity/,
      );
      // Within the skew the same response is still good (and, refused above, it was never claimed).
      clockOffsetMs = until + 30_000 - Date.now();
      expect((await protocol.validate({ samlResponse: a2.samlResponse }, a2.pending)).username).toBe("alice");
    } finally {
      clockOffsetMs = 0;
    }
  });

  it("refuses a response to another AuthnRequest (InResponseTo), and one with none", async () => {
    const a = await login(protocol);
    const other = await protocol.loginUrl({ requestId: "other", nonce: "", codeVerifier: "" });
    const pending = { ...a.pending, extra: other.extra ?? {} };
    await refused(
      protocol.validate({ samlResponse: a.samlResponse }, pending),
      "not_authenticated",
      /this login request/,
    );
    // Unsolicited (IdP-initiated) responses carry no InResponseTo and are refused too.
    const b = await login(protocol);
    const unsolicited = editOnly(b.samlResponse, (_a, doc) =>
      doc.documentElement.removeAttribute("InResponseTo"),
    );
    await refused(
      protocol.validate({ samlResponse: unsolicited }, b.pending),
      "not_authenticated",
      /this login request/,
    );
  });

  it("refuses a replay of the same response (claimOnce until the assertion lapses)", async () => {
    const { samlResponse, pending } = await login(protocol);
    await protocol.validate({ samlResponse }, pending);
    const assertion = assertionOf(decodeResponse(samlResponse));
    const until = claimed.get(`saml-assertion/${assertion.getAttribute("ID")}`);
    const notOnOrAfter = Date.parse(first(assertion, SAML, "Conditions").getAttribute("NotOnOrAfter")!);
    expect(until!.getTime()).toBeGreaterThanOrEqual(notOnOrAfter);
    await refused(protocol.validate({ samlResponse }, pending), "not_authenticated", /already used/);
  });

  it("turns the provider's error status into not_authenticated with its code, never its message", async () => {
    const { samlResponse, pending } = await login(protocol);
    const failed = editOnly(samlResponse, (a, doc) => {
      doc.documentElement.removeChild(a);
      const code = first(doc, SAMLP, "StatusCode");
      code.setAttribute("Value", "urn:oasis:names:tc:SAML:2.0:status:Responder");
      const inner = doc.createElementNS(SAMLP, "samlp:StatusCode");
      inner.setAttribute("Value", "urn:oasis:names:tc:SAML:2.0:status:AuthnFailed");
      code.appendChild(inner);
      const message = doc.createElementNS(SAMLP, "samlp:StatusMessage");
      message.appendChild(doc.createTextNode("alice <script>alert(1)</script>"));
      first(doc, SAMLP, "Status").appendChild(message);
    });
    await refused(
      protocol.validate({ samlResponse: failed }, pending),
      "not_authenticated",
      /refused the login \(Responder\)/,
    );
  });

  it("accepts base64 wrapped in lines, and refuses a hostile non-base64 body in linear time", async () => {
    const { samlResponse, pending } = await login(protocol);
    const wrapped = samlResponse.replace(/.{76}/g, "$&\r\n");
    expect((await protocol.validate({ samlResponse: wrapped }, pending)).username).toBe("alice");
    const hostile = `${"A".repeat(300_000)}${"\n".repeat(200_000)}!`;
    const t0 = performance.now();
    await refused(protocol.validate({ samlResponse: hostile }, pending), "bad_parameter", /base64/);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it("answers malformed input with bad_parameter", async () => {
    const { pending } = await login(protocol);
    await refused(protocol.validate({}, pending), "bad_parameter", /missing/);
    await refused(protocol.validate({ samlResponse: "not base64!" }, pending), "bad_parameter", /base64/);
    await refused(
      protocol.validate({ samlResponse: encodeResponse("<a><b></a>") }, pending),
      "bad_parameter",
      /XML|SAML Response/,
    );
    const doctype =
      '<!DOCTYPE x [<!ENTITY a "aaaa">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>';
    await refused(
      protocol.validate({ samlResponse: encodeResponse(doctype) }, pending),
      "bad_parameter",
      /XML/,
    );
  });
});

describe("configuration", () => {
  it("takes the certificates, SSO URL and issuer from HTTPS metadata (trusted through caPem)", async () => {
    // The provider's metadata served over HTTPS by a server whose certificate deps.caPem trusts.
    await run("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=127.0.0.1"],
      ...[
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(work, "tls.key"),
        "-out",
        join(work, "tls.crt"),
      ],
    ]);
    const tlsCert = await readFile(join(work, "tls.crt"), "utf8");
    const metadata = await (await fetch(idp.metadataUrl)).text();
    let served = metadata;
    let fetches = 0;
    const server: Server = createServer(
      { key: await readFile(join(work, "tls.key")), cert: tlsCert },
      (_req, res) => {
        fetches++;
        res.writeHead(200, { "content-type": "application/samlmetadata+xml" }).end(served);
      },
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      clearIdpMetadataCache();
      const settings = {
        sso_url: undefined,
        idp_certificate: undefined,
        idp_metadata_url: `https://127.0.0.1:${port}/md`,
      };
      const fromMetadata = await samlProtocol(connector(settings), undefined, { ...deps, caPem: tlsCert });
      const a = await login(fromMetadata);
      expect((await fromMetadata.validate({ samlResponse: a.samlResponse }, a.pending)).username).toBe(
        "alice",
      );
      await samlProtocol(connector(settings), undefined, { ...deps, caPem: tlsCert });
      expect(fetches).toBe(1); // cached

      // Without the trust anchor the metadata cannot be fetched; plain HTTP is refused.
      clearIdpMetadataCache();
      await refused(samlProtocol(connector(settings), undefined, deps), "unavailable", /metadata/);
      const http = { ...settings, idp_metadata_url: idp.metadataUrl };
      await refused(samlProtocol(connector(http), undefined, deps), "precondition_failed", /https/);

      // An assertion from another issuer than the metadata's entity id is refused.
      const b = await login(fromMetadata);
      const otherIssuer = editAndResign(
        b.samlResponse,
        (el) => {
          first(el, SAML, "Issuer").textContent = "https://other-idp.test/";
        },
        idp.keyPem,
        idp.certPem,
      );
      await refused(
        fromMetadata.validate({ samlResponse: otherIssuer }, b.pending),
        "not_authenticated",
        /identity provider/,
      );

      // Key rotation: the same protocol object follows the metadata once its cache lapses. Only
      // another key published: refused; both keys published (a rollover): accepted.
      const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s+/g, "");
      const idpBody = body(idp.certPem);
      expect(metadata).toContain(idpBody);
      served = metadata.replace(idpBody, body(otherCert));
      clearIdpMetadataCache();
      const c = await login(fromMetadata);
      await refused(
        fromMetadata.validate({ samlResponse: c.samlResponse }, c.pending),
        "not_authenticated",
        /not signed/,
      );
      const signing =
        /<md:KeyDescriptor use="signing">[\s\S]*?<\/md:KeyDescriptor>/.exec(metadata)?.[0] ?? "";
      served = metadata.replace(signing, `${signing.replace(idpBody, body(otherCert))}${signing}`);
      clearIdpMetadataCache();
      const d = await login(fromMetadata);
      expect((await fromMetadata.validate({ samlResponse: d.samlResponse }, d.pending)).username).toBe(
        "alice",
      );
    } finally {
      server.close();
    }
  });

  it("signs AuthnRequests with the connector secret's key when the provider requires it", async () => {
    await run("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=svc sp"],
      ...["-keyout", join(work, "sp.key"), "-out", join(work, "sp.crt")],
    ]);
    const spKey = await readFile(join(work, "sp.key"), "utf8");
    const spCert = await readFile(join(work, "sp.crt"), "utf8");
    const strict = await startSamlIdp({
      spEntityId: SP,
      acsUrl: ACS,
      spCertPem: spCert,
      users: [{ username: "carol", password: "carol-pw" }],
    });
    try {
      const settings = { sso_url: strict.ssoUrl, idp_certificate: strict.certPem };
      const signing = await samlProtocol(connector(settings), { value: `${spKey}${spCert}` }, deps);
      const a = await login(signing, "carol", "carol-pw");
      expect(new URL(a.url).searchParams.get("SigAlg")).toMatch(/rsa-sha256/);
      expect((await signing.validate({ samlResponse: a.samlResponse }, a.pending)).username).toBe("carol");
      // The same provider turns an unsigned AuthnRequest away.
      const unsigned = await samlProtocol(connector(settings), undefined, deps);
      await expect(login(unsigned, "carol", "carol-pw")).rejects.toThrow(/no login form/);
      // A secret without a usable key is a connector that cannot be used.
      await refused(
        samlProtocol(connector(settings), { value: spCert }, deps),
        "precondition_failed",
        /private key/,
      );
    } finally {
      await strict.stop();
    }
  });

  it("takes idp_certificate as PEM or bare base64, and refuses one that is not a certificate", async () => {
    const bare = idp.certPem.replace(/-----[A-Z ]+-----|\s+/g, "");
    const fromBare = await samlProtocol(connector({ idp_certificate: bare }), undefined, deps);
    const a = await login(fromBare);
    expect((await fromBare.validate({ samlResponse: a.samlResponse }, a.pending)).username).toBe("alice");
    const broken = `-----BEGIN CERTIFICATE-----\n${bare.slice(0, 200)}\n-----END CERTIFICATE-----\n`;
    await refused(
      samlProtocol(connector({ idp_certificate: broken }), undefined, deps),
      "precondition_failed",
      /not a certificate/,
    );
    await refused(
      samlProtocol(connector({ idp_certificate: "<the IdP certificate>" }), undefined, deps),
      "precondition_failed",
      /no PEM certificate/,
    );
  });

  it("the harness's SimpleSAMLphp ends when the process that started it is killed", async () => {
    const harness = join(import.meta.dirname, "harness", "saml-idp", "saml-idp.ts");
    const script = [
      `import { startSamlIdp } from ${JSON.stringify(harness)};`,
      `const idp = await startSamlIdp({ spEntityId: "${SP}", acsUrl: "${ACS}", users: [] });`,
      `console.log("pid " + idp.pid);`,
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /pid (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once("exit", (code) => reject(new Error(`the starter exited (${code}) before the IdP ran`)));
    });
    const alive = (p: number) => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    child.kill("SIGKILL");
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  });

  it("publishes SP metadata: entity id, ACS URL, signed assertions wanted, the signing certificate", async () => {
    const plain = samlServiceProviderMetadata(connector({}));
    expect(plain).toContain(`entityID="${SP}"`);
    expect(plain).toContain(`Location="${ACS}"`);
    expect(plain).toContain('WantAssertionsSigned="true"');
    expect(plain).not.toContain("KeyDescriptor");
    const signed = samlServiceProviderMetadata(connector({}), { value: `${otherKey}${otherCert}` });
    expect(signed).toContain('AuthnRequestsSigned="true"');
    expect(signed).toContain(otherCert.split("\n")[1]!);
    expect(signed).not.toContain("PRIVATE KEY");
  });

  it("docs/sso-saml.md: every yaml example is a valid resource with no semantic problem", async () => {
    const md = await readFile(join(import.meta.dirname, "..", "docs", "sso-saml.md"), "utf8");
    const blocks = [...md.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => parseYaml(m[1] ?? ""));
    expect(blocks.map((b) => b.kind)).toEqual(["Connector", "Connector", "Role"]);
    for (const b of blocks) {
      const v = validateResource(b);
      expect(v.ok ? [] : v.errors, JSON.stringify(b.metadata)).toEqual([]);
      expect(semanticProblems(b)).toEqual([]);
    }
  });
});
