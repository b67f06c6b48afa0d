import type { Config } from '../platform/config';
import type { Db } from './store';
import type { RedisClient } from '../platform/redis';
import type { Logger } from '../platform/logger';
import type { UpstreamPools } from '../platform/upstream';
import type { Client } from '@temporalio/client';
import type { MediaHttp } from '../providers/media/http';

/**
 * What every capability is built over: the process's configuration, stores,
 * logger and outbound clients. Each capability names its own services in its
 * folder (accounts/deps.ts, catalogue/deps.ts, knowledge/deps.ts, usage/deps.ts,
 * agents/index.ts); a composition root (capabilities/bootstrap.ts, or a test)
 * builds them all into one ServiceDeps.
 */
export interface PlatformDeps {
  config: Config;
  db: Db;
  redis: RedisClient;
  log: Logger;
  /** Keep-alive pools to upstream channels. */
  upstream: UpstreamPools;
  /** JSON calls to media vendors over the same pools. */
  mediaHttp: MediaHttp;
  /** Temporal client (lazy connection): media submissions start workflows. */
  temporal: Client;
}
