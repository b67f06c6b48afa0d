import type { Config } from '../platform/config';
import type { Db } from './store';
import type { RedisClient } from '../platform/redis';
import type { Logger } from '../platform/logger';
import type { Catalogue } from '../domain/catalogue';
import type { Wallet } from './accounts/wallet';
import type { KeyService } from './accounts/keys';
import type { AccountService } from './accounts/accounts';
import type { UsageRecorder } from './usage/usage';
import type { AuthLookup } from './accounts/auth-lookup';
import type { UpstreamPools } from '../platform/upstream';
import type { Client } from '@temporalio/client';
import type { MediaHttp } from '../providers/media/http';
import type { PeopleService } from './accounts/people';
import type { PageStore } from './knowledge/page-store';
import type { KnowledgeScope } from './knowledge/scope';
import type { FileStore } from './knowledge/storage/file-store';
import type { SourceLinks } from './knowledge/storage/source-links';
import type { KbBases } from './knowledge/bases';
import type { KbIngestion } from './knowledge/ingestion';
import type { Retrieval } from './knowledge/retrieval';
import type { CorpusCache } from './knowledge/corpus';
import type { KnowledgeReader } from './knowledge/reader';
import type { DifyRetrieval } from './knowledge/dify';
import type { AgentServices } from './agents';
import type { ChannelService } from './catalogue/channels';
import type { ChannelHealth } from './catalogue/channel-health';
import type { ChannelTester } from './catalogue/channel-test';

/** The process's services, built once (capabilities/bootstrap.ts buildDeps, or a test): what a request handler or a worker may use. */
export interface ServiceDeps {
  config: Config;
  db: Db;
  redis: RedisClient;
  log: Logger;
  wallet: Wallet;
  keys: KeyService;
  accounts: AccountService;
  /** Users and enterprise membership. */
  people: PeopleService;
  /** Knowledge-base pages as readers see them, and who may read which base. */
  pages: PageStore;
  kbScope: KnowledgeScope;
  /** Each readable base's pages and index, cached per base version (every reader surface goes through it). */
  corpora: CorpusCache;
  /** Lexical search over one or several bases: REST, MCP, Dify and agents all call this. */
  retrieval: Retrieval;
  /** Every read rule of the knowledge base (REST, MCP, Dify render it). */
  knowledge: KnowledgeReader;
  /** Dify's External Knowledge API over the same retrieval. */
  dify: DifyRetrieval;
  /** Uploaded knowledge-base files (embedded: chunks in Mongo). */
  kbFiles: FileStore;
  /** Signs and checks the 1-hour source links (`sourceLinks.sourceInfo(page.source, origin)`). */
  sourceLinks: SourceLinks;
  /** Team bases and the personal base's settings; uploads, builds and document deletion. */
  kbBases: KbBases;
  kbIngestion: KbIngestion;
  /** Enterprise agents, agent keys and their audit (capabilities/agents/). */
  agents: AgentServices;
  usage: UsageRecorder;
  authLookup: AuthLookup;
  /** Keep-alive pools to upstream channels. */
  upstream: UpstreamPools;
  /** JSON calls to media vendors over the same pools. */
  mediaHttp: MediaHttp;
  /** Temporal client (lazy connection): media submissions start workflows. */
  temporal: Client;
  /** The current registry; replaced in place when it is reloaded (every process, on every channel change). */
  catalogue: () => Catalogue;
  /** Channels as managed objects (`/admin/v1/channels`). */
  channels: ChannelService;
  /** This process's circuit breaker per channel; the chat and media ladders consult it. */
  channelHealth: ChannelHealth;
  /** "Test this channel": one small real request. */
  channelTester: ChannelTester;
}
