// The SPIFFE ID path convention of svc workloads: spiffe://<trust domain>/role/<role>/<workload>[/...].
// The second segment names the Role a workload acts as (AuthenticateSPIFFE maps it); the Role
// must also allow the whole path in allow.workload_spiffe_ids, so naming a role in a path is
// never enough by itself.
import { BadParameterError } from "../errors.ts";

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const ROLE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const MAX_WORKLOAD_PATH = 1024;

export interface WorkloadPath {
  role: string;
  /** the segments after the role, joined by "/" */
  workload: string;
}

/** "/role/<role>/<workload...>" -> parts; BadParameterError when the path does not follow the convention. */
export function parseWorkloadPath(path: string): WorkloadPath {
  if (typeof path !== "string" || path.length > MAX_WORKLOAD_PATH || !path.startsWith("/"))
    throw new BadParameterError("a workload path must start with /role/<role>/");
  const segs = path.slice(1).split("/");
  if (segs.some((s) => !SEGMENT.test(s) || s === "." || s === ".."))
    throw new BadParameterError("a workload path has empty or invalid segments");
  const [kind, role, ...rest] = segs;
  if (kind !== "role" || role === undefined || !ROLE.test(role) || role.length > 253 || rest.length === 0)
    throw new BadParameterError("a workload path must look like /role/<role>/<workload>[/...]");
  return { role, workload: rest.join("/") };
}

/** The path for a workload acting as `role`. */
export function workloadPath(role: string, workload: string): string {
  const path = `/role/${role}/${workload}`;
  parseWorkloadPath(path);
  return path;
}
