// The launch page's only ways out (console/src/pages/launch-target.ts): the server's login_url on
// the requested app host, over https, at the proxy's login path, and a path on that host.
import { describe, expect, it } from "vitest";
import { appLoginTarget, safeAppPath } from "../console/src/pages/launch-target.ts";

const params = { code: "c0de", state: "st-ate", path: "/headers?a=1&b=2" };

describe("appLoginTarget", () => {
  it("adds the code, the state and the path to the server's login_url", () => {
    const target = appLoginTarget(
      "https://grafana.svc.example:3080/x-svc/app-login",
      "grafana.svc.example",
      params,
    );
    const url = new URL(target ?? "");
    expect(url.origin).toBe("https://grafana.svc.example:3080");
    expect(url.pathname).toBe("/x-svc/app-login");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      code: "c0de",
      state: "st-ate",
      path: "/headers?a=1&b=2",
    });
    // The requested host is compared without case or port.
    expect(
      appLoginTarget("https://grafana.svc.example/x-svc/app-login", "Grafana.svc.example:443", params),
    ).toBe(
      "https://grafana.svc.example/x-svc/app-login?code=c0de&state=st-ate&path=%2Fheaders%3Fa%3D1%26b%3D2",
    );
  });

  it("refuses any other address", () => {
    for (const bad of [
      "http://grafana.svc.example/x-svc/app-login",
      "https://evil.example/x-svc/app-login",
      "https://grafana.svc.example.evil.example/x-svc/app-login",
      "https://grafana.svc.example/x-svc/app-login/..%2Fother",
      "https://grafana.svc.example/other",
      "https://user:pw@grafana.svc.example/x-svc/app-login",
      "https://grafana.svc.example/x-svc/app-login?next=https://evil.example",
      "https://grafana.svc.example/x-svc/app-login#x",
      "javascript:alert(1)//grafana.svc.example/x-svc/app-login",
      "/x-svc/app-login",
      "",
    ]) {
      expect(appLoginTarget(bad, "grafana.svc.example", params), bad).toBeUndefined();
    }
  });
});

describe("safeAppPath", () => {
  it("keeps a path on the app host and turns anything else into /", () => {
    expect(safeAppPath("/headers?x=1")).toBe("/headers?x=1");
    expect(safeAppPath("/")).toBe("/");
    for (const bad of [
      null,
      "",
      "headers",
      "//evil.example/",
      "/\\evil.example",
      "/a\r\nSet-Cookie: x",
      "https://evil.example/",
    ]) {
      expect(safeAppPath(bad), String(bad)).toBe("/");
    }
  });
});
