// The floor of IssueUserCerts (issue 17): a second gRPC server in the bench process that does only
// what no certificate service can skip. Same transport and options as auth's (TLS 1.3, grpc-js,
// channelz off), the same interceptors (the caller's session checked, bad input refused), the same
// CA signer and the same committed `cert.create` event, the same answer. What it leaves out is
// auth's policy: roles, MFA, logins from roles and nodes, the certificate journal. Auth's
// IssueUserCerts above this floor is the policy's cost; the floor above the empty RPC is the part
// of the goal's budget that trimming auth cannot give back. SVC_BENCH_CERT_FLOOR_AUDIT=0 leaves the
// audit event out too, to tell the event's share from the transport's.
import { Server, type ServerUnaryCall, type sendUnaryData, status } from "@grpc/grpc-js";
import type { Backend } from "../core/backend/backend.ts";
import { sealValueExtensions } from "../core/certs/ssh-cert.ts";
import { parseSshPublicKey } from "../core/certs/ssh-keys.ts";
import type { IssueUserCertsRequest__Output } from "../proto/generated/svc/v1/IssueUserCertsRequest.ts";
import type { IssueUserCertsResponse } from "../proto/generated/svc/v1/IssueUserCertsResponse.ts";
import { badInputInterceptor, guardDecoding } from "../server/auth/bad-input.ts";
import { callerLabel, callerOf } from "../server/auth/caller.ts";
import { authServiceDefinition, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES } from "../server/auth/proto.ts";
import type { AuthKeyMaterial, AuthService } from "../server/auth/service.ts";
import { type AuthServerTlsOptions, authServerCredentials } from "../server/auth/tls.ts";
import { identityExtension, userCertCreatedEvent } from "../server/auth/user-cert-content.ts";

export interface CertFloorServer {
  address: string;
  close(): Promise<void>;
}

/**
 * Starts the floor server. `principals` and `roles` are what auth would grant the bench's user,
 * so the certificate and the answer have the same size as auth's.
 */
export async function startCertFloorServer(opts: {
  service: AuthService;
  keys: AuthKeyMaterial;
  backend: Backend;
  tls: AuthServerTlsOptions;
  principals: string[];
  roles: string[];
  traits: Record<string, string[]>;
}): Promise<CertFloorServer> {
  const withAudit = process.env.SVC_BENCH_CERT_FLOOR_AUDIT !== "0";
  const server = new Server({
    interceptors: [opts.service.interceptor(), badInputInterceptor],
    "grpc.enable_channelz": 0,
    "grpc.max_receive_message_length": MAX_REQUEST_BYTES,
    "grpc.max_send_message_length": MAX_RESPONSE_BYTES,
  });
  const extensions = Object.freeze([
    "permit-pty",
    "permit-port-forwarding",
    "permit-agent-forwarding",
    "permit-user-rc",
  ] as const);
  const issue = async (call: ServerUnaryCall<IssueUserCertsRequest__Output, IssueUserCertsResponse>) => {
    const caller = callerOf(call.metadata);
    if (caller.kind !== "user")
      throw Object.assign(new Error("a user session is needed"), { code: status.UNAUTHENTICATED });
    const key = parseSshPublicKey(call.request.ssh_public_key);
    const now = Date.now();
    const keyId = `user=${caller.username} session=${caller.sessionHash.slice(0, 16)}`;
    const validAfter = new Date(now - 60_000);
    const validBefore = new Date(
      Math.min(now + call.request.ttl_seconds * 1000, caller.sessionExpires.getTime()),
    );
    const cert = opts.keys.userCertSigner.sign({
      type: "user",
      publicKey: key,
      keyId,
      principals: opts.principals,
      validAfter,
      validBefore,
      extensions,
      valueExtensions: identityOf(caller.username),
    });
    if (withAudit)
      await opts.backend.appendAudit(
        userCertCreatedEvent({
          emittedBy: callerLabel(caller),
          username: caller.username,
          keyId,
          serial: cert.serial,
          principals: opts.principals,
          validBefore,
          publicKeyBlob: key.blob,
        }),
      );
    const pub = await opts.keys.publicKeys();
    return {
      ssh_certificate: cert.line,
      principals: opts.principals,
      key_id: keyId,
      valid_after_unix_ms: validAfter.getTime(),
      valid_before_unix_ms: validBefore.getTime(),
      host_ca_ssh_public_keys: pub.host_ca_ssh_public_keys ?? [],
    };
  };
  // Sealed once per user, as auth keeps it per access checker (user-cert-content.ts).
  const identities = new Map<string, Readonly<Record<string, string>>>();
  const identityOf = (name: string): Readonly<Record<string, string>> => {
    let ext = identities.get(name);
    if (!ext) {
      ext = sealValueExtensions(
        identityExtension({ kind: "user", name, roles: opts.roles, traits: opts.traits }),
      );
      identities.set(name, ext);
    }
    return ext;
  };
  server.addService(guardDecoding(authServiceDefinition), {
    IssueUserCerts: (
      call: ServerUnaryCall<IssueUserCertsRequest__Output, IssueUserCertsResponse>,
      callback: sendUnaryData<IssueUserCertsResponse>,
    ) => {
      issue(call).then(
        (res) => callback(null, res),
        (err: Error & { code?: number }) =>
          callback({ code: err.code ?? status.INTERNAL, details: err.message }),
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", authServerCredentials(opts.tls), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
