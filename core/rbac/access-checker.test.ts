import { describe, expect, it } from "vitest";
import { AccessDeniedError } from "../errors.ts";
import { parseResource, presets, type Role, type User } from "../resources/index.ts";
import { AccessChecker, type AccessSubject, accessForUser } from "./index.ts";

function role(name: string, spec: Record<string, unknown>): Role {
  const r = parseResource({ apiVersion: "svc.dev/v1", kind: "Role", metadata: { name }, spec });
  if (r.kind !== "Role") throw new Error("expected Role");
  return r;
}

const preset = (name: string): Role => presets().find((r) => r.metadata.name === name)!;
const admin = preset("admin");
const access = preset("access");

const prodOnly = role("prod", {
  allow: {
    logins: ["deploy", "{{internal.logins}}"],
    node_labels: { env: "prod", region: ["eu-1", "^us-[a-z]+-[0-9]$"] },
  },
});
const denyRoot = role("no-root", { deny: { logins: ["root"] } });
const denyProd = role("no-prod", { deny: { node_labels: { env: "prod" } } });
const denyDeleteUsers = role("no-delete-users", {
  deny: { rules: [{ resources: ["users"], verbs: ["delete"] }] },
});
const auditor = role("auditor", {
  allow: { rules: [{ resources: ["audit", "sessions"], verbs: ["list", "read"] }] },
});
const external = role("sso", {
  allow: { logins: ["{{external.github_login}}", "gh-{{external.github_login}}"], node_labels: { "*": "*" } },
});
const regexAlt = role("alt", { allow: { logins: ["x"], node_labels: { host: "^web|db$" } } });
const brokenDenyRegex = role("broken-deny", { deny: { node_labels: { env: "^(prod$" } } });
const brokenAllowRegex = role("broken-allow", { allow: { logins: ["y"], node_labels: { env: "^(prod$" } } });
const workloads = role("workloads", { allow: { workload_spiffe_ids: ["/svc/ci/*", "/svc/batch/job-?"] } });
const denyWorkloads = role("no-deploy-workload", { deny: { workload_spiffe_ids: ["/svc/ci/deploy*"] } });
const locked = role("locked", { options: { lock: true } });

const traits = { logins: ["alice", "ubuntu"] };
const subject = (roles: Role[], extra: Partial<AccessSubject> = {}): AccessChecker =>
  new AccessChecker({ name: "alice", roles, traits, ...extra });

const prodEu = { env: "prod", region: "eu-1" };
const prodUs = { env: "prod", region: "us-east-1" };
const staging = { env: "staging", region: "eu-1" };

describe("canLogin", () => {
  const cases: [string, Role[], string, Record<string, string>, boolean, RegExp][] = [
    ["admin template login anywhere", [admin], "alice", staging, true, /allowed by role "admin"/],
    ["admin literal root", [admin], "root", {}, true, /admin/],
    ["deny login wins over admin", [admin, denyRoot], "root", staging, false, /denied by role "no-root"/],
    ["deny node wins over admin", [admin, denyProd], "alice", prodEu, false, /node denied by role "no-prod"/],
    ["deny node leaves other nodes", [admin, denyProd], "alice", staging, true, /admin/],
    ["access has no root", [access], "root", staging, false, /no role allows/],
    ["exact + list value", [prodOnly], "deploy", prodEu, true, /prod/],
    ["regex value matches", [prodOnly], "deploy", prodUs, true, /prod/],
    ["regex is anchored", [prodOnly], "deploy", { env: "prod", region: "xus-east-1" }, false, /no role/],
    [
      "regex anchored at the end",
      [prodOnly],
      "deploy",
      { env: "prod", region: "us-east-12" },
      false,
      /no role/,
    ],
    ["all keys must match", [prodOnly], "deploy", { env: "prod" }, false, /no role/],
    ["wrong value", [prodOnly], "deploy", staging, false, /no role/],
    ["template login from trait", [prodOnly], "ubuntu", prodEu, true, /prod/],
    ["login not granted by any role", [prodOnly], "postgres", prodEu, false, /no role/],
    ["alternation stays inside the anchors", [regexAlt], "x", { host: "webserver" }, false, /no role/],
    ["alternation first branch", [regexAlt], "x", { host: "web" }, true, /alt/],
    ["alternation second branch", [regexAlt], "x", { host: "db" }, true, /alt/],
    ["broken deny regex fails closed", [admin, brokenDenyRegex], "alice", staging, false, /broken-deny/],
    ["broken allow regex grants nothing", [brokenAllowRegex], "y", { env: "prod" }, false, /no role/],
    ["no roles", [], "alice", {}, false, /no role/],
    ["locked role blocks everything", [admin, locked], "alice", staging, false, /locked/],
  ];
  it.each(cases)("%s", (_label, roles, login, labels, allowed, reason) => {
    const decision = subject(roles).canLogin(login, labels);
    expect(decision.allowed).toBe(allowed);
    expect(decision.reason).toMatch(reason);
  });

  it("refuses label values longer than the match limit", () => {
    const r = role("re", { allow: { logins: ["x"], node_labels: { k: "^a*$" } } });
    expect(subject([r]).canLogin("x", { k: "a".repeat(1024) }).allowed).toBe(true);
    expect(subject([r]).canLogin("x", { k: "a".repeat(1025) }).allowed).toBe(false);
  });
});

