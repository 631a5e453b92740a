// What the terminal and the recording playback ask auth, beyond the web API's AuthApi: a
// short-lived user certificate for an ephemeral key (IssueUserCerts with the user's session) and a
// recording's content (GetRecording). Auth makes every access decision; the proxy only forwards
// the caller's session.
import type { ClientReadableStream } from "@grpc/grpc-js";
import { UnavailableError } from "../../core/errors.ts";
import type { GetRecordingResponse__Output } from "../../proto/generated/svc/v1/GetRecordingResponse.ts";
import {
  type AuthConnection,
  type AuthServiceClient,
  type AuthSource,
  callUnary,
  connectionOf,
  fromGrpcError,
  userMetadata,
  waitForReady,
} from "../auth/client.ts";
import { type NodeInfo, type RecordingInfo, tunnelLocationOf } from "./auth-client.ts";

export interface UserCertificate {
  /** OpenSSH certificate line for the public key that was sent */
  certificate: string;
  /** logins the certificate is valid for */
  principals: string[];
  /** host CA public keys (OpenSSH lines) to verify nodes with */
  hostCaKeys: string[];
  validBefore: Date;
}

export interface RecordingDownload {
  info: RecordingInfo;
  /** the recording's bytes, in order; throws a typed error if the stream fails midway */
  body: AsyncIterable<Buffer>;
}

export interface TerminalAuthApi {
  /**
   * The node, if the caller may log in there as `login` (auth's per-node decision). Unknown or
   * hidden node: NotFoundError; login not granted on that node: AccessDeniedError.
   */
  authorizeNodeLogin(sessionId: string, hostname: string, login: string): Promise<NodeInfo>;
  issueUserCertificate(
    sessionId: string,
    publicKeyLine: string,
    ttlSeconds: number,
    /** scope to this node (id or hostname): the certificate names only its logins there */
    node?: string,
  ): Promise<UserCertificate>;
  /** Resolves once auth sent the recording's metadata (so "not found" is known before any byte). */
  getRecording(sessionId: string, id: string): Promise<RecordingDownload>;
  close(): void;
}

export interface GrpcTerminalAuthOptions {
  address: string;
  caPems: readonly string[];
  certPem: string;
  keyPem: string;
  serverName?: string;
  timeoutMs?: number;
}

export class GrpcTerminalAuthApi implements TerminalAuthApi {
  readonly #connection: AuthConnection;
  readonly #client: AuthServiceClient;
  readonly #owned: boolean;
  readonly #timeoutMs: number;

  /** Takes the process's shared connection to auth (or options for a private one). */
  constructor(source: AuthSource | GrpcTerminalAuthOptions) {
    const c = connectionOf(source);
    this.#connection = c.connection;
    this.#client = c.connection.client;
    this.#owned = c.owned;
    this.#timeoutMs = c.timeoutMs;
  }

  async authorizeNodeLogin(sessionId: string, hostname: string, login: string): Promise<NodeInfo> {
    const n = await callUnary(
      this.#client,
      "AuthorizeNodeLogin",
      { hostname, login },
      // Wait-for-ready; a decision changes nothing, so the channel also retries it on UNAVAILABLE.
      waitForReady(userMetadata(sessionId)),
      { deadline: Date.now() + this.#timeoutMs },
    );
    const last = Number(n.last_heartbeat_unix_ms ?? 0);
    return {
      id: n.id ?? "",
      hostname: n.hostname ?? "",
      addresses: n.addresses ?? [],
      labels: n.labels ?? {},
      status: n.status ?? "",
      ...(last > 0 ? { lastHeartbeat: new Date(last) } : {}),
      version: n.version ?? "",
      ...tunnelLocationOf(n.tunnel),
    };
  }

  async issueUserCertificate(
    sessionId: string,
    publicKeyLine: string,
    ttlSeconds: number,
    node = "",
  ): Promise<UserCertificate> {
    const res = await callUnary(
      this.#client,
      "IssueUserCerts",
      { ssh_public_key: publicKeyLine, ttl_seconds: ttlSeconds, node },
      // Wait-for-ready; retried once on UNAVAILABLE before any answer (RETRIED_ONCE, client.ts).
      waitForReady(userMetadata(sessionId)),
      { deadline: Date.now() + this.#timeoutMs },
    );
    if (!res.ssh_certificate) throw new UnavailableError("auth issued no certificate");
    return {
      certificate: res.ssh_certificate,
      principals: res.principals ?? [],
      hostCaKeys: res.host_ca_ssh_public_keys ?? [],
      validBefore: new Date(Number(res.valid_before_unix_ms ?? 0)),
    };
  }

  async getRecording(sessionId: string, id: string): Promise<RecordingDownload> {
    // No deadline on the stream itself (a long recording may take a while); the first message has one.
    const call: ClientReadableStream<GetRecordingResponse__Output> = this.#client.GetRecording(
      { id },
      waitForReady(userMetadata(sessionId)),
    );
    const messages = call[Symbol.asyncIterator]() as AsyncIterator<GetRecordingResponse__Output>;
    const first = await withTimeout(messages.next(), this.#timeoutMs, () => call.cancel()).catch(
      (err: unknown) => {
        throw mapStreamError(err);
      },
    );
    const meta = first.done ? undefined : first.value.metadata;
    if (!meta) {
      call.cancel();
      throw new UnavailableError("auth sent a recording without metadata");
    }
    const info: RecordingInfo = {
      id: meta.id,
      user: meta.user_name,
      protocol: meta.protocol,
      node: meta.node,
      login: meta.login,
      start: new Date(Number(meta.start_unix_ms)),
      ...(Number(meta.end_unix_ms) > 0 ? { end: new Date(Number(meta.end_unix_ms)) } : {}),
      sizeBytes: Number(meta.size_bytes),
      format: meta.format,
    };
    async function* body(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          const next = await messages.next();
          if (next.done) return;
          if (next.value.chunk) yield next.value.chunk;
        }
      } catch (err) {
        throw mapStreamError(err);
      } finally {
        call.cancel();
      }
    }
    return { info, body: body() };
  }

  close(): void {
    if (this.#owned) this.#connection.close();
  }
}

function mapStreamError(err: unknown): Error {
  const e = err as { code?: unknown; details?: unknown };
  if (typeof e?.code === "number" && typeof e.details === "string") {
    return fromGrpcError(err as Parameters<typeof fromGrpcError>[0]);
  }
  return err instanceof Error ? err : new UnavailableError("recording stream failed");
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout();
      reject(new UnavailableError("auth did not answer in time"));
    }, ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
