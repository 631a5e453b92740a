// `svcctl tokens add|ls|rm` (node join tokens) and `svcctl agent-identities add|ls|rm` (bots).
// Secrets are printed once with the command that uses them and the host CA pin to verify auth.
// The command names the proxy's public address (--proxy), which nodes and bots can reach from
// outside the cluster, whenever that proxy routes gRPC to auth; else auth's address as before.
import { caPin } from "../server/agent/ca-pin.ts";
import { authRouteViaProxy } from "../server/auth/via-proxy.ts";
import { type AdminConnection, withAdmin } from "./auth-grpc.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { formatLabels, printJson, printTable } from "./output.ts";
import { ttlSecondsOf } from "./svc-certs.ts";
import { type GlobalOptions, splitList } from "./svcctl-users.ts";

/** "k=v,k2=v2" -> labels. */
export function parseLabelList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of splitList(text)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new CliError(`label ${JSON.stringify(part)} must be key=value`, EXIT.usage);
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

const iso = (ms: number | string): string => (Number(ms) > 0 ? new Date(Number(ms)).toISOString() : "");

/**
 * "--proxy <addr>" when the connection went through a proxy or the profile's proxy routes to auth
 * (its ping says so); "--auth <addr>" when auth is only known directly.
 */
async function targetFlag(c: AdminConnection): Promise<string> {
  if (c.proxyAddress) return `--proxy ${c.proxyAddress}`;
  const proxy = c.profile.proxy;
  const routes = await authRouteViaProxy(proxy, { timeoutMs: 5_000 }).then(
    () => true,
    () => false,
  );
  return routes ? `--proxy ${proxy}` : `--auth ${c.authAddress}`;
}

function agentCommand(target: string, token: string, pin: string): string {
  return `svcd agent ${target} --ca-pin ${pin} --token ${token} --data-dir /var/lib/svc-agent`;
}

export async function tokensAdd(
  o: GlobalOptions & { name?: string; ttl?: string; labels?: string },
): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("CreateJoinToken", {
      name: o.name ?? "",
      ttl_seconds: ttlSecondsOf(o.ttl),
      node_labels: o.labels ? parseLabelList(o.labels) : {},
    });
    const pin = caPin(c.caPem);
    const command = agentCommand(await targetFlag(c), r.token, pin);
    if (o.json) {
      printJson({
        name: r.info?.name ?? "",
        token: r.token,
        expires_at: iso(r.info?.expires_unix_ms ?? 0),
        ca_pin: pin,
        agent_command: command,
      });
      return;
    }
    process.stdout.write(
      [
        `Join token ${r.info?.name} (one node, shown only now, valid until ${iso(r.info?.expires_unix_ms ?? 0)}):`,
        `  ${r.token}`,
        "Start the node with:",
        `  ${command}`,
        "",
      ].join("\n"),
    );
  });
}

export async function tokensLs(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListJoinTokens", {});
    const tokens = (r.tokens ?? []).map((t) => ({
      name: t.name,
      roles: t.roles ?? [],
      join_method: t.join_method,
      expires_at: iso(t.expires_unix_ms),
      node_labels: t.node_labels ?? {},
      ...(t.bot_name ? { bot_name: t.bot_name } : {}),
    }));
    if (o.json) {
      printJson(tokens);
      return;
    }
    printTable(
      ["TOKEN", "ROLES", "METHOD", "EXPIRES", "LABELS"],
      tokens.map((t) => [
        t.name,
        t.roles.join(","),
        t.join_method,
        t.expires_at,
        formatLabels(t.node_labels),
      ]),
    );
  });
}

export async function tokensRm(name: string, o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    await c.call("DeleteJoinToken", { name });
    if (o.json) printJson({ deleted: name });
    else process.stdout.write(`Token ${name} deleted.\n`);
  });
}

export async function nodesRm(node: string, o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("DeleteNode", { node });
    if (o.json) printJson({ deleted: r.id, hostname: r.hostname });
    else
      process.stdout.write(`Node ${r.hostname} (${r.id}) removed; its certificates no longer reach auth.\n`);
  });
}

export async function nodesLs(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListNodes", {});
    const nodes = (r.nodes ?? [])
      .map((n) => ({
        id: n.id,
        hostname: n.hostname,
        addresses: n.addresses ?? [],
        labels: n.labels ?? {},
        status: n.status,
        last_heartbeat: iso(n.last_heartbeat_unix_ms),
        version: n.version,
      }))
      .sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
    if (o.json) {
      printJson(nodes);
      return;
    }
    printTable(
      ["NODE", "ID", "STATUS", "ADDRESS", "VERSION", "LABELS"],
      nodes.map((n) => [
        n.hostname,
        n.id,
        n.status,
        n.addresses.join(","),
        n.version,
        formatLabels(n.labels),
      ]),
    );
  });
}

