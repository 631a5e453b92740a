// svcctl's connection to auth: gRPC over TLS 1.3 trusting the cluster's host CA, with the admin's
// own session from `svc login` as `authorization: Bearer`. Auth decides every access from the
// caller's roles (core/rbac); svcctl has no privileges of its own.
import { readFile } from "node:fs/promises";
import { NotAuthenticatedError } from "../core/errors.ts";
import {
  type AuthServiceClient,
  callUnary,
  createAuthClient,
  type RequestOf,
  type ResponseOf,
  type UnaryRpc,
  userMetadata,
} from "../server/auth/client.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { loadProfile, type Profile } from "./profile.ts";

export const DEFAULT_AUTH_ADDRESS = "127.0.0.1:3025";

export interface AdminConnectionOptions {
  auth?: string;
  ca?: string;
}

export interface AdminConnection {
  profile: Profile & { session_id: string };
  authAddress: string;
  caPem: string;
  call<K extends UnaryRpc>(rpc: K, request: RequestOf<K>): Promise<ResponseOf<K>>;
  close(): void;
}

/** --auth, then $SVC_AUTH_ADDR, then the profile's (svc login --auth), then 127.0.0.1:3025. */
export function authAddressOf(
  opts: AdminConnectionOptions,
  profile: Profile | undefined,
  env = process.env,
): string {
  return opts.auth ?? (env.SVC_AUTH_ADDR || undefined) ?? profile?.auth ?? DEFAULT_AUTH_ADDRESS;
}

export async function adminConnection(opts: AdminConnectionOptions): Promise<AdminConnection> {
  const profile = await loadProfile();
  if (!profile?.session_id)
    throw new NotAuthenticatedError("not logged in (run: svc login as an admin first)");
  if (profile.expires_at && Date.parse(profile.expires_at) <= Date.now()) {
    throw new NotAuthenticatedError(`the session of ${profile.user ?? "?"} expired (run: svc login)`);
  }
  const caPem = opts.ca
    ? await readFile(opts.ca, "utf8").catch((err: Error) => {
        throw new CliError(`cannot read --ca ${opts.ca}: ${err.message}`, EXIT.usage);
      })
    : profile.ca_pem;
  if (!caPem) {
    throw new CliError(
      "no host CA to verify auth with: pass --ca <host-ca.pem> (the profile has none)",
      EXIT.usage,
    );
  }
  const authAddress = authAddressOf(opts, profile);
  const client: AuthServiceClient = createAuthClient({ address: authAddress, caPems: [caPem] });
  const md = userMetadata(profile.session_id);
  return {
    profile: profile as Profile & { session_id: string },
    authAddress,
    caPem,
    call: (rpc, request) => callUnary(client, rpc, request, md),
    close: () => client.close(),
  };
}

/** Runs `fn` with a connection and always closes it. */
export async function withAdmin<T>(
  opts: AdminConnectionOptions,
  fn: (c: AdminConnection) => Promise<T>,
): Promise<T> {
  const c = await adminConnection(opts);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}