describe("loginsFor", () => {
  const cases: [string, Role[], AccessSubject["traits"], Record<string, string> | undefined, string[]][] = [
    ["admin: trait logins plus root", [admin], traits, undefined, ["alice", "root", "ubuntu"]],
    ["deny removes root", [admin, denyRoot], traits, undefined, ["alice", "ubuntu"]],
    ["missing trait yields nothing", [access], {}, undefined, []],
    ["empty trait yields nothing", [access], { logins: [] }, undefined, []],
    ["empty trait value skipped", [access], { logins: ["", "bob"] }, undefined, ["bob"]],
    ["only roles that match the node", [access, prodOnly], traits, staging, ["alice", "ubuntu"]],
    ["node matching both roles", [access, prodOnly], traits, prodEu, ["alice", "deploy", "ubuntu"]],
    ["denied node gets nothing", [admin, denyProd], traits, prodEu, []],
    [
      "deny by template",
      [admin, role("no-trait", { deny: { logins: ["{{internal.logins}}"] } })],
      traits,
      undefined,
      ["root"],
    ],
  ];
  it.each(cases)("%s", (_label, roles, t, labels, expected) => {
    expect(subject(roles, { traits: t }).loginsFor(labels)).toEqual(expected);
  });

  it("external templates read the SSO traits, internal ones the User's", () => {
    const checker = subject([external, access], { externalTraits: { github_login: ["octo"] } });
    expect(checker.loginsFor()).toEqual(["alice", "gh-octo", "octo", "ubuntu"]);
    expect(subject([external]).loginsFor()).toEqual([]);
  });
});

describe("canSeeNode", () => {
  const cases: [string, Role[], Record<string, string>, boolean][] = [
    ["wildcard key and value", [access], {}, true],
    ["matching selector", [prodOnly], prodEu, true],
    ["not matching selector", [prodOnly], staging, false],
    ["deny wins", [access, denyProd], prodEu, false],
    ["role without node_labels sees nothing", [auditor], prodEu, false],
  ];
  it.each(cases)("%s", (_label, roles, labels, expected) => {
    expect(subject(roles).canSeeNode(labels)).toBe(expected);
  });
});

