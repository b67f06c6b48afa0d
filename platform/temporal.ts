import fs from 'node:fs';
import { Client, type TLSConfig } from '@temporalio/client';
import { connectTemporalConnection } from './temporal-connection';
import type { Config } from './config';
import type { WorkerQueue } from '../domain/task-queues';

export type TemporalTlsConfig = Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_TLS' | 'TEMPORAL_TLS_CERT_FILE' | 'TEMPORAL_TLS_KEY_FILE' | 'TEMPORAL_TLS_CA_FILE' | 'TEMPORAL_TLS_SERVER_NAME' | 'TEMPORAL_API_KEY'>;

/**
 * THE connection options to the Temporal frontend, for both the client's Connection (gateway, worker housekeeping)
 * and the worker's NativeConnection: the address, TLS (TEMPORAL_TLS; on by itself with an API key or a client
 * certificate), the mTLS pair and CA read from their files (loadConfig has checked they are readable), and the API key.
 */
export function temporalConnectionOptions(config: TemporalTlsConfig): { address: string; tls?: TLSConfig | boolean; apiKey?: string } {
  const explicit = config.TEMPORAL_TLS === undefined ? undefined : config.TEMPORAL_TLS === 'on' || config.TEMPORAL_TLS === 'true';
  const mtls = config.TEMPORAL_TLS_CERT_FILE !== undefined && config.TEMPORAL_TLS_KEY_FILE !== undefined;
  const on = explicit ?? (!!config.TEMPORAL_API_KEY || mtls || !!config.TEMPORAL_TLS_CA_FILE);
  const options: { address: string; tls?: TLSConfig | boolean; apiKey?: string } = { address: config.TEMPORAL_ADDRESS };
  if (on) {
    const tls: TLSConfig = {};
    if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
    if (config.TEMPORAL_TLS_CA_FILE) tls.serverRootCACertificate = fs.readFileSync(config.TEMPORAL_TLS_CA_FILE);
    if (mtls) tls.clientCertPair = { crt: fs.readFileSync(config.TEMPORAL_TLS_CERT_FILE!), key: fs.readFileSync(config.TEMPORAL_TLS_KEY_FILE!) };
    options.tls = Object.keys(tls).length > 0 ? tls : true;
  }
  if (config.TEMPORAL_API_KEY) options.apiKey = config.TEMPORAL_API_KEY;
  return options;
}

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_NAMESPACE'> & TemporalTlsConfig): Promise<Client> {
  const connection = await connectTemporalConnection(temporalConnectionOptions(config));
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

/** The worker bundle entry, resolved relative to this file so it works from any cwd. */
export const WORKFLOWS_PATH = new URL('../workflows/index.ts', import.meta.url).pathname;

/** The workflow entry of one worker queue (workflows/{queue}-queue.ts): a worker registers its own workflows only. */
export function workflowsPathOf(queue: WorkerQueue): string {
  return new URL(`../workflows/${queue}-queue.ts`, import.meta.url).pathname;
}

/**
 * The prebuilt bundle of one worker queue. WORKFLOW_BUNDLE names the bundles' stem
 * (`dist/workflow-bundle.js`); each queue's file has its queue before `.js`
 * (`dist/workflow-bundle.knowledge.js`). dev/scripts/bundle-workflows.ts writes all three.
 */
export function workflowBundleOf(bundle: string, queue: WorkerQueue): string {
  return bundle.endsWith('.js') ? `${bundle.slice(0, -3)}.${queue}.js` : `${bundle}.${queue}.js`;
}
