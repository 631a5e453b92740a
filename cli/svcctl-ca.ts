// `svcctl ca status` and `svcctl ca rotate` (docs/ca-rotation.md): the rotation phases of every
// certificate authority, moved one phase at a time, automatically, or rolled back.
import { parseDuration } from "../core/duration.ts";
import type { CertAuthorityStatus__Output } from "../proto/generated/svc/v1/CertAuthorityStatus.ts";
import { withAdmin } from "./auth-grpc.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printJson, printTable } from "./output.ts";
import type { GlobalOptions } from "./svcctl-users.ts";

export const CA_TYPE_CHOICES = ["user_ssh", "host_ssh", "host_x509", "spiffe", "jwt", "app"] as const;
export const PHASE_CHOICES = ["init", "update_clients", "update_servers", "standby", "rollback"] as const;

const short = (fp: string): string => (fp.startsWith("SHA256:") ? fp.slice(0, 19) : fp.slice(0, 12));

function keysText(s: CertAuthorityStatus__Output): string {
  return s.keys.map((k) => `${k.role}:${short(k.fingerprint)}`).join(" ");
}

function printStatus(list: CertAuthorityStatus__Output[]): void {
  printTable(
    ["TYPE", "PHASE", "MODE", "KEYS", "CHANGED", "NEXT PHASE AT", "OLD KEY EXPIRES"],
    list.map((s) => [
      s.type,
      s.phase,
      s.mode,
      keysText(s),
      s.phase_changed_at || "-",
      s.next_phase_at || "-",
      s.old_key_expires_at || "-",
    ]),
  );
}

export async function caStatus(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListCertAuthorities", {});
    const list = (r.authorities ?? []) as CertAuthorityStatus__Output[];
    if (o.json) printJson(list);
    else printStatus(list);
  });
}

export async function caRotate(
  o: GlobalOptions & { type: string; phase?: string; auto?: boolean; grace?: string; force?: boolean },
): Promise<void> {
  if (!o.auto && !o.phase) throw new CliError("give --phase <phase> or --auto", EXIT.usage);
  if (o.auto && o.phase && o.phase !== "init")
    throw new CliError("--auto starts a rotation at init; it takes no other --phase", EXIT.usage);
  if (o.grace !== undefined && !o.auto) throw new CliError("--grace goes with --auto", EXIT.usage);
  let grace = 0;
  if (o.grace !== undefined) {
    try {
      grace = Math.ceil(parseDuration(o.grace) / 1000);
    } catch {
      throw new CliError(`--grace ${JSON.stringify(o.grace)} is not a duration like 30m or 1h`, EXIT.usage);
    }
  }
  await withAdmin(o, async (c) => {
    const s = (await c.call("RotateCertAuthority", {
      type: o.type,
      phase: o.auto ? "init" : (o.phase ?? ""),
      mode: o.auto ? "auto" : "manual",
      grace_period_seconds: grace,
      force: o.force === true,
    })) as CertAuthorityStatus__Output;
    if (o.json) {
      printJson(s);
      return;
    }
    const lines = [`${s.type}: phase ${s.phase} (${s.mode})`, `  keys: ${keysText(s)}`];
    if (s.next_phase_at) lines.push(`  next phase at ${s.next_phase_at}`);
    if (s.old_key_expires_at) lines.push(`  the old key's certificates expire at ${s.old_key_expires_at}`);
    process.stdout.write(`${lines.join("\n")}\n`);
  });
}
