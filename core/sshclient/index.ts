export { type CertificateLoginOptions, connectWithCertificate, type SshClient } from "./connect.ts";
export { type ExecOptions, type ExecResult, exec, type ShellOptions, shell } from "./exec.ts";
export { type HostCertificateTrust, hostCertificateVerifier } from "./host-verifier.ts";
export { ssh2PrivateKey } from "./ssh2-key.ts";
export { HOST_CERT_ALGORITHMS } from "./ssh2-patch-types.ts";
