// Go-style duration strings ("8h", "1h30m", "90s", "2d") used by resource fields such as
// max_session_ttl and cert_ttl. Only whole numbers with the units s, m, h, d: one grammar that
// the schema pattern, this parser and the documentation all agree on.
import { BadParameterError } from "./errors.ts";

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The pattern every duration field of the resources carries (also used by the CRD). */
export const DURATION_PATTERN = "^([0-9]+[smhd])+$";

const WHOLE = new RegExp(DURATION_PATTERN);
const PART = /([0-9]+)([smhd])/g;

/** Parses "1h30m" into milliseconds; BadParameterError for anything else. */
export function parseDuration(text: string): number {
  if (typeof text !== "string" || text.length === 0 || text.length > 64 || !WHOLE.test(text)) {
    throw new BadParameterError(
      `invalid duration ${JSON.stringify(String(text).slice(0, 64))}: use e.g. "30m", "8h", "1h30m", "2d"`,
    );
  }
  let total = 0;
  for (const match of text.matchAll(PART)) {
    const amount = Number(match[1]);
    const unit = UNIT_MS[match[2] ?? ""];
    if (unit === undefined) throw new BadParameterError(`invalid duration unit in ${JSON.stringify(text)}`);
    total += amount * unit;
  }
  if (!Number.isSafeInteger(total))
    throw new BadParameterError(`duration ${JSON.stringify(text)} is too large`);
  return total;
}

/** True when the text parses as a duration. */
export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Formats milliseconds as "1h30m5s" (hours are not folded into days, as in Go). Sub-second
 * remainders are dropped, so the result always parses back; 0 and anything below 1 s give "0s".
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new BadParameterError(`cannot format duration ${ms}`);
  let seconds = Math.floor(ms / 1000);
  if (seconds === 0) return "0s";
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return (hours ? `${hours}h` : "") + (minutes ? `${minutes}m` : "") + (seconds ? `${seconds}s` : "");
}
