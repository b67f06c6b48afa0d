import type { PageStore } from './page-store';
import type { KnowledgeScope } from './scope';
import type { FileStore } from './storage/file-store';
import type { SourceLinks } from './storage/source-links';
import type { KbBases } from './bases';
import type { KbIngestion } from './ingestion';
import type { Retrieval } from './retrieval';
import type { CorpusCache } from './corpus';
import type { KnowledgeReader } from './reader';
import type { DifyRetrieval } from './dify';

/** The knowledge base's services, as the gateway (REST, MCP, Dify, the console) and the agents call them. */
export interface KnowledgeDeps {
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
}
