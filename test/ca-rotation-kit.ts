// What each CA type issues during a rotation, for test/ca-rotation.test.ts: issued through the
// real auth (user and host certificates) or by a second CertificateAuthorities over the same data
// folder (SVIDs, JWTs: what another auth replica signs with), and checked against the trust auth
// publishes (GetPublicKeys).
import type { Metadata } from "@grpc/grpc-js";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import type { CertificateAuthorities } from "../core/ca/authorities.ts";
import { verifySshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import {
  derToPem,
  generateEcdsaP256,
  issueSpiffeSvid,
  privateKeyToPem,
  verifySpiffeSvid,
  verifyX509Leaf,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { PublicKeys__Output } from "../proto/generated/svc/v1/PublicKeys.ts";
import { callUnary } from "../server/auth/client.ts";

const clock = systemClock;

export interface IssueContext {
  client(): AuthServiceClient;
  /** the admin's call metadata */
  admin(): Metadata;
  replica(): CertificateAuthorities;
  /** node identities registered along the way (their TLS client certificates) */
  agents: { id: string; certPem: string; keyPem: string }[];
}

/** One thing a CA type issues, and how it is checked against published trust. */
export interface Issued {
  verify(keys: PublicKeys__Output): Promise<boolean>;
  /** fingerprint-independent: the published key (or kid) that signed it */
  signer(keys: PublicKeys__Output): Promise<string>;
}

export const yes = async (fn: () => unknown): Promise<boolean> => {
  try {
    await fn();
    return true;
  } catch {
    return false;
  }
};

let nodeCount = 0;
/** Something `type` signs now: a user or host certificate through auth's RPCs, an SVID or JWT from `replica`. */
export async function issue(c: IssueContext, type: string): Promise<Issued> {
  const client = c.client();
  const admin = c.admin;
  const replica = c.replica();
  switch (type) {
    case "user_ssh": {
      const k = generateSshKeyPair("ed25519");
      const r = await callUnary(
        client,
        "IssueUserCerts",
        { ssh_public_key: k.publicLine, ttl_seconds: 600, node: "" },
        admin(),
      );
      const line = r.ssh_certificate;
      return {
        verify: async (keys) =>
          yes(() =>
            verifySshCertificate(line, { trustedCaKeys: keys.user_ca_ssh_public_keys, type: "user", clock }),
          ),
        signer: async (keys) => {
          for (const ca of keys.user_ca_ssh_public_keys)
            if (await yes(() => verifySshCertificate(line, { trustedCaKeys: [ca], type: "user", clock })))
              return ca;
          return "";
        },
      };
    }
    case "host_ssh":
    case "host_x509": {
      const token = await callUnary(
        client,
        "CreateJoinToken",
        { name: "", ttl_seconds: 600, node_labels: {} },
        admin(),
      );
      const host = generateSshKeyPair("ed25519");
      const tls = generateEcdsaP256();
      const r = await callUnary(client, "RegisterAgent", {
        token: token.token,
        hostname: `node-${++nodeCount}`,
        host_ssh_public_key: host.publicLine,
        tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
        labels: {},
        addresses: ["127.0.0.1:22"],
        agentless: false,
      });
      if (type === "host_ssh") {
        const line = r.host_ssh_certificate;
        const ok = (cas: string[]) =>
          yes(() => verifySshCertificate(line, { trustedCaKeys: cas, type: "host", clock }));
        return {
          verify: (keys) => ok(keys.host_ca_ssh_public_keys),
          signer: async (keys) => {
            for (const ca of keys.host_ca_ssh_public_keys) if (await ok([ca])) return ca;
            return "";
          },
        };
      }
      const pem = r.tls_certificate_pem;
      const ok = (cas: string[]) => yes(() => verifyX509Leaf(pem, cas, { clock, usage: "client" }));
      const agent = { id: r.agent_id, certPem: pem, keyPem: privateKeyToPem(tls.privateKey) };
      c.agents.push(agent);
      return {
        verify: (keys) => ok(keys.host_ca_pems),
        signer: async (keys) => {
          for (const ca of keys.host_ca_pems) if (await ok([ca])) return pemBody(ca);
          return "";
        },
      };
    }
    case "spiffe": {
      const k = generateEcdsaP256();
      const svid = await issueSpiffeSvid(replica.spiffeCa, {
        publicKey: k.publicKey,
        spiffeId: "spiffe://ca-rotation.test/workload/a",
        trustDomain: "ca-rotation.test",
        clock,
      });
      const cas = (keys: PublicKeys__Output) =>
        (JSON.parse(keys.spiffe_bundle_json).keys as { use: string; x5c?: string[] }[])
          .filter((e) => e.use === "x509-svid")
          .map((e) => derToPem(Buffer.from(e.x5c?.[0] ?? "", "base64")));
      const ok = (pems: string[]) =>
        yes(() => verifySpiffeSvid(svid, pems, { clock, trustDomain: "ca-rotation.test" }));
      return {
        verify: (keys) => ok(cas(keys)),
        signer: async (keys) => {
          for (const ca of cas(keys)) if (await ok([ca])) return pemBody(ca);
          return "";
        },
      };
    }
    case "jwt":
    case "app": {
      const token =
        type === "jwt"
          ? await replica.signJwtSvid({ spiffeId: "spiffe://ca-rotation.test/workload/a", audience: "db" })
          : await replica.signAppJwt({ username: "admin", roles: ["admin"], audience: "https://app" });
      const set = (keys: PublicKeys__Output) =>
        JSON.parse(type === "jwt" ? keys.spiffe_jwks_json : keys.app_jwt_jwks_json) as JSONWebKeySet;
      const kid = JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString()).kid as string;
      return {
        verify: (keys) => yes(() => jwtVerify(token, createLocalJWKSet(set(keys)))),
        signer: async () => kid,
      };
    }
    default:
      throw new Error(type);
  }
}

/** A certificate PEM without its line breaks (DER base64), to compare PEMs written differently. */
export const pemBody = (pem: string): string => pem.replace(/-----[^-]+-----|\s/g, "");

/** The key a CA type publishes as signing now (first in every published list). */
export async function signingKeyOf(c: IssueContext, type: string, keys: PublicKeys__Output): Promise<string> {
  const client = c.client();
  const admin = c.admin;
  const s = (await callUnary(client, "ListCertAuthorities", {}, admin())).authorities.find(
    (a) => a.type === type,
  );
  const active = s?.keys.find((k) => k.role === "active");
  if (type === "jwt" || type === "app") return JSON.parse(active?.public_key ?? "{}").kid;
  if (type === "spiffe" || type === "host_x509") return pemBody(active?.public_key ?? "");
  const lines = type === "user_ssh" ? keys.user_ca_ssh_public_keys : keys.host_ca_ssh_public_keys;
  return lines.find((l) => l.split(" ")[1] === active?.public_key.split(" ")[1]) ?? "";
}
