import { describe, expect, it } from "vitest";
import { isSvcError } from "../../core/errors.ts";
import { checkCsrf, csrfTokenFor, originAllowed, readCredential } from "./credentials.ts";

const id = "AbCdEfGhIjKlMnOpQrStUv0123456789_-";
const origin = "https://proxy.example.com:3080";

describe("readCredential", () => {
  it("takes the bearer header over the cookie", () => {
    expect(readCredential(`Bearer ${id}`, { "__Host-svc_session": "x".repeat(20) })).toEqual({
      sessionId: id,
      via: "bearer",
    });
  });
  it("falls back to the cookie", () => {
    expect(readCredential(undefined, { "__Host-svc_session": id })).toEqual({ sessionId: id, via: "cookie" });
  });
  it("answers undefined without any credential", () => {
    expect(readCredential(undefined, {})).toBeUndefined();
  });
  it.each([
    "Basic abc",
    "Bearer",
    "Bearer short",
    `Bearer ${id} extra`,
    `Bearer ${"a".repeat(300)}`,
    "Bearer a;b=c-xxxxxxxxxxxxxxx",
  ])("refuses a malformed Authorization header %s", (h) => {
    let caught: unknown;
    try {
      readCredential(h, {});
    } catch (err) {
      caught = err;
    }
    expect(isSvcError(caught) && caught.code).toBe("not_authenticated");
  });
});

describe("checkCsrf", () => {
  const good = {
    sessionId: id,
    publicOrigin: origin,
    origin,
    referer: undefined,
    headerToken: csrfTokenFor(id),
  };
  it("accepts same origin + matching token", () => {
    expect(checkCsrf(good)).toEqual({ ok: true });
  });
  it("accepts a same-origin Referer when Origin is absent", () => {
    expect(checkCsrf({ ...good, origin: undefined, referer: `${origin}/web/page` })).toEqual({ ok: true });
  });
  it("refuses without Origin and Referer", () => {
    expect(checkCsrf({ ...good, origin: undefined }).ok).toBe(false);
  });
  it("refuses a foreign origin", () => {
    expect(checkCsrf({ ...good, origin: "https://evil.example.com" }).ok).toBe(false);
    expect(checkCsrf({ ...good, origin: "http://proxy.example.com:3080" }).ok).toBe(false);
  });
  it("refuses a missing or wrong token", () => {
    expect(checkCsrf({ ...good, headerToken: undefined }).ok).toBe(false);
    expect(checkCsrf({ ...good, headerToken: csrfTokenFor(`${id}x`) }).ok).toBe(false);
  });
  it("derives different tokens for different sessions, never the session id itself", () => {
    expect(csrfTokenFor(id)).not.toBe(csrfTokenFor(`${id}x`));
    expect(csrfTokenFor(id)).not.toContain(id);
  });
});

describe("originAllowed", () => {
  it("allows no Origin (non-browser) and our own origin only", () => {
    expect(originAllowed(undefined, origin)).toBe(true);
    expect(originAllowed(origin, origin)).toBe(true);
    expect(originAllowed("https://evil.example.com", origin)).toBe(false);
  });
});
