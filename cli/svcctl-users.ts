// `svcctl users add|ls|rm|reset` and `svcctl roles ls`. A new user (and a reset) gets a one-time
// reset token: the admin never picks or sees a password (docs/cli.md).
import type { PasswordResetToken__Output } from "../proto/generated/svc/v1/PasswordResetToken.ts";
import { type AdminConnectionOptions, withAdmin } from "./auth-grpc.ts";
import { printJson, printTable } from "./output.ts";

export type GlobalOptions = AdminConnectionOptions & { json?: boolean };

export function splitList(v: string | undefined): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function resetLines(proxy: string, r: PasswordResetToken__Output): string[] {
  return [
    `One-time password reset for ${r.username} (shown only now; valid until ${new Date(Number(r.expires_unix_ms)).toISOString()}):`,
    `  svc login --proxy ${proxy} --reset-token ${r.token}`,
    `  or open https://${proxy}/web/reset?token=${r.token}`,
  ];
}

function resetJson(proxy: string, r: PasswordResetToken__Output) {
  return {
    username: r.username,
    reset_token: r.token,
    reset_url: `https://${proxy}/web/reset?token=${r.token}`,
    login_command: `svc login --proxy ${proxy} --reset-token ${r.token}`,
    expires_at: new Date(Number(r.expires_unix_ms)).toISOString(),
  };
}

export async function usersAdd(
  name: string,
  o: GlobalOptions & { roles?: string; logins?: string },
): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("CreateUser", { name, roles: splitList(o.roles), logins: splitList(o.logins) });
    const reset = r.reset;
    if (!reset) throw new Error("auth returned no reset token");
    if (o.json) {
      printJson({ user: { name, roles: r.user?.roles ?? [] }, ...resetJson(c.profile.proxy, reset) });
      return;
    }
    process.stdout.write(
      [
        `User ${name} created (roles ${(r.user?.roles ?? []).join(", ")}).`,
        ...resetLines(c.profile.proxy, reset),
        "",
      ].join("\n"),
    );
  });
}

export async function usersReset(name: string, o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("CreatePasswordReset", { name });
    if (o.json) {
      printJson({ ...resetJson(c.profile.proxy, r), revoked_sessions: r.revoked_sessions });
      return;
    }
    process.stdout.write(
      [
        `Sessions of ${name} revoked: ${r.revoked_sessions}. The old password works until the reset is used.`,
        ...resetLines(c.profile.proxy, r),
        "",
      ].join("\n"),
    );
  });
}

export async function usersRm(name: string, o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    await c.call("DeleteUser", { name });
    if (o.json) printJson({ deleted: name });
    else process.stdout.write(`User ${name} deleted.\n`);
  });
}

export async function usersLs(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListUsers", {});
    const users = (r.users ?? []).map((u) => ({
      name: u.name,
      roles: u.roles ?? [],
      logins: u.traits?.logins?.values ?? [],
      webauthn_enrolled: u.webauthn_enrolled,
      ...(Number(u.locked_until_unix_ms) > 0
        ? { locked_until: new Date(Number(u.locked_until_unix_ms)).toISOString() }
        : {}),
    }));
    if (o.json) {
      printJson(users);
      return;
    }
    printTable(
      ["USER", "ROLES", "LOGINS", "WEBAUTHN", "LOCKED UNTIL"],
      users.map((u) => [
        u.name,
        u.roles.join(","),
        u.logins.join(","),
        u.webauthn_enrolled ? "yes" : "no",
        u.locked_until ?? "",
      ]),
    );
  });
}

export async function rolesLs(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListRoles", {});
    const roles = (r.roles ?? []).map((x) => ({
      name: x.name,
      spec: JSON.parse(x.spec_json || "{}") as unknown,
    }));
    if (o.json) {
      printJson(roles);
      return;
    }
    printTable(
      ["ROLE", "LOGINS", "NODE LABELS"],
      roles.map((x) => {
        const allow =
          (x.spec as { allow?: { logins?: string[]; node_labels?: Record<string, unknown> } }).allow ?? {};
        return [x.name, (allow.logins ?? []).join(","), JSON.stringify(allow.node_labels ?? {})];
      }),
    );
  });
}
