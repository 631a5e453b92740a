// One pino logger per process, passed down. Redaction is a second line of defence: code must not
// log secrets in the first place, but a mistaken object dump loses them here.
import { type Logger, pino } from "pino";

export const REDACT_PATHS = [
  "password",
  "*.password",
  "secret",
  "*.secret",
  "token",
  "*.token",
  "session_id",
  "*.session_id",
  "authorization",
  "*.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "privateKey",
  "*.privateKey",
];

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? "svcd",
    level: opts.level ?? process.env.SVC_LOG_LEVEL ?? "info",
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
  });
}

export type { Logger };
