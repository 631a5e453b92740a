// Public surface of the auth component for the daemon entry point, the proxy, agents and CLIs.
export { AUTHZ_TABLE, describeAccess, type RpcAccess } from "./authz.ts";
export { type Caller, type CallerKind, callerOf } from "./caller.ts";
export {
  type AuthClientOptions,
  type AuthServiceClient,
  agentMetadata,
  callUnary,
  createAuthClient,
  fromGrpcError,
  type RequestOf,
  type ResponseOf,
  type UnaryRpc,
  userMetadata,
} from "./client.ts";
export { toGrpcError } from "./errors.ts";
export { keyMaterialFrom } from "./keys.ts";
export { DEFAULT_LOCKOUT, type LockoutPolicy } from "./login.ts";
export { ARGON2_PARAMS, deletePassword, hashPassword, setPassword, verifyPassword } from "./passwords.ts";
export { AUTH_RPC_NAMES, AUTH_SERVICE_NAME, authPackageDefinition, authServiceDefinition } from "./proto.ts";
export { type AuthServerOptions, type RunningAuthServer, startAuthServer } from "./server.ts";
export { type AuthKeyMaterial, AuthService, type AuthServiceDeps } from "./service.ts";
export { SESSION_TTL_MS } from "./sessions.ts";
export {
  type AuthClientTlsOptions,
  type AuthServerTlsOptions,
  authClientCredentials,
  authServerCredentials,
} from "./tls.ts";
