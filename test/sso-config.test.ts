// The SSO keys of the config file (auth.local_login, auth.default_connector, auth.sso.ca_file)
// and the chart values that set them (auth.localLogin, auth.defaultConnector, auth.sso.*),
// rendered with helm and read back by the config schema.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { checkConfig, defaultConfig } from "../server/config.ts";
import { chart, ci, find, helm, type K8sObject, render } from "./chart-helm.ts";

type PodDeployment = {
  spec: {
    template: {
      spec: {
        containers: { volumeMounts?: { name: string; mountPath: string }[] }[];
        volumes?: { name: string; configMap?: { name: string } }[];
      };
    };
  };
};

const configOf = (objects: K8sObject[]) =>
  checkConfig(parse(find(objects, "ConfigMap", "svc-config").data?.["svc.yaml"] ?? ""), "chart");

describe("SSO configuration", () => {
  it("defaults to password logins on, no default connector, no extra CA", () => {
    const c = defaultConfig({ clusterName: "c", publicHost: "localhost" });
    expect(c.auth.local_login).toBe(true);
    expect(c.auth.default_connector).toBeUndefined();
    expect(c.auth.sso).toBeUndefined();
    const bad = { ...c, auth: { ...c.auth, default_connector: "Not A Name" } };
    expect(() => checkConfig(bad)).toThrow(/auth\.default_connector/);
  });

  it("the chart renders the keys, and mounts the CA ConfigMap into auth only", async () => {
    const defaults = configOf(await render(["-f", ci("default")]));
    expect(defaults.auth.local_login).toBe(true);
    expect(defaults.auth.sso).toBeUndefined();
    const objects = await render([
      "-f",
      ci("default"),
      "--set",
      "auth.localLogin=false",
      "--set",
      "auth.defaultConnector=corp",
      "--set",
      "auth.sso.caConfigMap=idp-ca",
    ]);
    const c = configOf(objects);
    expect(c.auth.local_login).toBe(false);
    expect(c.auth.default_connector).toBe("corp");
    expect(c.auth.sso?.ca_file).toBe("/var/run/svc/sso-ca/ca.crt");
    const auth = find<PodDeployment>(objects, "Deployment", "svc-auth").spec.template.spec;
    expect(auth.volumes?.find((v) => v.name === "sso-ca")?.configMap?.name).toBe("idp-ca");
    expect(auth.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ name: "sso-ca", mountPath: "/var/run/svc/sso-ca" }),
    );
    const proxy = find<PodDeployment>(objects, "Deployment", "svc-proxy").spec.template.spec;
    expect(proxy.volumes?.some((v) => v.name === "sso-ca")).toBe(false);
  });

  it("the chart's schema refuses a malformed default connector", async () => {
    const r = await helm([
      "template",
      "t",
      chart,
      "-f",
      ci("default"),
      "--set",
      "auth.defaultConnector=Bad_Name",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/defaultConnector/);
  });
});
