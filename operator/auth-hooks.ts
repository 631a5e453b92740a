// What the operator needs from auth, as injected interfaces: auth alone holds the runtime state
// (web sessions, token redemptions), so the operator asks it instead of reading a store itself.
// An auth gRPC client implements these; until one is wired, the operator runs without them (see
// docs/operator.md for what is then skipped).

export interface SessionRevoker {
  /** Revokes every web session and certificate-bearing session of `user`; idempotent. */
  revokeUserSessions(user: string): Promise<void>;
}

export interface TokenRedemption {
  /** Who redeemed it (node host id or bot name). */
  usedBy: string;
  /** RFC 3339. */
  usedAt: string;
}

export interface TokenUsage {
  /** The redemption of JoinToken `name`, or undefined when it has not been used. */
  redemption(name: string): Promise<TokenRedemption | undefined>;
}
