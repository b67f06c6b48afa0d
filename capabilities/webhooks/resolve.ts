import { lookup as systemLookup, Resolver } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { addressAllowed, checkCallbackUrl, hostOf, type DeploymentMode } from './callback-url';

/** A callback the delivery refuses to reach (SSRF): not retried. */
export class CallbackRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CallbackRefused';
  }
}

export interface ResolvedTarget {
  url: URL;
  /** The one address the connection is pinned to (checked; no second lookup happens). */
  address: string;
  family: 4 | 6;
}

async function addressesOf(host: string, servers: readonly string[]): Promise<string[]> {
  if (servers.length === 0) return (await systemLookup(host, { all: true, verbatim: true })).map((a) => a.address);
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  resolver.setServers([...servers]);
  const settle = (p: Promise<string[]>) => p.catch((err: { code?: string }) => {
    if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') return [] as string[];
    throw err;
  });
  const [v4, v6] = await Promise.all([settle(resolver.resolve4(host)), settle(resolver.resolve6(host))]);
  return [...v4, ...v6];
}

/**
 * The delivery-time SSRF check: the URL passes the submission policy again,
 * then its host is resolved and EVERY address must be allowed (one private
 * answer among public ones refuses the callback: a resolver may hand either
 * to the connection). The connection is then pinned to a checked address,
 * so a DNS answer that changes between this check and the connect (DNS
 * rebinding) cannot redirect it.
 */
export async function resolveCallback(raw: string, mode: DeploymentMode, dnsServers: readonly string[] = []): Promise<ResolvedTarget> {
  const verdict = checkCallbackUrl(raw, mode);
  if (!verdict.ok) throw new CallbackRefused(`callback_url ${verdict.reason}`);
  const url = verdict.url;
  const host = hostOf(url);
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await addressesOf(host, dnsServers);
    } catch (err) {
      // A name that does not resolve now may later: a transport failure, retried.
      throw new Error(`callback host ${host} did not resolve: ${(err as Error).message}`);
    }
    if (addresses.length === 0) throw new Error(`callback host ${host} has no address`);
  }
  for (const a of addresses) {
    const ok = addressAllowed(a, mode);
    if (!ok.ok) throw new CallbackRefused(`callback host ${host} ${ok.reason}`);
  }
  const address = addresses[0];
  return { url, address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 };
}
