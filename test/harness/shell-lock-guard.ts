// Keeps root logins in tests fast on machines whose root shell runs `pyenv init`: every bash that
// sshd (or an agent) starts for root reads ~/.bashrc, and pyenv's rehash there holds a lock file
// in $PYENV_ROOT/shims while it runs (well under a second). A test that ends a session kills that
// shell; killed mid-rehash, it leaves the lock behind, and every later root login waits 60 s for
// it, so SSH tests time out far from the cause. The guard removes a lock older than any rehash
// takes. It does nothing where pyenv is not set up (PYENV_ROOT unset).
import { stat, unlink } from "node:fs/promises";
import { join } from "node:path";

const STALE_MS = 15_000;
const EVERY_MS = 5_000;

export function startShellLockGuard(log: (line: string) => void): () => void {
  const root = process.env.PYENV_ROOT;
  if (!root) return () => {};
  const lock = join(root, "shims", ".pyenv-shim");
  const timer = setInterval(() => {
    void stat(lock)
      .then(async (s) => {
        if (Date.now() - s.mtimeMs < STALE_MS) return;
        await unlink(lock);
        log(`removed a stale pyenv rehash lock (${Math.round((Date.now() - s.mtimeMs) / 1000)} s old)`);
      })
      .catch(() => undefined);
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
