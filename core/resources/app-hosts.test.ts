import { describe, expect, it } from "vitest";
import { appAtHost, appHostConflicts } from "./app-hosts.ts";

const app = (name: string, public_addr?: string) => ({
  metadata: { name },
  spec: { uri: "http://127.0.0.1:8080", ...(public_addr ? { public_addr } : {}) },
});

describe("appAtHost", () => {
  const grafana = app("grafana");
  const wiki = app("wiki", "docs.proxy.example");
  it("finds an App by its default host and by its public_addr, case-insensitively", () => {
    expect(appAtHost([grafana, wiki], "grafana.proxy.example", "proxy.example")).toBe(grafana);
    expect(appAtHost([grafana, wiki], "DOCS.proxy.example", "proxy.example")).toBe(wiki);
    // An explicit public_addr replaces the default host.
    expect(appAtHost([grafana, wiki], "wiki.proxy.example", "proxy.example")).toBeUndefined();
  });

  it("reaches no App outside one label under the proxy host (the main host, deeper names, other domains)", () => {
    const main = app("main", "proxy.example");
    const deep = app("deep", "a.b.proxy.example");
    const other = app("other", "grafana.elsewhere.example");
    const apps = [main, deep, other];
    expect(appAtHost(apps, "proxy.example", "proxy.example")).toBeUndefined();
    expect(appAtHost(apps, "a.b.proxy.example", "proxy.example")).toBeUndefined();
    expect(appAtHost(apps, "grafana.elsewhere.example", "proxy.example")).toBeUndefined();
  });

  it("refuses a host two Apps claim (a public_addr shadowing another App's default host)", () => {
    const shadow = app("shadow", "grafana.proxy.example");
    expect(appAtHost([grafana, shadow], "grafana.proxy.example", "proxy.example")).toBeUndefined();
    expect(appAtHost([shadow, grafana], "grafana.proxy.example", "proxy.example")).toBeUndefined();
    expect(appHostConflicts([grafana, shadow, wiki], "proxy.example")).toEqual(
      new Map([["grafana.proxy.example", ["grafana", "shadow"]]]),
    );
    expect(appHostConflicts([grafana, wiki], "proxy.example").size).toBe(0);
  });
});
