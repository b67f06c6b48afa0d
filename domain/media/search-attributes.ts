import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Workflows are started with these (media tasks, knowledge builds): a namespace that lacks one refuses the start.
 * Workers register the missing ones at start (platform/temporal-search-attributes.ts); operators search tasks by them in the UI.
 */
export const TASK_ID = defineSearchAttributeKey('TaskId', SearchAttributeType.KEYWORD);
export const ACCOUNT_ID = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const MODEL = defineSearchAttributeKey('Model', SearchAttributeType.KEYWORD);

/** Every search attribute the project's workflows are started with. */
export const SEARCH_ATTRIBUTE_KEYS = [TASK_ID, ACCOUNT_ID, MODEL] as const;
