import { publicBaseUrl, type Config } from '../platform/config';
import { connectStore } from './store';
import { connectRedis } from '../platform/redis';
import { createLogger, type Logger } from '../platform/logger';
import { Wallet } from './accounts/wallet';
import { KeyService } from './accounts/keys';
import { AccountService } from './accounts/accounts';
import { UsageRecorder } from './usage/usage';
import { AuthLookup } from './accounts/auth-lookup';
import { UpstreamPools } from '../platform/upstream';
import { createMediaHttp } from '../providers/media/http';
import { Client } from '@temporalio/client';
import { lazyTemporalConnection } from '../platform/temporal-connection';
import { temporalConnectionOptions } from '../platform/temporal';
import { CatalogueCache } from './catalogue/catalogue-cache';
import { ChannelHealth } from './catalogue/channel-health';
import { ChannelService } from './catalogue/channels';
import { ChannelTester } from './catalogue/channel-test';
import type { PlatformDeps } from './deps';
import type { UsageDeps } from './usage/deps';
import type { AccountsDeps } from './accounts/deps';
import type { CatalogueDeps } from './catalogue/deps';
import type { KnowledgeDeps } from './knowledge/deps';
import { PeopleService } from './accounts/people';
import { PageStore } from './knowledge/page-store';
import { KnowledgeScope } from './knowledge/scope';
import { CorpusCache } from './knowledge/corpus';
import { Retrieval } from './knowledge/retrieval';
import { createAgentServices, type AgentsDeps } from './agents';
import { KnowledgeReader } from './knowledge/reader';
import { DifyRetrieval } from './knowledge/dify';
import { MongoFileStore } from './knowledge/storage/mongo-file-store';
import { SourceLinks, sourceLinkSecret } from './knowledge/storage/source-links';
import { KbBases } from './knowledge/bases';
import { KbIngestion } from './knowledge/ingestion';
import { temporalClientInterceptors } from '../platform/tracing/temporal-client';
import { keyRing } from '../platform/secrets';

/**
 * The process's services, built once (buildDeps below, or a test): what a
 * request handler or a worker may use. Each part is declared by the capability
 * it belongs to; code that needs one capability takes that part alone.
 */
export type ServiceDeps = PlatformDeps & AccountsDeps & UsageDeps & CatalogueDeps & KnowledgeDeps & AgentsDeps;

/** Connect to Mongo and Redis and build the services, once per process. */
export async function buildDeps(config: Config, log: Logger = createLogger(config.LOG_LEVEL)): Promise<ServiceDeps & { close(): Promise<void> }> {
  const [db, redis] = [await connectStore(config.MONGO_URL, log), connectRedis(config.REDIS_URL, config.REDIS_PREFIX, config.REDIS_CLUSTER_NODES, log)];
  const wallet = new Wallet(db, redis, log);
  wallet.journal.start();
  const catalogueCache = await CatalogueCache.start({
    db, redis, prefix: config.REDIS_PREFIX, log, pollMs: config.CATALOGUE_POLL_MS,
    env: {
      vars: config.CHANNEL_URL_VARS, upstreamKeys: config.UPSTREAM_KEYS, encryptionKey: keyRing(config),
      onBadSecret: (channel, err) => log.error('channel secret does not unseal (KEY_ENCRYPTION_KEY changed?)', { channel, err }),
      onBadUrl: (channel, baseUrl) => log.error('channel left out: its base_url names a variable this process lacks', { channel, base_url: baseUrl }),
    },
  });
  const channelHealth = new ChannelHealth(redis, { failureThreshold: config.CHANNEL_BREAKER_FAILURES, coolDownMs: config.CHANNEL_BREAKER_COOLDOWN_MS }, log);
  catalogueCache.onChannels((channels) => channelHealth.retain(channels));
  const usage = new UsageRecorder(db, log, undefined, () => wallet.journal.flush());
  const keys = new KeyService(db, redis, { encryptionKey: config.KEY_ENCRYPTION_KEY, previousKeys: config.KEY_ENCRYPTION_KEYS_PREVIOUS, serviceTag: config.KEY_SERVICE_TAG });
  const accounts = new AccountService(db, redis, wallet);
  const upstream = new UpstreamPools({ connections: config.UPSTREAM_CONNECTIONS, timeoutMs: config.CHAT_UPSTREAM_TIMEOUT_MS });
  const temporalConnection = lazyTemporalConnection(temporalConnectionOptions(config));
  const pages = new PageStore(db, redis);
  const corpora = new CorpusCache(pages, { budgetBytes: config.KB_SEARCH_CACHE_MB * 2 ** 20 });
  const retrieval = new Retrieval(corpora);
  const kbScope = new KnowledgeScope(db, redis);
  const sourceLinks = new SourceLinks(sourceLinkSecret(config), publicBaseUrl(config));
  const knowledge = new KnowledgeReader(kbScope, pages, corpora, retrieval, sourceLinks);
  const temporal = new Client({ connection: temporalConnection, namespace: config.TEMPORAL_NAMESPACE, interceptors: await temporalClientInterceptors() });
  const people = new PeopleService(db, accounts, () => kbScope.changed());
  const kbFiles = new MongoFileStore(db.KbFile);
  const current = catalogueCache.current;
  const kbBases = new KbBases({ db, accounts, pages, kbScope, catalogue: current, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE });
  const mediaHttp = createMediaHttp(upstream);
  return {
    config,
    db,
    redis,
    log,
    wallet,
    keys,
    accounts,
    people,
    pages,
    kbScope,
    corpora,
    retrieval,
    knowledge,
    dify: new DifyRetrieval(knowledge, retrieval),
    kbFiles,
    kbBases,
    kbIngestion: new KbIngestion({ config, db, redis, log, pages, kbFiles, temporal, bases: kbBases }),
    sourceLinks,
    usage,
    authLookup: new AuthLookup(redis, keys, accounts, wallet),
    upstream,
    mediaHttp,
    temporal,
    catalogue: current,
    channelHealth,
    channels: new ChannelService({ db, config, cache: catalogueCache, health: channelHealth, log }),
    channelTester: new ChannelTester({ config, upstream, mediaHttp, health: channelHealth, catalogue: current, env: catalogueCache.env }),
    agents: createAgentServices({ db, redis, accounts, keys, people, wallet, usage, scope: kbScope, catalogue: current, scopeCacheMs: config.AGENT_SCOPE_CACHE_MS,
      // A call's deadline, plus the settlement's write-ahead retries (gateway/chat/settle.ts) and a margin.
      flightLeaseMs: config.CHAT_UPSTREAM_TIMEOUT_MS + 60_000, defaultModel: config.AGENT_DEFAULT_MODEL, log }),
    async close() {
      await catalogueCache.close();
      channelHealth.close();
      await wallet.journal.stop();
      await usage.flush();
      await upstream.close();
      await temporalConnection.close().catch(() => undefined);
      redis.disconnect();
      await db.conn.close();
    },
  };
}
