// The per-checker memos of what goes into a user certificate (the same content as a fresh build,
// never shared across users, traits or checkers, never handed out for a caller to mutate).
import { describe, expect, it } from "vitest";
import { CERT_IDENTITY_EXTENSION, decodeCertIdentity } from "../../core/rbac/cert-identity.ts";
import { AccessChecker } from "../../core/rbac/index.ts";
import { parseResource, type Role } from "../../core/resources/index.ts";
import {
  certPrincipals,
  identityExtension,
  sshExtensionsOf,
  userIdentityExtension,
} from "./user-cert-content.ts";

function role(name: string, spec: Record<string, unknown>): Role {
  const r = parseResource({ apiVersion: "svc.dev/v1", kind: "Role", metadata: { name }, spec });
  if (r.kind !== "Role") throw new Error("expected Role");
  return r;
}
const dev = role("dev", {
  allow: { logins: ["{{internal.logins}}", "deploy"], node_labels: { "*": "*" } },
  options: { permit_pty: true },
});
const ops = role("ops", { allow: { logins: ["root"], node_labels: { "*": "*" } } });

describe("user certificate content", () => {
  it("identity extension: one sealed object per checker and traits, equal to a fresh encoding", () => {
    const traits = { logins: ["bob"] };
    const checker = new AccessChecker({ name: "bob", roles: [dev, ops], traits });
    const a = userIdentityExtension(checker, "bob", traits);
    expect(userIdentityExtension(checker, "bob", traits)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual(identityExtension({ kind: "user", name: "bob", roles: ["dev", "ops"], traits }));
    expect(decodeCertIdentity(a)).toEqual({ kind: "user", name: "bob", roles: ["dev", "ops"], traits });
    // A replaced User (new traits object), another name or another checker is built afresh.
    const traits2 = { logins: ["bob", "bobby"] };
    const b = userIdentityExtension(checker, "bob", traits2);
    expect(b).not.toBe(a);
    expect(JSON.parse(b[CERT_IDENTITY_EXTENSION] as string).traits).toEqual(traits2);
    expect(
      JSON.parse(userIdentityExtension(checker, "carl", traits2)[CERT_IDENTITY_EXTENSION] as string).name,
    ).toBe("carl");
    const other = new AccessChecker({ name: "bob", roles: [ops], traits });
    expect(
      JSON.parse(userIdentityExtension(other, "bob", traits)[CERT_IDENTITY_EXTENSION] as string).roles,
    ).toEqual(["ops"]);
    expect(
      JSON.parse(userIdentityExtension(other, "bob", undefined)[CERT_IDENTITY_EXTENSION] as string).traits,
    ).toEqual({});
  });

  it("principals: a fresh array each time, the logins the roles grant", () => {
    const checker = new AccessChecker({ name: "bob", roles: [dev, ops], traits: { logins: ["bob"] } });
    const first = certPrincipals(checker, []);
    expect(first).toEqual(["bob", "deploy", "root"]);
    first.push("injected");
    const node = { id: "n1", hostname: "h", labels: {}, agentless: true };
    expect(certPrincipals(checker, [node])).toEqual([
      "bob",
      "deploy",
      "root",
      "bob@n1",
      "deploy@n1",
      "root@n1",
    ]);
    expect(certPrincipals(checker, [])).toEqual(["bob", "deploy", "root"]);
    const locked = new AccessChecker({
      name: "bob",
      roles: [dev, role("l", { options: { lock: true } })],
      traits: {},
    });
    expect(certPrincipals(locked, [node])).toEqual([]);
  });

  it("permit extensions follow the checker's options and cannot be changed by a caller", () => {
    const checker = new AccessChecker({ name: "bob", roles: [dev], traits: {} });
    const ext = sshExtensionsOf(checker);
    expect(ext).toContain("permit-pty");
    expect(sshExtensionsOf(checker)).toBe(ext);
    expect(Object.isFrozen(ext)).toBe(true);
    const none = role("none", { options: { permit_pty: false } });
    expect(sshExtensionsOf(new AccessChecker({ name: "bob", roles: [none], traits: {} }))).not.toContain(
      "permit-pty",
    );
  });
});
