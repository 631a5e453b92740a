// CPU time of other processes, from /proc (Linux; NaN elsewhere). Benches read it around a
// measured window to report the server's CPU per operation, whole process (all its threads).
import { readdirSync, readFileSync } from "node:fs";

/** utime + stime of one process, in ms (fields 14 and 15 of stat, 100 ticks per second). */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return Number.NaN;
  }
}

/**
 * A process and its children, in ms: its own time, its live children's, and what its children
 * that ended left in its cutime/cstime (a database server's connections come and go).
 */
export function processTreeCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  let total = 0;
  try {
    const own = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = fieldsOf(own);
    total = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return Number.NaN;
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 is the parent's pid.
      if (Number(fieldsOf(stat)[1]) === pid) total += statCpuMs(stat);
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}

function fieldsOf(stat: string): string[] {
  // The command name may hold spaces and parentheses: the fields start after the last ")".
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function statCpuMs(stat: string): number {
  const fields = fieldsOf(stat);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
