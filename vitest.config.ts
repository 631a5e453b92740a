import { defineConfig } from "vitest/config";

// Integration tests start real peers (PostgreSQL, sshd, kube-apiserver, Chromium); they get
// generous per-test budgets and run in forked processes so a crash is isolated.
export default defineConfig({
  test: {
    include: [
      "core/**/*.test.ts",
      "server/**/*.test.ts",
      "operator/**/*.test.ts",
      "cli/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    pool: "forks",
    // Two files at a time: Vitest's default (cores - 1) runs one on a 2-core machine, and most
    // files wait on child processes (sshd, apiservers, Chromium), so a second worker halves the
    // wall time. Machine-wide peers (the one-node cluster, podman) are each used by one file only,
    // and every other peer listens on a free port, so two files never collide.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default"],
  },
});
