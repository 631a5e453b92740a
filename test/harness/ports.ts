// Free loopback ports for daemons that take an address rather than port 0 (the port is released
// before the daemon binds it; the window is tiny and only loopback is used).
//
// Ports come from below the kernel's ephemeral range: a port from port 0 lies inside it, and once
// released (a daemon restarted on the same address in a test) any outgoing connection of any
// process on the machine may take it as its local port, so the restart fails with EADDRINUSE. It
// happened in CI. Below the range only listeners that name the port take it.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const LOWEST = 10_000;

/** First port of the ephemeral range (Linux; 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const HIGHEST = ephemeralLow() - 1;
/** Handed out by this process: never twice, whatever became of them. */
const given = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

function fromKernel(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let i = 0; i < 64; i++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (given.has(port)) continue;
    if (await bindable(port)) {
      given.add(port);
      return port;
    }
  }
  // Crowded below the range: the kernel's choice (inside it) still works for most uses.
  return fromKernel();
}
