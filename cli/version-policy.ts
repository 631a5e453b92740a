// The client-tools version policy from GET /v1/webapi/ping: a binary below `minimum` is refused,
// below `recommended` is told to upgrade. Plain semver precedence (pre-releases sort first).
import { BadParameterError } from "../core/errors.ts";

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

interface Parsed {
  core: [number, number, number];
  pre: string[];
}

function parse(v: string): Parsed {
  const m = SEMVER.exec(v.trim());
  if (!m) throw new BadParameterError(`${JSON.stringify(v)} is not a semantic version`);
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split(".") : [] };
}

function comparePre(a: string[], b: string[]): number {
  // A release ranks above its pre-releases.
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Number(x) < Number(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** -1, 0 or 1 by semver precedence; BadParameterError for a malformed version. */
export function compareVersions(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.core[i] ?? 0) - (y.core[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return comparePre(x.pre, y.pre);
}

export type VersionVerdict =
  | { kind: "ok" }
  | { kind: "upgrade_recommended"; recommended: string }
  | { kind: "unsupported"; minimum: string };

export function versionVerdict(
  client: string,
  policy: { minimum?: string | undefined; recommended?: string | undefined },
): VersionVerdict {
  if (policy.minimum && compareVersions(client, policy.minimum) < 0) {
    return { kind: "unsupported", minimum: policy.minimum };
  }
  if (policy.recommended && compareVersions(client, policy.recommended) < 0) {
    return { kind: "upgrade_recommended", recommended: policy.recommended };
  }
  return { kind: "ok" };
}
