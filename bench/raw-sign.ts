// The baseline both certificate benches divide by: raw Ed25519 signatures in this thread.
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** Signatures per second of wall time, and µs of this thread's CPU per signature. */
export function rawSign(durationMs: number): { rate: number; cpuUs: number } {
  const { privateKey } = generateKeyPairSync("ed25519");
  const tbs = randomBytes(320); // about the size of a user certificate's signed part
  for (let i = 0; i < 1000; i++) sign(null, tbs, privateKey);
  // CPU time as well as wall time: on a loaded machine this thread is also preempted.
  const cpu = process.threadCpuUsage();
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < durationMs) {
    for (let i = 0; i < 200; i++) sign(null, tbs, privateKey);
    n += 200;
  }
  const used = process.threadCpuUsage(cpu);
  return { rate: n / ((performance.now() - start) / 1000), cpuUs: (used.user + used.system) / n };
}
