// Which STS endpoints auth may forward a node's signed request to. This list is the SSRF guard:
// auth connects only to a host:port written here, never to whatever the node's Host header says.
import { BadParameterError } from "../errors.ts";

/** Commercial AWS regions (partition "aws"). */
export const STANDARD_AWS_REGIONS: readonly string[] = [
  "af-south-1",
  "ap-east-1",
  "ap-east-2",
  "ap-northeast-1",
  "ap-northeast-2",
  "ap-northeast-3",
  "ap-south-1",
  "ap-south-2",
  "ap-southeast-1",
  "ap-southeast-2",
  "ap-southeast-3",
  "ap-southeast-4",
  "ap-southeast-5",
  "ap-southeast-6",
  "ap-southeast-7",
  "ca-central-1",
  "ca-west-1",
  "eu-central-1",
  "eu-central-2",
  "eu-north-1",
  "eu-south-1",
  "eu-south-2",
  "eu-west-1",
  "eu-west-2",
  "eu-west-3",
  "il-central-1",
  "me-central-1",
  "me-south-1",
  "mx-central-1",
  "sa-east-1",
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
];

/** AWS China regions (partition "aws-cn", domain amazonaws.com.cn). */
export const CHINA_AWS_REGIONS: readonly string[] = ["cn-north-1", "cn-northwest-1"];

/** AWS GovCloud regions; their regional STS endpoints are FIPS endpoints already. */
export const GOVCLOUD_AWS_REGIONS: readonly string[] = ["us-gov-east-1", "us-gov-west-1"];

/**
 * The default allowlist: the global endpoint, every regional and FIPS endpoint of the commercial
 * regions, GovCloud's regional endpoints, and China's. FIPS names are listed for every commercial
 * region although AWS serves them in fewer: a name under amazonaws.com that AWS does not serve
 * does not resolve, and listing them all spares users a config change when AWS adds one.
 */
export function defaultStsEndpoints(): string[] {
  return [
    "sts.amazonaws.com",
    ...STANDARD_AWS_REGIONS.flatMap((r) => [`sts.${r}.amazonaws.com`, `sts-fips.${r}.amazonaws.com`]),
    ...GOVCLOUD_AWS_REGIONS.map((r) => `sts.${r}.amazonaws.com`),
    ...CHINA_AWS_REGIONS.map((r) => `sts.${r}.amazonaws.com.cn`),
  ];
}

// A DNS name, an IPv4 literal or a bracketed IPv6 literal, then an optional port. No scheme,
// userinfo, path or whitespace can pass, so a listed entry is exactly what auth dials.
const HOST_PORT =
  /^(\[[0-9a-f:.]{2,45}\]|[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)(:(\d{1,5}))?$/;

/** Lower-cased `host[:port]` with the default port 443 removed, or undefined when it is not one. */
export function normalizeHostPort(value: string): string | undefined {
  if (value.length > 260) return undefined;
  const lower = value.toLowerCase();
  const m = HOST_PORT.exec(lower);
  if (!m) return undefined;
  const port = m[6];
  if (port === undefined) return lower;
  const n = Number(port);
  if (n < 1 || n > 65535 || String(n) !== port) return undefined;
  return n === 443 ? (m[1] as string) : `${m[1]}:${n}`;
}

/** Splits a normalized `host[:port]` into what a socket needs. */
export function splitHostPort(hostPort: string): { hostname: string; port: number } {
  const m = /^(\[([^\]]+)\]|[^:]+)(?::(\d+))?$/.exec(hostPort);
  if (!m) throw new BadParameterError("not a host:port");
  return { hostname: m[2] ?? (m[1] as string), port: m[3] === undefined ? 443 : Number(m[3]) };
}

export class StsEndpointAllowlist {
  readonly #hosts: ReadonlySet<string>;

  /** `entries` are `host` or `host:port` (port 443 when absent); BadParameterError for anything else. */
  constructor(entries: readonly string[]) {
    const hosts = new Set<string>();
    for (const e of entries) {
      const n = normalizeHostPort(e.trim());
      if (n === undefined)
        throw new BadParameterError(`STS endpoint ${JSON.stringify(e.slice(0, 100))} is not host[:port]`);
      hosts.add(n);
    }
    if (hosts.size === 0) throw new BadParameterError("the STS endpoint allowlist is empty");
    this.#hosts = hosts;
  }

  static defaults(): StsEndpointAllowlist {
    return new StsEndpointAllowlist(defaultStsEndpoints());
  }

  /** The normalized entry for `hostHeader` when it is listed, else undefined. */
  match(hostHeader: string): string | undefined {
    const n = normalizeHostPort(hostHeader);
    return n !== undefined && this.#hosts.has(n) ? n : undefined;
  }

  entries(): string[] {
    return [...this.#hosts];
  }
}
