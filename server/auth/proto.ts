// Loads the svc.v1 contract at runtime with the same options the committed types were generated
// with (scripts/gen-proto.ts), so runtime objects and the generated TypeScript types agree.
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "../../proto/generated/auth.ts";
import type { AuthServiceDefinition } from "../../proto/generated/svc/v1/AuthService.ts";

export const AUTH_SERVICE_NAME = "svc.v1.AuthService";

/**
 * Largest request message (bytes, encoded) auth accepts; a bigger one is RESOURCE_EXHAUSTED before
 * it is decoded. The largest real requests are a few KiB (recordings travel as 64 KiB chunks).
 */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Largest response message (bytes, encoded) auth sends and its clients accept (full lists). */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Channel options of every auth client: the message limits above, seen from the caller. */
export const CLIENT_MESSAGE_LIMITS = {
  "grpc.max_send_message_length": MAX_REQUEST_BYTES,
  "grpc.max_receive_message_length": MAX_RESPONSE_BYTES,
} as const;
const protoRoot = join(import.meta.dirname, "..", "..", "proto");

export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [protoRoot],
};

/** The package definition (also what server reflection serves). */
export const authPackageDefinition: protoLoader.PackageDefinition = protoLoader.loadSync(
  "svc/v1/auth.proto",
  loaderOptions,
);

const loaded = grpc.loadPackageDefinition(authPackageDefinition) as unknown as ProtoGrpcType;

/** Service definition for `server.addService` and the client constructor. */
export const authServiceDefinition: AuthServiceDefinition = loaded.svc.v1.AuthService.service;
/** Client constructor: `new AuthServiceClient(address, credentials, options)`. */
export const AuthServiceClientConstructor = loaded.svc.v1.AuthService;

/** Every RPC name of the service, in proto order. */
export const AUTH_RPC_NAMES: readonly string[] = Object.keys(authServiceDefinition);

/** The RPC name of a full method path ("/svc.v1.AuthService/GetSession" -> "GetSession"). */
export function rpcNameOf(path: string): string | undefined {
  const prefix = `/${AUTH_SERVICE_NAME}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
}
