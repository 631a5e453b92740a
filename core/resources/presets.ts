// Preset roles shipped with the platform. "admin" gets its power from its rules only; nothing in
// the code treats the name specially.
import type { Role } from "./kinds.ts";
import { API_VERSION } from "./meta.ts";

export function presets(): Role[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "admin", labels: { "svc.dev/preset": "true" } },
      spec: {
        allow: {
          logins: ["{{internal.logins}}", "root"],
          node_labels: { "*": "*" },
          rules: [{ resources: ["*"], verbs: ["*"] }],
        },
        options: { max_session_ttl: "12h" },
      },
    },
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "access", labels: { "svc.dev/preset": "true" } },
      spec: {
        allow: {
          logins: ["{{internal.logins}}"],
          node_labels: { "*": "*" },
          rules: [{ resources: ["nodes", "sessions"], verbs: ["list"] }],
        },
        options: { max_session_ttl: "12h" },
      },
    },
  ];
}
