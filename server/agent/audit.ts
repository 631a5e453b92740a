// Turns the SSH server's audit callbacks into EmitAuditEvent requests. Auth records who emitted
// them (this agent) from the client certificate; the agent attests the user behind a login.
import type { EmitAuditEventRequest } from "../../proto/generated/svc/v1/EmitAuditEventRequest.ts";
import type { AgentSshAuditEvent } from "./ssh-server.ts";

/**
 * Who a certificate key id names, as audit events and recordings credit it: "user=<name>
 * session=…" (IssueUserCerts) and "user:<name>:session:…" (core/certs/key-ids.ts) give the user
 * name; "bot:<name>:gen:…" gives "bot:<name>", never the bare name, so a bot and a user of the
 * same name stay apart (user names cannot contain ":"); anything else is the key id itself
 * ("workload:<spiffe id>").
 */
export function userOfKeyId(keyId: string): string {
  const user = /^user=(\S+)(?:\s|$)/.exec(keyId) ?? /^user:([^:]+):/.exec(keyId);
  if (user?.[1]) return user[1].slice(0, 253);
  const bot = /^bot:([^:]+):/.exec(keyId);
  if (bot?.[1]) return `bot:${bot[1]}`.slice(0, 253);
  return keyId.slice(0, 253);
}

export function auditRequestOf(
  e: AgentSshAuditEvent,
  node: { id: string; hostname: string },
  extra: { recordingId?: string } = {},
): EmitAuditEventRequest {
  const base = { node_id: node.id, node: node.hostname };
  switch (e.type) {
    case "ssh.auth.refused":
      return {
        event_type: "ssh.auth.refused",
        user_name: e.keyId ? userOfKeyId(e.keyId) : "",
        success: false,
        fields_json: JSON.stringify({
          ...base,
          login: e.login.slice(0, 253),
          remote_address: e.remoteAddress,
          method: e.method,
          reason: e.reason.slice(0, 512),
          ...(e.keyId ? { key_id: e.keyId } : {}),
        }),
      };
    case "ssh.auth":
      return {
        event_type: "ssh.auth",
        user_name: userOfKeyId(e.keyId),
        success: true,
        fields_json: JSON.stringify({
          ...base,
          login: e.login,
          remote_address: e.remoteAddress,
          key_id: e.keyId,
          serial: e.serial,
        }),
      };
    case "session.start":
      return {
        event_type: "session.start",
        user_name: userOfKeyId(e.keyId),
        fields_json: JSON.stringify({
          ...base,
          session_id: e.sessionId,
          login: e.login,
          key_id: e.keyId,
          remote_address: e.remoteAddress,
          tty: e.tty,
          ...(e.command !== undefined ? { command: e.command.slice(0, 4096) } : {}),
          protocol: "ssh",
        }),
      };
    case "session.end":
      return {
        event_type: "session.end",
        user_name: userOfKeyId(e.keyId),
        success: e.exit.code === 0,
        fields_json: JSON.stringify({
          ...base,
          session_id: e.sessionId,
          login: e.login,
          key_id: e.keyId,
          exit_code: e.exit.code,
          ...(e.exit.signal !== undefined ? { exit_signal: e.exit.signal } : {}),
          ...(extra.recordingId !== undefined ? { recording_id: extra.recordingId } : {}),
          protocol: "ssh",
        }),
      };
  }
}
