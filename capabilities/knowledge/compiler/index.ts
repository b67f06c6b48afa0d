/** Document in, pages out: the compilers behind one interface (types.ts). */
export type { Compiler, CompileInput, CompileResult, CompiledPage, ExtractedDocument, LinkRequests } from './types';
export { RulesCompiler, compileRules, RULES_MODEL, MAX_PAGE_WEIGHT } from './rules';
export { LlmCompiler, PageFields, pageFieldsPrompt, RECORD_PAGE_TOOL, type AskModel } from './llm';
export { LinkIndex, resolveLinks, resolvedIds, linkRequestsOf, missingTargetId, type LinkTarget, type LinkSource } from './links';
