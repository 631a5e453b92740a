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
    testTimeout: 60_000,
    hookTimeout: 240_000,
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default"],
  },
});
