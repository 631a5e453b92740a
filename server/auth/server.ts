// Starts the auth gRPC listener: TLS 1.3 only, the auth interceptor, svc.v1.AuthService, the
// standard health service and server reflection (so grpcurl works without .proto files).
import { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { HealthImplementation, protoPath as healthProtoPath } from "grpc-health-check";
import { badInputInterceptor, guardDecoding } from "./bad-input.ts";
import {
  AUTH_SERVICE_NAME,
  authPackageDefinition,
  loaderOptions,
  MAX_REQUEST_BYTES,
  MAX_RESPONSE_BYTES,
} from "./proto.ts";
import { addReflection } from "./reflection.ts";
import { AuthService, type AuthServiceDeps } from "./service.ts";
import { type AuthServerTlsOptions, authServerCredentials } from "./tls.ts";

export interface AuthServerOptions extends AuthServiceDeps {
  tls: AuthServerTlsOptions;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** Listen port; default 3025, 0 for any free port. */
  port?: number;
}

export interface RunningAuthServer {
  /** The bound port (useful with port 0). */
  port: number;
  /** "host:port" for clients. */
  address: string;
  service: AuthService;
  health: HealthImplementation;
  server: Server;
  /** Replaces the TLS server certificate for new connections (certificate renewal). */
  setTls(tls: AuthServerTlsOptions): void;
  /** Graceful shutdown (forced after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

export async function startAuthServer(opts: AuthServerOptions): Promise<RunningAuthServer> {
  const service = new AuthService(opts);
  const server = new Server({
    // Authentication first: a caller without a valid credential learns nothing about its bytes.
    interceptors: [service.interceptor(), badInputInterceptor],
    // Nobody reads channelz here; its per-call and per-message bookkeeping is pure overhead.
    "grpc.enable_channelz": 0,
    // Explicit limits (docs/grpc.md "Message size"): bigger requests are RESOURCE_EXHAUSTED.
    "grpc.max_receive_message_length": MAX_REQUEST_BYTES,
    "grpc.max_send_message_length": MAX_RESPONSE_BYTES,
  });
  // Every service registers through this, so an undecodable request is INVALID_ARGUMENT everywhere.
  const guarded: Pick<Server, "addService"> = {
    addService: (definition, impl) => server.addService(guardDecoding(definition), impl),
  };
  service.addToServer(guarded);
  const health = new HealthImplementation({ "": "SERVING", [AUTH_SERVICE_NAME]: "SERVING" });
  // grpc-health-check types its argument as a whole Server but only calls addService.
  health.addToServer(guarded as Server);
  // Reflection describes everything served, so grpcurl can call health too.
  const healthDefinition = loadSync(healthProtoPath, loaderOptions);
  addReflection(guarded, [authPackageDefinition, healthDefinition]);

  const host = opts.host ?? "127.0.0.1";
  const bindHost = host.includes(":") ? `[${host}]` : host;
  const credentials = authServerCredentials(opts.tls);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${bindHost}:${opts.port ?? 3025}`, credentials, (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  opts.logger.info({ address: `${bindHost}:${port}` }, "auth gRPC listening (TLS 1.3)");

  return {
    port,
    address: `${bindHost}:${port}`,
    service,
    health,
    server,
    setTls: (tls) => credentials.update(tls),
    close: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        // The drain (docs/auth.md "High availability"): health says NOT_SERVING, listeners close,
        // every HTTP/2 session gets GOAWAY (clients send new calls to another replica or
        // reconnect; a call the server refused is retried by grpc-js), calls in flight finish.
        service.close();
        health.setStatus("", "NOT_SERVING");
        // tryShutdown's callback waits for every socket, including ones that never became an
        // HTTP/2 session (a client that left mid-handshake), which forceShutdown does not end; so
        // after the grace period the close is over whether or not that callback ever comes.
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
