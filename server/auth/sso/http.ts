// How auth reaches identity providers: HTTPS only, with the system's trust anchors plus the
// optional extra ones of `auth.sso.ca_file` (a provider behind a private CA), and a timeout.
// undici is used because Node's built-in fetch takes no per-request CA: its Agent does (and it
// is the same client Node's fetch is built on, so responses behave alike).
import { rootCertificates } from "node:tls";
import { Agent, fetch as undiciFetch } from "undici";
import { UnavailableError } from "../../../core/errors.ts";

export const PROVIDER_TIMEOUT_MS = 10_000;

export type ProviderFetch = (url: string, init?: RequestInit) => Promise<Response>;

const agents = new Map<string, Agent>();

/** A fetch for provider calls: extra CA PEM trusted besides the system's; https URLs only. */
export function providerFetch(caPem: string | undefined): ProviderFetch {
  const key = caPem ?? "";
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({
      connect: caPem ? { ca: [...rootCertificates, caPem] } : {},
      headersTimeout: PROVIDER_TIMEOUT_MS,
      bodyTimeout: PROVIDER_TIMEOUT_MS,
    });
    agents.set(key, agent);
  }
  const dispatcher = agent;
  return async (url, init) => {
    if (!url.startsWith("https://"))
      throw new UnavailableError("identity providers are reached over https only");
    const signal = init?.signal ?? AbortSignal.timeout(PROVIDER_TIMEOUT_MS);
    // undici's own RequestInit and Response are structurally the ones of Node's fetch.
    const res = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      signal,
      dispatcher,
      redirect: "manual",
    });
    return res as unknown as Response;
  };
}