export async function agentIdentitiesAdd(
  name: string,
  o: GlobalOptions & {
    roles?: string;
    ttl?: string;
    tokenTtl?: string;
    allowWorkloadSvids?: boolean;
    join?: string;
  },
): Promise<void> {
  if (o.join && o.join !== "token") {
    // Spec 4.5: the bot bootstrap flow has no IAM join; say so instead of creating half a bot.
    throw new CliError(
      `agent identities bootstrap with a one-time token only; --join ${o.join} is not supported`,
      EXIT.usage,
    );
  }
  await withAdmin(o, async (c) => {
    const r = await c.call("CreateAgentIdentity", {
      name,
      roles: splitList(o.roles),
      cert_ttl: o.ttl ?? "",
      token_ttl_seconds: ttlSecondsOf(o.tokenTtl),
      allow_workload_svids: o.allowWorkloadSvids === true,
    });
    const pin = caPin(c.caPem);
    const command = `svcd bot ${await targetFlag(c)} --ca-pin ${pin} --token ${r.token} --out /var/lib/svc-bot/${name}`;
    if (o.json) {
      printJson({
        name,
        roles: r.identity?.roles ?? [],
        cert_ttl: r.identity?.cert_ttl ?? "",
        token: r.token,
        expires_at: iso(r.token_expires_unix_ms),
        ca_pin: pin,
        bot_command: command,
      });
      return;
    }
    process.stdout.write(
      [
        `Agent identity ${name} created (roles ${(r.identity?.roles ?? []).join(", ")}).`,
        `Bootstrap token (one use, shown only now, valid until ${iso(r.token_expires_unix_ms)}):`,
        `  ${r.token}`,
        "Run the bot with:",
        `  ${command}`,
        "",
      ].join("\n"),
    );
  });
}

export async function agentIdentitiesLs(o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    const r = await c.call("ListAgentIdentities", {});
    const bots = (r.identities ?? []).map((b) => ({
      name: b.name,
      roles: b.roles ?? [],
      cert_ttl: b.cert_ttl,
      allow_workload_svids: b.allow_workload_svids,
      generation: Number(b.generation),
      locked: b.locked,
      ...(b.locked ? { locked_reason: b.locked_reason } : {}),
      last_renewed: iso(b.last_renewed_unix_ms),
      cert_expires: iso(b.cert_expires_unix_ms),
    }));
    if (o.json) {
      printJson(bots);
      return;
    }
    printTable(
      ["NAME", "ROLES", "TTL", "GENERATION", "LOCKED", "CERT EXPIRES"],
      bots.map((b) => [
        b.name,
        b.roles.join(","),
        b.cert_ttl,
        String(b.generation),
        b.locked ? "yes" : "no",
        b.cert_expires,
      ]),
    );
  });
}

export async function agentIdentitiesRm(name: string, o: GlobalOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    await c.call("DeleteAgentIdentity", { name });
    if (o.json) printJson({ deleted: name });
    else process.stdout.write(`Agent identity ${name} deleted.\n`);
  });
}

export async function auditSearch(
  o: GlobalOptions & {
    type?: string;
    user?: string;
    since?: string;
    until?: string;
    limit?: string;
    offset?: string;
  },
): Promise<void> {
  // No flag: no bound (the field stays unset; an explicit 0 would be the epoch).
  const time = (v: string | undefined, what: string): number | undefined => {
    if (!v) return undefined;
    // "1h" = that long ago; otherwise an RFC 3339 time.
    if (/^\d+(ms|s|m|h|d)$/.test(v)) return Date.now() - ttlSecondsOf(v) * 1000;
    const t = Date.parse(v);
    if (Number.isNaN(t))
      throw new CliError(
        `--${what} ${JSON.stringify(v)} is neither a duration (2h) nor a time (RFC 3339)`,
        EXIT.usage,
      );
    return t;
  };
  const int = (v: string | undefined, what: string): number => {
    if (v === undefined) return 0;
    if (!/^\d+$/.test(v)) throw new CliError(`--${what} must be a non-negative integer`, EXIT.usage);
    return Number(v);
  };
  await withAdmin(o, async (c) => {
    const r = await c.call("SearchAuditEvents", {
      type: o.type ?? "",
      user: o.user ?? "",
      start_unix_ms: time(o.since, "since"),
      end_unix_ms: time(o.until, "until"),
      limit: int(o.limit, "limit"),
      offset: int(o.offset, "offset"),
    });
    const items = (r.items ?? []).map((e) => ({
      id: e.id,
      time: iso(e.time_unix_ms),
      event_type: e.event_type,
      user_name: e.user_name,
      ...(e.success !== undefined && e.success !== null ? { success: e.success } : {}),
      fields: JSON.parse(e.fields_json || "{}") as unknown,
    }));
    if (o.json) {
      printJson({ items, total_count: Number(r.total_count) });
      return;
    }
    printTable(
      ["TIME", "EVENT", "USER", "OK", "FIELDS"],
      items.map((e) => [
        e.time,
        e.event_type,
        e.user_name,
        e.success === undefined ? "" : e.success ? "yes" : "no",
        JSON.stringify(e.fields),
      ]),
    );
    process.stdout.write(`${items.length} of ${Number(r.total_count)} events\n`);
  });
}
