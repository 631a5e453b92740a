// `svcctl lock add|ls|rm` (docs/locks.md): locks refuse a user, a role, a bot, a node or one
// certificate (by key id) everywhere, until they expire or are removed.

import type { Lock__Output } from "../proto/generated/svc/v1/Lock.ts";
import type { LockTarget } from "../proto/generated/svc/v1/LockTarget.ts";
import { withAdmin } from "./auth-grpc.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printJson, printTable } from "./output.ts";
import { ttlSecondsOf } from "./svc-certs.ts";
import type { GlobalOptions } from "./svcctl-users.ts";

export interface LockAddOptions extends GlobalOptions {
  user?: string;
  role?: string;
  bot?: string;
  node?: string;
  keyId?: string;
  message?: string;
  ttl?: string;
  expires?: string;
  name?: string;
}

export const LOCK_FORMATS = ["text", "json"] as const;

/** --format json or --json. */
const asJson = (o: GlobalOptions & { format?: string }): boolean => o.json === true || o.format === "json";

/** The one target the flags name (exactly one of --user, --role, --bot, --node, --key-id). */
export function lockTargetOf(o: LockAddOptions): LockTarget {
  const given = (
    [
      ["user", o.user],
      ["role", o.role],
      ["bot", o.bot],
      ["node", o.node],
      ["key_id", o.keyId],
    ] as const
  ).filter(([, v]) => v !== undefined);
  const one = given[0];
  if (given.length !== 1 || !one)
    throw new CliError("name exactly one of --user, --role, --bot, --node, --key-id", EXIT.usage);
  const [field, value] = one;
  if (!value) throw new CliError(`--${field.replace("_", "-")} must not be empty`, EXIT.usage);
  return { [field]: value };
}

interface LockView {
  name: string;
  target: string;
  message: string;
  expires: string;
  created_by: string;
  created_at: string;
}

function targetText(t: LockTarget | null | undefined): string {
  for (const [k, v] of Object.entries(t ?? {})) if (typeof v === "string" && v) return `${k}=${v}`;
  return "";
}

export async function lockAdd(o: LockAddOptions & { format?: string }): Promise<void> {
  const target = lockTargetOf(o);
  if (o.ttl !== undefined && o.expires !== undefined)
    throw new CliError("give --ttl or --expires, not both", EXIT.usage);
  if (o.expires !== undefined && Number.isNaN(Date.parse(o.expires)))
    throw new CliError(`--expires ${JSON.stringify(o.expires)} is not an RFC 3339 time`, EXIT.usage);
  await withAdmin(o, async (c) => {
    const l = await c.call("CreateLock", {
      name: o.name ?? "",
      target,
      message: o.message ?? "",
      expires: o.expires ?? "",
      ttl_seconds: ttlSecondsOf(o.ttl),
    });
    const view = lockView(l);
    if (asJson(o)) {
      printJson(view);
      return;
    }
    const until = view.expires ? `until ${view.expires}` : "until removed";
    process.stdout.write(`Lock ${view.name} created: ${view.target} is refused everywhere ${until}.\n`);
  });
}

function lockView(l: Lock__Output): LockView {
  return {
    name: l.name,
    target: targetText(l.target),
    message: l.message,
    expires: l.expires,
    created_by: l.created_by,
    created_at: l.created_at,
  };
}

export async function lockLs(o: GlobalOptions & { format?: string }): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListLocks", {});
    const locks = (r.locks ?? []).map(lockView);
    if (asJson(o)) {
      printJson(locks);
      return;
    }
    printTable(
      ["NAME", "TARGET", "EXPIRES", "CREATED BY", "MESSAGE"],
      locks.map((l) => [l.name, l.target, l.expires || "never", l.created_by, l.message]),
    );
  });
}

export async function lockRm(name: string, o: GlobalOptions & { format?: string }): Promise<void> {
  await withAdmin(o, async (c) => {
    await c.call("DeleteLock", { name });
    if (asJson(o)) printJson({ deleted: name });
    else process.stdout.write(`Lock ${name} removed.\n`);
  });
}
