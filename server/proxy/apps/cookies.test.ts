// The app host's cookie helpers: the redirect path after login, our cookies kept from the app,
// the state comparison.
import { describe, expect, it } from "vitest";
import {
  cookieValue,
  safePath,
  sameState,
  sessionCookie,
  setsOurCookie,
  withoutOurCookies,
} from "./cookies.ts";

describe("safePath", () => {
  it("keeps a path on this host with its query", () => {
    expect(safePath("/dashboards/x?from=now-1h&to=now")).toBe("/dashboards/x?from=now-1h&to=now");
    expect(safePath("/")).toBe("/");
  });

  it("turns anything that could leave the host into /", () => {
    for (const p of [
      undefined,
      "",
      "//evil.example",
      "/\\evil.example",
      "/.\\evil",
      "https://evil.example/",
      "javascript:alert(1)",
      "evil",
      "/a\r\nSet-Cookie: x=y",
      "/a\tb",
      `/${"a".repeat(9000)}`,
    ]) {
      expect(safePath(p), String(p)).toBe("/");
    }
  });
});

describe("cookies", () => {
  it("strips only our two cookies from what the app gets", () => {
    expect(withoutOurCookies("a=1; __Host-svc_app_session=x; b=2; __Host-svc_app_state=y")).toBe("a=1; b=2");
    expect(withoutOurCookies("__Host-svc_app_session=x")).toBeUndefined();
    expect(withoutOurCookies(undefined)).toBeUndefined();
    expect(withoutOurCookies("__Host-svc_app_session_other=1")).toBe("__Host-svc_app_session_other=1");
  });

  it("reads the first value of a cookie", () => {
    expect(
      cookieValue("a=1; __Host-svc_app_session=abc; __Host-svc_app_session=def", "__Host-svc_app_session"),
    ).toBe("abc");
    expect(cookieValue("a=1", "__Host-svc_app_session")).toBeUndefined();
  });

  it("sees the app setting one of ours", () => {
    expect(setsOurCookie("__Host-svc_app_session=planted; Path=/")).toBe(true);
    expect(setsOurCookie(" __Host-svc_app_state=x")).toBe(true);
    expect(setsOurCookie("theme=dark; Path=/")).toBe(false);
  });

  it("makes a host-only session cookie (no Domain) with a whole, non-negative Max-Age", () => {
    expect(sessionCookie("id", 10.9)).toBe(
      "__Host-svc_app_session=id; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=10",
    );
    expect(sessionCookie("id", -5)).toContain("Max-Age=0");
  });

  it("compares states in full", () => {
    const s = "A".repeat(43);
    expect(sameState(s, s)).toBe(true);
    expect(sameState(s, `${s}A`)).toBe(false);
    expect(sameState(s, "B".repeat(43))).toBe(false);
    expect(sameState(undefined, s)).toBe(false);
    expect(sameState("", "")).toBe(false);
  });
});
