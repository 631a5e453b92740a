// Preset roles shipped with the platform. "admin" gets its power from its rules only; nothing in
// the code treats the name specially. Both reach every node and every app (labels "*": "*"), as
// the presets always did for nodes; narrower access is a custom Role.
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
          app_labels: { "*": "*" },
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
          app_labels: { "*": "*" },
          rules: [{ resources: ["nodes", "sessions"], verbs: ["list"] }],
        },
        options: { max_session_ttl: "12h" },
      },
    },
  ];
}