describe("checkAppAccess (app_labels, as node_labels)", () => {
  const grafana = { name: "grafana", labels: { env: "staging", team: "web" } };
  const prodApp = { name: "billing", labels: { env: "prod", team: "pay" } };
  const unlabelled = { name: "wiki" };
  const webApps = role("web-apps", { allow: { app_labels: { team: "web" } } });
  const stagingTeams = role("staging-teams", {
    allow: { app_labels: { env: "staging", team: ["^(web|data)$", "ops"] } },
  });
  const allApps = role("all-apps", { allow: { app_labels: { "*": "*" } } });
  const noProdApps = role("no-prod-apps", { deny: { app_labels: { env: "prod" } } });
  const noAnyApps = role("no-apps", { deny: { app_labels: { "*": "*" } } });
  const payApps = role("pay-apps", { allow: { app_labels: { team: "pay" } } });
  // Node labels grant no app, and app labels no node: the two selectors are separate.
  const nodesOnly = role("nodes-only", { allow: { logins: ["x"], node_labels: { "*": "*" } } });
  const brokenDeny = role("broken-app-deny", { deny: { app_labels: { env: "^(prod$" } } });

  const cases: [string, Role[], { name: string; labels?: Record<string, string> }, boolean, RegExp][] = [
    ["exact label allows", [webApps], grafana, true, /app "grafana" allowed by role "web-apps"/],
    ["exact label does not match another app", [webApps], prodApp, false, /no role allows app "billing"/],
    ["regex and list values (anchored)", [stagingTeams], grafana, true, /staging-teams/],
    [
      "regex anchored: every allow key must match",
      [stagingTeams],
      { name: "x", labels: { env: "staging", team: "webby" } },
      false,
      /no role allows/,
    ],
    ["wildcard reaches an app without labels", [allApps], unlabelled, true, /all-apps/],
    ["a role with no app_labels grants nothing", [auditor], grafana, false, /no role allows app "grafana"/],
    ["node_labels do not grant apps", [nodesOnly], grafana, false, /no role allows/],
    ["no roles, no apps", [], grafana, false, /no role allows/],
    ["deny wins over wildcard allow", [allApps, noProdApps], prodApp, false, /denied by role "no-prod-apps"/],
    ["deny wins regardless of role order", [noProdApps, payApps], prodApp, false, /no-prod-apps/],
    ["deny leaves other apps", [allApps, noProdApps], grafana, true, /all-apps/],
    ["wildcard deny ends all app access", [admin, noAnyApps], unlabelled, false, /denied by role "no-apps"/],
    ["several roles: the one that matches grants", [webApps, payApps], prodApp, true, /pay-apps/],
    [
      "a deny regex that does not compile denies (fail closed)",
      [allApps, brokenDeny],
      prodApp,
      false,
      /broken/,
    ],
    ["a role option lock denies", [allApps, locked], grafana, false, /locked/],
    ["preset admin reaches every app", [admin], prodApp, true, /admin/],
    ["preset access reaches every app", [access], unlabelled, true, /access/],
  ];
  it.each(cases)("%s", (_label, roles, app, allowed, reason) => {
    const decision = subject(roles).checkAppAccess(app);
    expect(decision.allowed).toBe(allowed);
    expect(decision.reason).toMatch(reason);
    expect(subject(roles).canAccessApp(app)).toBe(allowed);
  });

  it("assertAppAccess throws AccessDeniedError naming the app, not the role", () => {
    expect(() => subject([allApps, noProdApps]).assertAppAccess(prodApp)).toThrow(AccessDeniedError);
    expect(() => subject([allApps, noProdApps]).assertAppAccess(prodApp)).toThrow(
      /^access denied: app billing$/,
    );
    expect(() => subject([webApps]).assertAppAccess(grafana)).not.toThrow();
  });

  it("a disabled user reaches no app", () => {
    const u = parseResource({
      apiVersion: "svc.dev/v1",
      kind: "User",
      metadata: { name: "alice" },
      spec: { roles: ["admin"], disabled: true },
    }) as User;
    const { checker } = accessForUser(u, (n) => presets().find((r) => r.metadata.name === n));
    expect(checker.canAccessApp(grafana)).toBe(false);
  });
});

describe("can (admin API rules)", () => {
  const cases: [string, Role[], string, string, boolean][] = [
    ["admin: any resource and verb from its rules", [admin], "users", "delete", true],
    ["admin: unknown resource covered by *", [admin], "agent_identities", "create", true],
    ["access lists nodes", [access], "nodes", "list", true],
    ["access cannot read nodes", [access], "nodes", "read", false],
    ["access cannot list users", [access], "users", "list", false],
    ["deny wins over admin", [admin, denyDeleteUsers], "users", "delete", false],
    ["deny is specific", [admin, denyDeleteUsers], "users", "update", true],
    ["auditor reads audit", [auditor], "audit", "read", true],
    ["auditor cannot delete audit", [auditor], "audit", "delete", false],
    ["no roles", [], "nodes", "list", false],
    ["locked", [admin, locked], "nodes", "list", false],
  ];
  it.each(cases)("%s", (_label, roles, resource, verb, expected) => {
    expect(subject(roles).can(resource, verb)).toBe(expected);
  });

  it("a role merely named admin has no power without rules", () => {
    const fake = role("admin", { allow: { logins: ["x"] } });
    expect(subject([fake]).can("users", "list")).toBe(false);
  });

  it("assertCan throws AccessDeniedError", () => {
    expect(() => subject([access]).assertCan("users", "list")).toThrow(AccessDeniedError);
    expect(() => subject([admin]).assertCan("users", "list")).not.toThrow();
  });
});

