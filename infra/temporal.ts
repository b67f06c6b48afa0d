import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

/** The worker bundle entry, resolved relative to this file so it works from any cwd. */
export const WORKFLOWS_PATH = new URL('../workflows/index.ts', import.meta.url).pathname;
