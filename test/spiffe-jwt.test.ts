// JWT-SVIDs from a bot (IssueWorkloadSVID), verified with jose against what the real proxy serves
// over HTTPS: the JWKS (/workload-identity/jwt-jwks.json), the SPIFFE bundle
// (/v1/webapi/spiffe/bundle.json) and the OIDC discovery document. kid set, aud required, short
// exp; the App CA's key set does not verify them.
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { agentMetadata, callUnary } from "../server/auth/client.ts";
import { addBot, CLUSTER, type MachineEnv, startMachineEnv } from "./bot-fixture.ts";
import { PUBLIC_HOST, PUBLIC_ORIGIN, startProxySide } from "./proxy-fixture.ts";
import type { HttpsClient } from "./proxy-https-client.ts";

let env: MachineEnv;
let proxy: Awaited<ReturnType<typeof startProxySide>> | undefined;
let https: HttpsClient;
let jwt: string;
const AUDIENCE = "https://app.example.test";

async function getJson(path: string): Promise<unknown> {
  const r = await https.send({ path });
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.json;
}

beforeAll(async () => {
  env = await startMachineEnv({ jwtIssuer: PUBLIC_ORIGIN });
  const clientKey = generateEcdsaP256();
  const serverKey = generateEcdsaP256();
  proxy = await startProxySide({
    authAddress: env.address,
    hostCaPem: env.cas.hostCa.certPem,
    proxyClient: {
      certPem: await issueTlsClientCert(env.cas.hostCa, {
        publicKey: clientKey.publicKey,
        commonName: "proxy",
        uri: serviceIdentityUri("proxy", "p1"),
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(clientKey.privateKey),
    },
    proxyServer: {
      certPem: await issueTlsServerCert(env.cas.hostCa, {
        publicKey: serverKey.publicKey,
        commonName: PUBLIC_HOST,
        dnsNames: [PUBLIC_HOST],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(serverKey.privateKey),
    },
    resources: env.source,
  });
  https = proxy.client;

  const token = await addBot(env, { name: "jwt-minter", roles: ["bot-ssh"], allowWorkloadSvids: true });
  const tls = generateEcdsaP256();
  const creds = await callUnary(env.client, "BootstrapAgentIdentity", {
    token,
    ssh_public_key: generateSshKeyPair("ed25519").publicLine,
    tls_public_key_pem: tls.publicKey.export({ format: "pem", type: "spki" }).toString(),
  });
  const bot = env.clientWith({ certPem: creds.tls_certificate_pem, keyPem: privateKeyToPem(tls.privateKey) });
  const r = await callUnary(
    bot,
    "IssueWorkloadSVID",
    { spiffe_path: "/role/ci/api", tls_public_key_pem: "", jwt_audiences: [AUDIENCE], ttl_seconds: 0 },
    agentMetadata("jwt-minter"),
  );
  jwt = r.jwt_svid;
});

afterAll(async () => {
  await proxy?.close();
  await env?.close();
});

describe("JWT-SVID", () => {
  it("verifies against the proxy's JWKS: kid set, aud required, short exp, issuer from discovery", async () => {
    const header = decodeProtectedHeader(jwt);
    expect(header.alg).toBe("ES256");
    expect(header.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const discovery = (await getJson("/.well-known/openid-configuration")) as {
      issuer: string;
      jwks_uri: string;
    };
    expect(discovery.issuer).toBe(PUBLIC_ORIGIN);
    const jwks = (await getJson(new URL(discovery.jwks_uri).pathname)) as JSONWebKeySet;
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), {
      audience: AUDIENCE,
      issuer: discovery.issuer,
      algorithms: ["ES256"],
    });
    expect(payload.sub).toBe(`spiffe://${CLUSTER}/role/ci/api`);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBeLessThanOrEqual(300);
    await expect(
      jwtVerify(jwt, createLocalJWKSet(jwks), { audience: "https://other.example", algorithms: ["ES256"] }),
    ).rejects.toThrow(/aud/);
  });

  it("verifies against the jwt-svid keys of the SPIFFE bundle, not against the App CA's JWKS", async () => {
    const bundle = (await getJson("/v1/webapi/spiffe/bundle.json")) as { keys: Array<{ use?: string }> };
    // A SPIFFE bundle marks its JWT keys `use: "jwt-svid"`; a JOSE library wants signature keys,
    // so a verifier takes those entries and drops the SPIFFE-specific `use`.
    const jwtKeys = {
      keys: bundle.keys.filter((k) => k.use === "jwt-svid").map(({ use: _use, ...k }) => k),
    } as JSONWebKeySet;
    expect(jwtKeys.keys.length).toBeGreaterThan(0);
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwtKeys), { audience: AUDIENCE });
    expect(payload.sub).toBe(`spiffe://${CLUSTER}/role/ci/api`);
    const app = (await getJson("/workload-identity/app-jwt-jwks.json")) as JSONWebKeySet;
    await expect(jwtVerify(jwt, createLocalJWKSet(app), { audience: AUDIENCE })).rejects.toThrow();
  });
});