describe("spiffeAllowed (globs)", () => {
  const cases: [string, Role[], string, boolean][] = [
    ["star glob", [workloads], "/svc/ci/build", true],
    ["star crosses segments", [workloads], "/svc/ci/a/b", true],
    ["question mark one char", [workloads], "/svc/batch/job-7", true],
    ["question mark not two", [workloads], "/svc/batch/job-77", false],
    ["prefix outside glob", [workloads], "/other/svc/ci/build", false],
    ["dots are literal", [role("dot", { allow: { workload_spiffe_ids: ["/a.b"] } })], "/axb", false],
    ["deny wins", [workloads, denyWorkloads], "/svc/ci/deploy-prod", false],
    ["deny is narrow", [workloads, denyWorkloads], "/svc/ci/test", true],
    ["no spiffe ids", [admin], "/svc/ci/build", false],
  ];
  it.each(cases)("%s", (_label, roles, path, expected) => {
    expect(subject(roles).spiffeAllowed(path)).toBe(expected);
  });
});

describe("options merging", () => {
  const strict = role("strict", {
    options: { max_session_ttl: "1h", permit_port_forwarding: false, require_mfa: true, permit_pty: false },
  });
  const loose = role("loose", {
    options: { max_session_ttl: "30h", permit_x11_forwarding: true, permit_agent_forwarding: true },
  });
  const x11 = role("x11", { options: { permit_x11_forwarding: true } });

  it("defaults with one default role", () => {
    expect(subject([access]).options()).toEqual({
      maxSessionTtlMs: 12 * 3_600_000,
      permitPortForwarding: true,
      permitAgentForwarding: true,
      permitX11Forwarding: false,
      permitPty: true,
      permitUserRc: true,
      requireMfa: false,
      locked: false,
    });
  });

  it("most restrictive wins", () => {
    expect(subject([loose, strict]).options()).toMatchObject({
      maxSessionTtlMs: 3_600_000,
      permitPortForwarding: false,
      permitAgentForwarding: true,
      permitX11Forwarding: false,
      permitPty: false,
      requireMfa: true,
    });
  });

  it("the smallest ttl wins even when it is the default", () => {
    expect(subject([loose, access]).options().maxSessionTtlMs).toBe(12 * 3_600_000);
    expect(subject([loose]).options().maxSessionTtlMs).toBe(30 * 3_600_000);
  });

  it("x11 only when every role permits it", () => {
    expect(subject([x11, loose]).options().permitX11Forwarding).toBe(true);
    expect(subject([x11, access]).options().permitX11Forwarding).toBe(false);
  });

  it("options() returns a copy", () => {
    const checker = subject([access]);
    checker.options().requireMfa = true;
    expect(checker.options().requireMfa).toBe(false);
  });
});

describe("accessForUser", () => {
  const user = (spec: Record<string, unknown>): User => {
    const u = parseResource({ apiVersion: "svc.dev/v1", kind: "User", metadata: { name: "alice" }, spec });
    if (u.kind !== "User") throw new Error("expected User");
    return u;
  };
  const lookup = (name: string) => presets().find((r) => r.metadata.name === name);

  it("resolves roles and traits, reports missing roles", () => {
    const { checker, missingRoles } = accessForUser(user({ roles: ["access", "ghost"], traits }), lookup);
    expect(missingRoles).toEqual(["ghost"]);
    expect(checker.roleNames).toEqual(["access"]);
    expect(checker.loginsFor()).toEqual(["alice", "ubuntu"]);
  });

  it("a disabled user gets nothing", () => {
    const { checker } = accessForUser(user({ roles: ["admin"], traits, disabled: true }), lookup);
    expect(checker.loginsFor()).toEqual([]);
    expect(checker.can("nodes", "list")).toBe(false);
  });
});
